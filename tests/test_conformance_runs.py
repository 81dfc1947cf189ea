"""Whole runs of ``rmq-conformance``: the golden store, a corrupted copy, and the embedded broker.

Each run is a subprocess, as a user would start it, so these tests also cover the console script, the
plugin loading and the reports written at the end.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.store.commitlog import segment_files
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.golden import STORE_TARBALL
from rocketmq_spec.spec.indexfile import MAX_QUERY_RESULTS
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR, CONSUMEQUEUE_DIR
from tests import process_tree
from tests.messaging_support import send, with_broker

RUN_TIMEOUT = 300
"""Seconds for one suite run: far above the usual 10-40 s, only there to bound a hung target."""

MIN_STORE_CASES = 30


def _run(args: list[str], report: Path) -> tuple[int, dict[str, Any], str]:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             *args, "--report", str(report)],
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


BROKER_AREAS = {"send", "pull", "offsets", "clients", "query", "admin", "grpc"}
SHORT_RUN = " or ".join(("send_refused", "fast_port_refuses_pull", "queue_bounds", "lock_batch",
                         "query_message_by_tag", "unknown_name_refused", "settings_required",
                         "sync_master_answers", "fed_slave_serves_records", "blocks_are_the_commitlog",
                         "commitlog_scan"))
"""A few cases of each broker area, the HA cases the embedded run's extra targets serve and the scan of
the store it wrote: the short form of the whole run, which CI's main job (from the built wheel) and
``results check`` make in full."""


@pytest.mark.parametrize("selection", [pytest.param(None, id="whole", marks=pytest.mark.slow),
                                       pytest.param(SHORT_RUN, id="short")])
def test_embedded_broker_and_its_store_conform(selection: str | None, tmp_path: Path) -> None:
    """The wire cases pass against the reference broker, and so do the store cases against the store it
    wrote once stopped: both halves of the brief's definition of a conforming implementation."""
    # the short form in this process's worker alone: the suite's own workers are for the whole run
    code, index, stdout = _run(["-k", selection, "-n", "0"] if selection else [], tmp_path / "report")
    assert code == 0, stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0
    assert index["totals"]["PASS"] > 0
    assert {c["area"] for c in index["cases"]} >= BROKER_AREAS
    verdicts = {c["case"]: c["verdict"] for c in index["cases"]}
    assert verdicts["pull::fast_port_refuses_pull"] == "PASS"  # the embedded broker's fast port is P - 2
    # the embedded run starts the HA targets too: a SYNC_MASTER and a slave the suite feeds
    assert {verdicts["ha::sync_master_answers"], verdicts["ha::fed_slave_serves_records"],
            verdicts["ha::blocks_are_the_commitlog"]} == {"PASS"}
    assert (tmp_path / "report" / "junit.xml").exists() and (tmp_path / "report" / "index.html").exists()
    store = json.loads((tmp_path / "report" / "store" / "index.json").read_text())
    assert store["totals"]["FAIL"] == 0 and store["totals"]["CRASH"] == 0, stdout
    assert len(store["cases"]) >= (MIN_STORE_CASES if selection is None else 1)
    assert "checking the store the embedded broker wrote" in stdout


SMALL_SETTINGS = {"mapped_file_size_commit_log": 262_144, "mapped_file_size_consume_queue": 2000,
                  "max_hash_slot_num": 1000, "max_index_num": 4000}
"""Legal settings far from Java's defaults: 256 KiB CommitLog files, 100 entries per ConsumeQueue file,
and index files of 1000 slots and 4000 entries."""
KEYED_MESSAGES = 300
SHARED_KEY = "shared"
"""One key every message carries, so a lookup of it must reach more records than Java's query limit."""
TOPIC = "SettingsTopic"
BODY = b"b" * 1000
"""Large enough that the messages fill more than one CommitLog file at the small setting."""


def _write_keyed_store(root: Path, **settings: int) -> Path:
    """A store the reference broker wrote with ``settings``: keyed messages over two queues."""
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for n in range(KEYED_MESSAGES):
            answer = await send(client, TOPIC, BODY, {PropertyKey.KEYS: f"key{n} {SHARED_KEY}",
                                                      PropertyKey.TAGS: "t", PropertyKey.WAIT: "true"},
                                queue_id=n % 2)
            assert answer.code == 0, answer.remark
    asyncio.run(with_broker(root, scenario, **settings))
    return root


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_keyed_store(tmp_path_factory.mktemp("small") / "store", **SMALL_SETTINGS)


def _verdicts(index: dict[str, Any]) -> dict[str, str]:
    return {c["case"]: c["verdict"] for c in index["cases"]}


def test_store_with_non_default_sizes_conforms(small_store: Path, tmp_path: Path) -> None:
    """Sizes are settings: consistent files of non-default sizes are INFO, and a key shared by more
    records than a query returns is still found for every one of them."""
    queue_files = [len(segment_files(d)) for d in (small_store / CONSUMEQUEUE_DIR / TOPIC).iterdir()]
    assert len(segment_files(small_store / COMMITLOG_DIR)) > 1 and min(queue_files) > 1
    assert KEYED_MESSAGES > MAX_QUERY_RESULTS
    code, index, stdout = _run(["store", str(small_store)], tmp_path / "report")
    assert code == 0, stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0
    verdicts = _verdicts(index)
    for setting in ("commitlog_file_names", "consume_queue_files", "index_file_sizes"):
        assert verdicts[f"store::{setting}"] == "INFO", setting
    for content in ("index_finds_every_key", "index_entries_point_at_records", "index_headers",
                    "queue_has_no_holes", "queue_entries_point_at_records", "records_are_dispatched"):
        assert verdicts[f"store::{content}"] == "PASS", content


def test_consume_queue_file_of_another_size_fails(small_store: Path, tmp_path: Path) -> None:
    root = tmp_path / "store"
    shutil.copytree(small_store, root)
    last = segment_files(root / CONSUMEQUEUE_DIR / TOPIC / "0")[-1].path
    with last.open("r+b") as handle:
        handle.truncate(SMALL_SETTINGS["mapped_file_size_consume_queue"] // 2)
    _, index, _ = _run(["store", str(root)], tmp_path / "report")
    assert _verdicts(index)["store::consume_queue_files"] == "FAIL"


def test_index_counts_off_the_default_ratio_need_index_sizes(tmp_path: Path) -> None:
    """1000 slots and 3000 entries: the size alone does not tell the counts, so the index content is
    INFO until ``--index-sizes`` gives them, then judged; wrong counts fail the layout clause."""
    root = _write_keyed_store(tmp_path / "store", **{**SMALL_SETTINGS, "max_index_num": 3000})
    _, inferred, _ = _run(["store", str(root)], tmp_path / "inferred")
    code, given, stdout = _run(["store", str(root), "--index-sizes", "1000,3000"], tmp_path / "given")
    _, wrong, _ = _run(["store", str(root), "--index-sizes", "1000,4000"], tmp_path / "wrong")
    assert inferred["totals"]["FAIL"] == 0
    assert _verdicts(inferred)["store::index_file_sizes"] == "INFO"
    assert _verdicts(inferred)["store::index_finds_every_key"] == "INFO"
    assert code == 0, stdout
    assert _verdicts(given)["store::index_file_sizes"] == "INFO"
    assert _verdicts(given)["store::index_finds_every_key"] == "PASS"
    assert _verdicts(wrong)["store::index_file_sizes"] == "FAIL"


def test_a_target_given_by_address_is_judged_by_the_version_it_answers(tmp_path: Path) -> None:
    """``--namesrv`` alone names no target: the run must not take it for the embedded broker (judged
    without a profile) but choose the profile its answers' version word selects."""
    from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ

    with SyncEmbeddedRocketMQ(tmp_path / "store") as mq:
        _, index, stdout = _run(["--namesrv", mq.namesrv_addr, "-k", "unknown_code", "-n", "0"],
                                tmp_path / "report")
    assert index["target"] != "embedded", stdout
    assert "answers with version" in index["profile_chosen"], stdout
