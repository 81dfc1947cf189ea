"""Stores of a running or killed broker (Java 4.9.8 and the reference broker, ``tests/data/live-stores``)
and torn variants of one: every offline reader reads them, finds the data end in the same place and
reports the same things past it — ``rmq-store dump/inspect``, ``rmq-conformance store``, the Spark
``rocketmq-store`` source and ``rmq-spark verify``."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.codec.cli.store import main as rmq_store
from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.verify import (
    FAIL,
    INFO,
    NON_STRICT,
    clause_verdicts,
    mirrored_verdicts,
    verify_store,
)
from rocketmq_spec.spec.commitlog import BODY_CRC_POSITION
from rocketmq_spec.spec.store_layout import ABORT_FILE
from tests import process_tree
from tests.golden import PROJECT_ROOT

DATA = Path(__file__).resolve().parent / "data" / "live-stores"
INDEX_SIZES = (512, 4096)
INDEX_OPTION = ("--index-sizes", ",".join(map(str, INDEX_SIZES)))
CONFORMANCE_TIMEOUT_S = 300.0

ABORT, ZERO_CKPT, PREALLOCATED = "RMQ-STORE-ABORT", "RMQ-CKPT-ZERO", "RMQ-CL-PREALLOCATED"
TORN, LAG = "RMQ-CL-TORN-TAIL", "RMQ-CQ-DISPATCH-LAG"


@dataclass(frozen=True)
class Expected:
    records: int
    data_end: int
    notices: frozenset[str]


STORES = {
    "java-running": Expected(1664, 632320, frozenset({PREALLOCATED, ABORT, ZERO_CKPT})),
    "java-killed": Expected(3523, 1338896, frozenset({PREALLOCATED, ABORT, ZERO_CKPT, LAG})),
    "reference-running": Expected(159, 238920, frozenset({ABORT, ZERO_CKPT})),
    "reference-killed": Expected(327, 494186, frozenset({ABORT, ZERO_CKPT})),
}


def make_dir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    target = tmp_path_factory.mktemp("live-stores")
    return {name: extract_store(DATA / f"{name}.tar.gz", make_dir(target / name)) for name in STORES}


def tear_last_record(root: Path, how: str) -> int:
    """Tear the last record of a copy as a crash of the machine could: its second half never reached
    the disk (``zeros``), or its body did but differs from its BODYCRC (``crc``). Returns its offset."""
    with StoreDirectory(root) as store:
        last = list(store.commitlog.scan())[-1]
        segment = next(f for f in reversed(store.commitlog.files) if f.start <= last.physical_offset)
    with segment.path.open("r+b") as handle:
        position = last.physical_offset - segment.start
        if how == "zeros":
            handle.seek(position + last.total_size // 2)
            handle.write(bytes(last.total_size - last.total_size // 2))
        else:
            handle.seek(position + BODY_CRC_POSITION)
            handle.write((last.body_crc ^ 1).to_bytes(4, "big"))
    return last.physical_offset


AHEAD_RECORDS = 3


def drop_last_records(root: Path, count: int) -> int:
    """Zero the last ``count`` records, as a copy that read the CommitLog before they were written and
    the consume queues and index after; returns where the data now ends."""
    with StoreDirectory(root) as store:
        first = list(store.commitlog.scan())[-count]
        end = store.commitlog.end.offset
        segment = next(f for f in reversed(store.commitlog.files) if f.start <= first.physical_offset)
    with segment.path.open("r+b") as handle:
        handle.seek(first.physical_offset - segment.start)
        handle.write(bytes(end - first.physical_offset))
    return first.physical_offset


@pytest.fixture(scope="module")
def torn(extracted: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """java-killed with its last record torn both ways, one torn copy without its abort file, and
    java-running whose queues and index ran ahead of its CommitLog."""
    stores = {}
    for how in ("zeros", "crc"):
        root = tmp_path_factory.mktemp(f"torn-{how}") / "store"
        shutil.copytree(extracted["java-killed"], root)
        tear_last_record(root, how)
        stores[f"torn-{how}"] = root
    clean = tmp_path_factory.mktemp("torn-clean") / "store"
    shutil.copytree(stores["torn-zeros"], clean)
    (clean / ABORT_FILE).unlink()
    stores["torn-clean"] = clean
    ahead = tmp_path_factory.mktemp("queues-ahead") / "store"
    shutil.copytree(extracted["java-running"], ahead)
    drop_last_records(ahead, AHEAD_RECORDS)
    stores["queues-ahead"] = ahead
    return stores


def store_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = rmq_store(list(argv))
    return code, out.getvalue(), err.getvalue()


def inspected(root: Path) -> dict[str, object]:
    code, out, err = store_cli("inspect", "--json", str(root))
    assert code == 0, err
    return dict(json.loads(out))


def conformance_cases(root: Path, report: Path) -> list[dict[str, str]]:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             "store", str(root), *INDEX_OPTION,
                             "--report", str(report)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            timeout=CONFORMANCE_TIMEOUT_S)
    assert (report / "index.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((report / "index.json").read_text())["cases"]


def conformance_verdicts(root: Path, report: Path) -> dict[str, str]:
    return clause_verdicts((c["clause"], c["verdict"]) for c in conformance_cases(root, report))


@pytest.mark.parametrize("name", sorted(STORES))
def test_rmq_store_reads_and_reports(extracted: dict[str, Path], name: str) -> None:
    expected, root = STORES[name], extracted[name]
    summary = inspected(root)
    assert (summary["records"], summary["data_end"]) == (expected.records, expected.data_end)
    assert {n["clause"] for n in summary["notices"]} == expected.notices  # type: ignore[attr-defined]
    assert summary["inconsistencies"] == []
    code, out, err = store_cli("dump", "--json", str(root))
    assert code == 0 and len(out.splitlines()) == expected.records
    assert {line.split("[")[1].split("]")[0] for line in err.splitlines()} == expected.notices - {LAG}


@pytest.mark.parametrize("how", ["zeros", "crc"])
def test_a_torn_last_record_ends_the_data_at_its_start(extracted: dict[str, Path], torn: dict[str, Path],
                                                       how: str) -> None:
    with StoreDirectory(extracted["java-killed"]) as store:
        last = list(store.commitlog.scan())[-1].physical_offset
    summary = inspected(torn[f"torn-{how}"])
    assert (summary["records"], summary["data_end"]) == (STORES["java-killed"].records - 1, last)
    clauses = {n["clause"] for n in summary["notices"]}  # type: ignore[attr-defined]
    assert clauses == {PREALLOCATED, ABORT, ZERO_CKPT, TORN}
    with StoreDirectory(torn[f"torn-{how}"]) as store:
        assert len(list(store.messages())) == len(list(store.commitlog.scan())) == summary["records"]
        assert store.commitlog.end.torn is not None and store.commitlog.end.torn.offset == last


def test_a_record_broken_before_the_last_is_still_refused(extracted: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "store"
    shutil.copytree(extracted["reference-killed"], root)
    with StoreDirectory(root) as store:
        victim = list(store.commitlog.scan())[-2]
        segment = next(f for f in reversed(store.commitlog.files) if f.start <= victim.physical_offset)
    with segment.path.open("r+b") as handle:
        handle.seek(victim.physical_offset - segment.start + 4)
        handle.write(b"\x00\x00\x00\x01")
    code, _, err = store_cli("inspect", str(root))
    assert code == 2 and "RMQ-CL-MAGIC" in err


ALL = [*sorted(STORES), "torn-zeros", "torn-crc", "torn-clean", "queues-ahead"]


def root_of(name: str, extracted: dict[str, Path], torn: dict[str, Path]) -> Path:
    return extracted[name] if name in STORES else torn[name]


def expected_verdict(name: str, clause: str) -> str:
    """What the suites give a notice's clause: INFO, but NON-STRICT for a torn tail without a crash."""
    return NON_STRICT if name == "torn-clean" and clause == TORN else INFO


@pytest.mark.parametrize("name", ALL)
def test_conformance_reports_what_rmq_store_reports(extracted: dict[str, Path], torn: dict[str, Path],
                                                    name: str, tmp_path: Path) -> None:
    root = root_of(name, extracted, torn)
    verdicts = conformance_verdicts(root, tmp_path / "report")
    failed = {clause for clause, verdict in verdicts.items() if verdict == FAIL}
    assert failed == set()
    notices = {n["clause"] for n in inspected(root)["notices"]}  # type: ignore[attr-defined]
    for clause in notices & {PREALLOCATED, ZERO_CKPT, TORN, ABORT}:
        assert verdicts[clause] == expected_verdict(name, clause), clause
    for clause in {PREALLOCATED, ZERO_CKPT, TORN} - notices:
        assert verdicts[clause] == "PASS", clause
    dispatched = INFO if LAG in notices and name == "java-killed" else "PASS"
    assert verdicts["RMQ-CQ-TRANSACTION"] == dispatched
    ahead = INFO if name == "queues-ahead" else "PASS"
    assert verdicts["RMQ-CQ-POINTS-AT-RECORD"] == verdicts["RMQ-IDX-LOOKUP"] == ahead


def test_queue_and_index_entries_past_the_data_end_are_reported(extracted: dict[str, Path],
                                                                torn: dict[str, Path]) -> None:
    summary = inspected(torn["queues-ahead"])
    assert summary["records"] == STORES["java-running"].records - AHEAD_RECORDS
    assert summary["inconsistencies"] == []
    clauses = [n["clause"] for n in summary["notices"]]  # type: ignore[attr-defined]
    assert sorted(clauses) == sorted([PREALLOCATED, ABORT, ZERO_CKPT, LAG])


@pytest.mark.spark
@pytest.mark.parametrize("name", [pytest.param("java-killed", marks=pytest.mark.slow),
                                  pytest.param("torn-clean", marks=pytest.mark.slow), "queues-ahead"])
def test_spark_verify_gives_the_conformance_verdicts(spark: SparkSession,  # noqa: F811
                                                     extracted: dict[str, Path],
                                                     torn: dict[str, Path], name: str,
                                                     tmp_path: Path) -> None:
    root = root_of(name, extracted, torn)
    ours = clause_verdicts((c.clause, c.verdict) for c in verify_store(spark, root, index_sizes=INDEX_SIZES))
    assert ours == mirrored_verdicts(conformance_cases(root, tmp_path / "report"), ours)


@pytest.mark.spark
def test_the_spark_source_reads_the_records_rmq_store_reads(spark: SparkSession,  # noqa: F811
                                                          extracted: dict[str, Path],
                                                          torn: dict[str, Path]) -> None:
    for name in ALL:
        root = root_of(name, extracted, torn)
        frame = spark.read.format("rocketmq-store").option("onError", "row").load(str(root))
        counts = frame.selectExpr("count(*)", "count_if(error IS NULL)").first()  # one job, not two
        assert counts is not None
        rows, clean = counts
        assert clean == rows == inspected(root)["records"], name
