"""The Spark jobs on a standalone cluster: a master and two workers started from the installed PySpark
(separate JVMs, executors forking their own Python workers), the project shipped as ``--py-files``, and
the store source, the live source, the sink and the copy job giving what they give on ``local[n]``.

Three JVMs and an application's driver and executors are minutes on a shared 2-core machine, so every
case here is ``slow``: ``tox -e spark-cluster`` runs them (one application doing a scan of two brokers'
stores and a copy job, then the verify job and a larger scan). The jobs themselves run in the default run
on ``local[n]`` (``test_spark_copy_job``, ``test_spark_verify``, ``test_spark_several_stores``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spark.audit import audit
from rocketmq_spec.spark.cluster import ARCHIVE_NAME, StandaloneCluster, project_archive
from rocketmq_spec.spark.copy_job import transform_body
from rocketmq_spec.spark.fixtures import spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.scan import codec_scan_summary
from rocketmq_spec.spark.traffic import drain, fill_store, prepare_topic, produce
from rocketmq_spec.spark.verify import verify_store
from tests.spark_stores import two_broker_stores

pytestmark = pytest.mark.spark


def _job() -> Path:
    """The job's file, which spark-submit is given, found without importing it."""
    spec = find_spec("rocketmq_spec.spark.cluster_job")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


JOB = _job()
QUEUES = 4
MESSAGES = 40
SPLIT = 16 << 10
LARGER_STORE = 24 << 20
LARGER_FILES = 4 << 20


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with StandaloneCluster(tmp_path_factory.mktemp("spark-cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project_archive(tmp_path_factory.mktemp("archive"))


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return two_broker_stores(tmp_path_factory.mktemp("stores"), tmp_path_factory.mktemp("golden"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEmbeddedRocketMQ]:
    with SyncEmbeddedRocketMQ(tmp_path_factory.mktemp("cluster-broker") / "store") as running:
        yield running


def submit(cluster: StandaloneCluster, archive: Path, spec: dict[str, Any], log: Path) -> dict[str, Any]:
    done = cluster.submit(JOB, json.dumps(spec), py_files=[archive], log=log)
    assert done.returncode == 0, log.read_text()[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


def body(n: int) -> bytes:
    return f"cluster message {n}".encode()


@pytest.mark.slow
def test_jobs_on_a_standalone_cluster_give_what_they_give_locally(
        cluster: StandaloneCluster, archive: Path, stores: tuple[Path, Path],
        broker: SyncEmbeddedRocketMQ, tmp_path: Path) -> None:
    for topic in ("ClusterSource", "ClusterTarget"):
        prepare_topic(broker.namesrv_addr, broker.broker_addr, topic, QUEUES)
    sent = produce(broker.namesrv_addr, "ClusterSource", MESSAGES, body)
    copy = dict(namesrv=broker.namesrv_addr, source="ClusterSource", target="ClusterTarget", group="cluster",
                checkpoint=str(tmp_path / "checkpoint"), max_per_trigger=MESSAGES // 2)
    found = submit(cluster, archive, {
        "origins": {"tasks": 2 * cluster.total_cores},
        "scan": {"roots": [str(root) for root in stores], "split_bytes": SPLIT},
        "copy": copy}, tmp_path / "driver.log")

    assert len(found["origins"]["daemons"]) == cluster.workers, "tasks ran on every executor"
    shipped = found["origins"]["files"]
    assert shipped and all(ARCHIVE_NAME in path and path.startswith(str(cluster.root)) for path in shipped), \
        "executors import the project from the shipped archive, in their work directories"

    assert found["scan"] == {name: dataclasses.asdict(codec_scan_summary(root))
                             for name, root in zip(("broker-a", "broker-b"), stores, strict=True)}

    drained = drain(broker.namesrv_addr, "ClusterTarget", "auditor")
    report = audit(sent, [arrived for arrived, _ in drained])
    assert report.ok and (report.arrived, report.duplicates) == (MESSAGES, 0), report.summary()
    originals = {s.key: int(s.key.rsplit("-", 1)[1]) for s in sent}
    assert all(record.body == transform_body(body(originals[arrived.key])) for arrived, record in drained)


@pytest.mark.slow
def test_the_verify_job_and_a_larger_scan_on_the_cluster(cluster: StandaloneCluster, archive: Path,
                                                         stores: tuple[Path, Path], tmp_path: Path,
                                                         spark: SparkSession) -> None:  # noqa: F811
    """The long form: the verify job's verdicts on the cluster equal those of a local run, and a store
    of many files and splits scans as the codec scans it."""
    larger = tmp_path / "larger" / "store"
    fill_store(larger, LARGER_STORE, commitlog_file_size=LARGER_FILES)
    found = submit(cluster, archive, {"verify": {"root": str(stores[0])},
                                      "scan": {"roots": [str(larger), str(stores[1])], "split_bytes": SPLIT}},
                   tmp_path / "driver.log")
    local = [dataclasses.asdict(case) for case in verify_store(spark, stores[0])]
    assert found["verify"]["cases"] == local and local
    assert found["scan"]["larger"] == dataclasses.asdict(codec_scan_summary(larger))
