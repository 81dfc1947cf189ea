"""Whole runs of ``rmq-conformance``: the golden store, a corrupted copy, and the embedded broker.

Each run is a subprocess, as a user would start it, so these tests also cover the console script, the
plugin loading and the reports written at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from codec.store.directory import StoreDirectory
from tests.golden import STORE_TARBALL

RUN_TIMEOUT = 300
"""Seconds for one suite run: far above the usual 10-40 s, only there to bound a hung target."""

MIN_STORE_CASES = 30


def _run(args: list[str], report: Path) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run([sys.executable, "-m", "conformance.cli", *args, "--report", str(report)],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert (report / "index.json").exists(), done.stdout + done.stderr
    index = json.loads((report / "index.json").read_text())
    return done.returncode, index, done.stdout


def _extract(target: Path) -> Path:
    with tarfile.open(STORE_TARBALL) as tar:
        tar.extractall(target, filter="tar")
    return next(p for p in target.iterdir() if p.is_dir())


def test_golden_store_conforms(tmp_path: Path) -> None:
    code, index, stdout = _run(["store", str(_extract(tmp_path / "store"))], tmp_path / "report")
    assert code == 0, stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0
    assert len(index["cases"]) >= MIN_STORE_CASES
    assert "RocketMQ conformance" in stdout


def test_corrupted_body_fails_its_clause(tmp_path: Path) -> None:
    root = _extract(tmp_path / "store")
    with StoreDirectory(root) as store:
        first = next(store.messages())
    segment = root / "commitlog" / f"{0:020d}"
    body_at = first.physical_offset + first.total_size - len(first.properties_text.encode()) - 2 \
        - len(first.topic.encode()) - 1 - len(first.body)
    with segment.open("r+b") as handle:
        handle.seek(body_at)
        byte = handle.read(1)
        handle.seek(body_at)
        handle.write(bytes([byte[0] ^ 0xFF]))
    code, index, _ = _run(["store", str(root)], tmp_path / "report")
    verdicts = {c["case"]: c["verdict"] for c in index["cases"]}
    assert code == 1
    assert verdicts["store::commitlog_scan[record-body-crc]"] == "FAIL"
    assert verdicts["store::commitlog_scan[record-magic]"] == "INFO"


BROKER_AREAS = {"send", "pull", "offsets", "clients", "query"}


def test_embedded_broker_and_its_store_conform(tmp_path: Path) -> None:
    """The wire cases pass against the reference broker, and so do the store cases against the store it
    wrote once stopped: both halves of the brief's definition of a conforming implementation."""
    code, index, stdout = _run([], tmp_path / "report")
    assert code == 0, stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0
    assert index["totals"]["PASS"] > 0
    assert {c["area"] for c in index["cases"]} >= BROKER_AREAS
    verdicts = {c["case"]: c["verdict"] for c in index["cases"]}
    assert verdicts["pull::fast_port_refuses_pull"] == "PASS"  # the embedded broker's fast port is P - 2
    assert (tmp_path / "report" / "junit.xml").exists() and (tmp_path / "report" / "index.html").exists()
    store = json.loads((tmp_path / "report" / "store" / "index.json").read_text())
    assert store["totals"]["FAIL"] == 0 and store["totals"]["CRASH"] == 0, stdout
    assert len(store["cases"]) >= MIN_STORE_CASES
    assert "checking the store the embedded broker wrote" in stdout
