"""``rmq-spark verify`` against ``rmq-conformance store``: the same verdict for every clause, on the
golden Java store, on copies of it broken in different ways and on a reference-broker store whose file
sizes are all non-default settings, plus the small form of the scan check (Spark counts and checksums
equal the codec's)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.spark.cli import main
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.scan import codec_scan_summary, spark_scan_summary
from rocketmq_spec.spark.traffic import fill_store
from rocketmq_spec.spark.verify import FAIL, INFO, PASS, clause_verdicts, mirrored_verdicts, verify_store
from rocketmq_spec.spec.commitlog import BODY_CRC_POSITION
from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE
from rocketmq_spec.spec.golden import STORE_TARBALL
from rocketmq_spec.spec.store_layout import CONSUMEQUEUE_DIR

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_store(STORE_TARBALL, tmp_path_factory.mktemp("verify-golden"))


def conformance_verdicts(root: Path, report: Path, judged: Iterable[str], *options: str) -> dict[str, str]:
    """The suite's verdicts on the clauses Spark mirrors
    (``rocketmq_spec.spark.verify.mirrored_verdicts``)."""
    subprocess.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                    "store", str(root), "--report", str(report),
                    *options], check=False, capture_output=True)
    return mirrored_verdicts(json.loads((report / "index.json").read_text())["cases"], judged)


def copy_store(source: Path, target: Path) -> Path:
    subprocess.run(["cp", "-r", "--sparse=always", str(source), str(target)], check=True)
    return target


def corrupt_crc(root: Path) -> None:
    """Flip the stored BODYCRC of the twentieth record: the scan ends there, so every later record is
    unknown to the checks that follow it (entries and index entries point past the scan)."""
    with StoreDirectory(root) as store:
        victim = list(store.messages())[19]
    with (root / "commitlog" / f"{0:020d}").open("r+b") as handle:
        handle.seek(victim.physical_offset + BODY_CRC_POSITION)
        handle.write((victim.body_crc ^ 1).to_bytes(4, "big"))


def corrupt_queue_entry(root: Path) -> None:
    """Point the second entry of GoldenTopicA queue 0 one byte past its record."""
    path = root / CONSUMEQUEUE_DIR / "GoldenTopicA" / "0" / f"{0:020d}"
    with path.open("r+b") as handle:
        handle.seek(CQ_ENTRY_SIZE)
        offset = int.from_bytes(handle.read(8), "big")
        handle.seek(CQ_ENTRY_SIZE)
        handle.write((offset + 1).to_bytes(8, "big"))


def test_golden_store_passes_like_the_conformance_suite(spark: SparkSession,  # noqa: F811
                                                        golden_store: Path, tmp_path: Path) -> None:
    cases = verify_store(spark, golden_store, split_bytes=4096)
    ours = clause_verdicts((c.clause, c.verdict) for c in cases)
    assert set(ours.values()) == {PASS}
    assert ours == conformance_verdicts(golden_store, tmp_path / "report", ours)


def failing(verdicts: dict[str, str]) -> set[str]:
    return {clause for clause, verdict in verdicts.items() if verdict == FAIL}


@pytest.mark.slow  # a broken record: the default run breaks a queue entry instead (below)
def test_bad_crc_gets_the_conformance_verdicts(spark: SparkSession, golden_store: Path,  # noqa: F811
                                              tmp_path: Path) -> None:
    root = copy_store(golden_store, tmp_path / "store")
    corrupt_crc(root)
    ours = clause_verdicts((c.clause, c.verdict) for c in verify_store(spark, root))
    assert ours == conformance_verdicts(root, tmp_path / "report", ours)
    assert failing(ours) == {"RMQ-CL-BODY-CRC-CHECK", "RMQ-CQ-POINTS-AT-RECORD", "RMQ-CQ-DELAY-TAGS",
                             "RMQ-IDX-LOOKUP"}
    assert ours["RMQ-CL-MAGIC"] == INFO, "the other scan clauses cannot be judged past the bad record"
    assert ours["RMQ-CL-END-OF-DATA"] == INFO, "nor can the data end: the bad record is not at the end"


def test_cli_verify_on_a_bad_queue_entry_gets_the_conformance_verdicts(
        spark: SparkSession, golden_store: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """Through the CLI in a process that runs a session: the job uses it and leaves it running."""
    root = copy_store(golden_store, tmp_path / "store")
    corrupt_queue_entry(root)
    assert main(["verify", str(root), "--json", str(tmp_path / "verdicts.json")]) == 1
    ours = json.loads((tmp_path / "verdicts.json").read_text())["clauses"]
    assert ours == conformance_verdicts(root, tmp_path / "report", ours)
    assert failing(ours) == {"RMQ-CQ-POINTS-AT-RECORD", "RMQ-CQ-TRANSACTION"}
    assert ours["RMQ-CL-MAGIC"] == PASS
    assert "FAIL       RMQ-CQ-POINTS-AT-RECORD" in capsys.readouterr().out
    assert SparkSession.getActiveSession() is spark


def test_spark_scan_summary_equals_the_codec_scan(spark: SparkSession, golden_store: Path) -> None:  # noqa: F811
    expected = codec_scan_summary(golden_store)
    assert expected.records == 50 and expected.bytes == 34615
    assert spark_scan_summary(spark, golden_store, split_bytes=2048) == expected


SMALL_SETTINGS = {"mappedFileSizeConsumeQueue": 40 * CQ_ENTRY_SIZE, "maxHashSlotNum": 40,
                  "maxIndexNum": 120}
"""Legal sizes far from Java's defaults: 40 entries per ConsumeQueue file, and index files of 40 slots
and 120 entries, off the 1:4 ratio a size alone is read with (so the counts must be given)."""
SMALL_COMMITLOG_FILE = 64 << 10


@pytest.fixture(scope="module")
def sized_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 120 messages over two queues, two keys each: several files of every kind."""
    root = tmp_path_factory.mktemp("verify-sized") / "store"
    fill_store(root, 150 << 10, commitlog_file_size=SMALL_COMMITLOG_FILE, queues=2, mean_body=1000,
               broker_config=SMALL_SETTINGS)
    return root


def test_non_default_sizes_get_the_conformance_verdicts(spark: SparkSession,  # noqa: F811
                                                        sized_store: Path, tmp_path: Path) -> None:
    with StoreDirectory(sized_store) as store:
        assert len(store.commitlog.files) > 1 and len(store.index_files()) > 1
        queues = (sized_store / CONSUMEQUEUE_DIR / "FillTopic").iterdir()
        assert max(len(list(queue.iterdir())) for queue in queues) > 1
    sizes = (SMALL_SETTINGS["maxHashSlotNum"], SMALL_SETTINGS["maxIndexNum"])
    cases = verify_store(spark, sized_store, index_sizes=sizes)
    given = clause_verdicts((c.clause, c.verdict) for c in cases)
    assert given == conformance_verdicts(sized_store, tmp_path / "given", given, "--index-sizes", "40,120")
    assert FAIL not in given.values()
    assert given["RMQ-CQ-POSITION"] == given["RMQ-IDX-LAYOUT"] == INFO, "non-default sizes are settings"
    assert given["RMQ-IDX-KEYS"] == given["RMQ-IDX-LOOKUP"] == PASS


@pytest.mark.slow
def test_non_default_sizes_not_given_get_the_conformance_verdicts(spark: SparkSession,  # noqa: F811
                                                                  sized_store: Path, tmp_path: Path) -> None:
    inferred = clause_verdicts((c.clause, c.verdict) for c in verify_store(spark, sized_store))
    assert inferred == conformance_verdicts(sized_store, tmp_path / "inferred", inferred)
    assert inferred["RMQ-IDX-KEYS"] == inferred["RMQ-IDX-PUT"] == INFO, "counts off 1:4 cannot be inferred"
