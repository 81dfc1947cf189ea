"""Every store the project holds from Apache RocketMQ passes the offline checks: a real Apache store is
conformant by definition, so a FAIL on one is a wrong verdict of the suite, never of the store.

The stores: the golden store of 4.9.8 (clean stop), the running and killed 4.9.8 stores of
``tests/data/live-stores``, and the stores of 4.9.7 and 5.5.0 in ``tests/data/apache-stores`` whose index
rolled over into later files (clean stop) or whose broker was killed. ``rmq-conformance store`` and
``rmq-spark verify`` must give none of them a FAIL (Spark, the slower of the two, checks the rolled-over
stores here; its verdicts on the 4.9.8 stores are compared with the suite's in ``test_live_stores`` and
``test_spark_verify``).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.codec.store.indexfile import IndexFile, index_keys, record_tag_key
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.verify import FAIL, verify_store
from rocketmq_spec.spec.golden import STORE_TARBALL
from rocketmq_spec.spec.hashing import index_key_hash
from rocketmq_spec.spec.indexfile import FIRST_INDEX
from rocketmq_spec.spec.store_layout import INDEX_DIR
from rocketmq_spec.spec.system_topics import TRANS_HALF_TOPIC
from tests import process_tree
from tests.capture_apache_stores import TAGGED_TOPIC
from tests.golden import PROJECT_ROOT

DATA = Path(__file__).resolve().parent / "data"
LIVE_INDEX_SIZES = (512, 4096)
STORES: dict[str, tuple[Path, tuple[int, int] | None]] = {
    "4.9.8-golden": (STORE_TARBALL, None),
    "4.9.8-running": (DATA / "live-stores" / "java-running.tar.gz", LIVE_INDEX_SIZES),
    "4.9.8-killed": (DATA / "live-stores" / "java-killed.tar.gz", LIVE_INDEX_SIZES),
    **{f"{version}-{kind}": (DATA / "apache-stores" / f"apache-{version}-{kind}.tar.gz", None)
       for version in ("4.9.7", "5.5.0") for kind in ("index-rollover", "killed")},
    "5.5.0-tagged": (DATA / "apache-stores" / "apache-5.5.0-tagged.tar.gz", None),
}
CONFORMANCE_TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("apache-stores")
    stores = {}
    for name, (tarball, _) in STORES.items():
        (root / name).mkdir()
        stores[name] = extract_store(tarball, root / name)
    return stores


def index_option(name: str) -> list[str]:
    sizes = STORES[name][1]
    return ["--index-sizes", ",".join(map(str, sizes))] if sizes else []


CHECKED_ELSEWHERE = {"4.9.8-running", "4.9.8-killed", "4.9.8-golden"}
"""The stores another test runs ``rmq-conformance store`` on already: ``test_live_stores`` (java-running and
java-killed), judging each verdict against what ``rmq-store inspect`` reports, which includes no FAIL, and
``test_conformance_runs`` (the golden store: exit status 0, no FAIL or CRASH)."""


@pytest.mark.parametrize("name", sorted(set(STORES) - CHECKED_ELSEWHERE))
def test_rmq_conformance_store_fails_no_apache_store(extracted: dict[str, Path], name: str,
                                                     tmp_path: Path) -> None:
    report = tmp_path / "report"
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             "store", str(extracted[name]),
                             *index_option(name), "-n", "0", "--report", str(report)], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=CONFORMANCE_TIMEOUT_S)
    assert (report / "index.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    cases = json.loads((report / "index.json").read_text())["cases"]
    assert len(cases) > 30
    assert [c["case"] for c in cases if c["verdict"] in ("FAIL", "CRASH")] == [], done.stdout[-3000:]


@pytest.mark.spark
@pytest.mark.parametrize("name", [pytest.param("4.9.7-index-rollover", marks=pytest.mark.slow),
                                  pytest.param("5.5.0-index-rollover", marks=pytest.mark.slow),
                                  "5.5.0-tagged"])
def test_rmq_spark_verify_fails_no_apache_store(spark: SparkSession,  # noqa: F811
                                                extracted: dict[str, Path], name: str) -> None:
    verdicts = verify_store(spark, extracted[name], index_sizes=STORES[name][1])
    assert [(v.case, v.detail) for v in verdicts if v.verdict == FAIL] == []


@pytest.mark.parametrize("version", ["4.9.7", "5.5.0"])
def test_the_rolled_over_stores_show_how_java_times_a_later_file_s_first_entry(extracted: dict[str, Path],
                                                                             version: str) -> None:
    """What makes these stores worth keeping: in every later index file the first entry's time difference
    counts from the previous file's end (non-zero after the pause), not from its own file's begin (which
    is that entry's own store time, so 0)."""
    paths = sorted((extracted[f"{version}-index-rollover"] / INDEX_DIR).iterdir())
    assert len(paths) >= 3
    for previous_path, path in itertools.pairwise(paths):
        with IndexFile(previous_path) as previous, IndexFile(path) as index:
            first = index.entry(FIRST_INDEX)
            assert first.time_diff > 0 and index.header.begin_timestamp > previous.header.end_timestamp
            assert first.time_diff == (index.header.begin_timestamp - previous.header.end_timestamp) // 1000


def test_the_tagged_store_shows_5_5_0_indexing_each_tags_string(extracted: dict[str, Path]) -> None:
    """RMQ-IDX-KEYS from 5.4.0: every record with a non-empty TAGS, the half message under
    RMQ_SYS_TRANS_HALF_TOPIC included, has an entry of topic#T#TAGS, and the index holds nothing else."""
    with StoreDirectory(extracted["5.5.0-tagged"]) as store:
        records = list(store.messages())
        files = [IndexFile(path) for path in store.index_files()]
        try:
            hashes = Counter((e.phy_offset, e.key_hash) for index in files for e in index.entries())
        finally:
            for index in files:
                index.close()
    tagged = [r for r in records if record_tag_key(r) is not None]
    assert {TAGGED_TOPIC, TRANS_HALF_TOPIC} <= {r.topic for r in tagged}
    for record in tagged:
        assert (record.physical_offset, index_key_hash(record_tag_key(record) or "")) in hashes
    assert sum(hashes.values()) == sum(len(index_keys(r, tags=True)) for r in records)
