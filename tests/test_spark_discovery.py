"""The formats are found by name on a plain SparkSession, as a user of the installed project gets one.

A fresh interpreter runs what a notebook would: ``SparkSession.builder.getOrCreate()`` and
``spark.read.format(...)``, with no import of this project and no registration call. The project root
is put on ``PYTHONPATH`` because that is where an installed project's ``pyspark_rocketmq*`` packages
sit on ``sys.path`` (an editable install maps them through an import hook, which Spark's lookup of
``pyspark_*`` packages does not see), and ``PYSPARK_PYTHON`` names the interpreter, as the README says a
plain session needs.

Both run as in a virtualenv that is not activated: its ``bin`` is not on ``PATH``, and the ``python3``
there is another interpreter (one that refuses to run, so anything started by that name fails).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spark.fixtures import extract_store
from rocketmq_spec.spark.traffic import prepare_topic
from rocketmq_spec.spec.golden import STORE_TARBALL
from tests import process_tree
from tests.golden import PROJECT_ROOT

pytestmark = pytest.mark.spark

USER_JOB = """
import sys
from pyspark.sql import SparkSession

store, namesrv, checkpoint = sys.argv[1:]
spark = SparkSession.builder.getOrCreate()
print("store", spark.read.format("rocketmq-store").load(store).count())
rows = spark.createDataFrame([("one",), ("two",), ("three",)], "body string")
rows.write.format("rocketmq").option("namesrv", namesrv).option("topic", "Discovered").mode("append").save()
query = (spark.readStream.format("rocketmq").option("namesrv", namesrv).option("topic", "Discovered")
         .option("group", "discovery").load().writeStream.format("memory").queryName("live")
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
query.awaitTermination()
print("live", sorted(row.body.decode() for row in spark.table("live").collect()))
spark.stop()
"""

SPARK_DEFAULTS = """\
spark.master local[1]
spark.driver.memory 512m
spark.ui.enabled false
spark.driver.host 127.0.0.1
spark.driver.bindAddress 127.0.0.1
"""
"""Kept out of the job's code, as a cluster's own defaults would be: loopback only, a small JVM."""


WRONG_PYTHON = "#!/bin/sh\necho 'this python3 is not the interpreter that has the project' >&2\nexit 3\n"


def not_activated(tmp_path: Path) -> dict[str, str]:
    """The environment of a shell where this interpreter's environment is not activated."""
    elsewhere = tmp_path / "other-bin"
    elsewhere.mkdir()
    for name in ("python3", "python"):
        (elsewhere / name).write_text(WRONG_PYTHON)
        (elsewhere / name).chmod(0o755)
    ours = {str(Path(sys.executable).parent), sysconfig.get_path("scripts")}
    path = [str(elsewhere), *(entry for entry in os.environ["PATH"].split(os.pathsep) if entry not in ours)]
    env = {key: value for key, value in os.environ.items() if key not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    return {**env, "PATH": os.pathsep.join(path), "SPARK_LOCAL_IP": "127.0.0.1"}


def spark_conf(tmp_path: Path) -> str:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(SPARK_DEFAULTS)
    return str(conf)


def test_plain_session_reads_both_formats_by_name(tmp_path: Path) -> None:
    (tmp_path / "golden").mkdir()
    store = extract_store(STORE_TARBALL, tmp_path / "golden")
    env = {**not_activated(tmp_path), "SPARK_CONF_DIR": spark_conf(tmp_path),
           "PYSPARK_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))}
    with SyncEmbeddedRocketMQ(tmp_path / "broker") as broker:
        prepare_topic(broker.namesrv_addr, broker.broker_addr, "Discovered", 2)
        job = process_tree.run([sys.executable, "-c", USER_JOB, str(store), broker.namesrv_addr,
                                str(tmp_path / "checkpoint")],
                               env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    lines = job.stdout.splitlines()
    assert "store 50" in lines
    assert "live ['one', 'three', 'two']" in lines


def test_test_only_source_is_not_found_by_name() -> None:
    """The fault-injecting sink exists only where a test registers it."""
    packages = [path.name for path in PROJECT_ROOT.iterdir() if path.name.startswith("pyspark_")]
    assert sorted(packages) == ["pyspark_rocketmq", "pyspark_rocketmq_store"]
    assert "crash" not in "".join((PROJECT_ROOT / name / "__init__.py").read_text() for name in packages)


def test_rmq_spark_runs_from_a_virtualenv_that_is_not_activated(tmp_path: Path) -> None:
    """``venv/bin/rmq-spark scan`` by its path: the session it builds points Spark's workers at the
    interpreter the command runs in, not at the ``python3`` on ``PATH`` (``scan``, the command of one
    job: every command builds its session alike)."""
    (tmp_path / "golden").mkdir()
    store = extract_store(STORE_TARBALL, tmp_path / "golden")
    command = Path(sysconfig.get_path("scripts")) / "rmq-spark"
    env = {**not_activated(tmp_path), "SPARK_CONF_DIR": spark_conf(tmp_path)}
    done = process_tree.run([str(command), "scan", str(store), "--cores", "1"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
