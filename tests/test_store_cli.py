"""``rmq-store dump``, ``query`` and ``inspect`` on the golden store, a store Apache RocketMQ 5.5.0 wrote and
on broken input."""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from rocketmq_spec.codec.cli.store import main
from rocketmq_spec.reference_broker.store import MessageStore
from rocketmq_spec.spark.fixtures import extract_store
from rocketmq_spec.spec.system_topics import TRANS_HALF_TOPIC
from tests.capture_apache_stores import TAGGED_TOPIC
from tests.test_golden_store import golden_store
from tests.test_store_engine_helpers import message, tiny_config

__all__ = ["golden_store"]

DUMP_FIELDS = {
    "physical_offset",
    "total_size",
    "magic",
    "body_crc",
    "queue_id",
    "flag",
    "queue_offset",
    "sys_flag",
    "born_timestamp",
    "born_host",
    "store_timestamp",
    "store_host",
    "reconsume_times",
    "prepared_transaction_offset",
    "topic",
    "properties",
    "body_b64",
    "offset_msg_id",
}


def test_dump_json_lists_every_record(golden_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", str(golden_store), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 50
    assert all(set(line) >= DUMP_FIELDS for line in lines)
    first = lines[0]
    assert first["offset_msg_id"] == "7F00000100002A9F0000000000000000"
    assert first["store_host"] == "127.0.0.1:10911"
    assert first["properties"]["KEYS"] == "order-1001"
    assert base64.b64decode(first["body_b64"]) == b"hello golden A1"
    offsets = [line["physical_offset"] for line in lines]
    assert offsets == sorted(offsets)
    assert all(b["physical_offset"] == a["physical_offset"] + a["total_size"] for a, b in pairwise(lines))


def test_inspect_summarises_a_consistent_store(
    golden_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(golden_store)]) == 0
    out = capsys.readouterr().out
    assert "50 record(s)" in out
    assert "GoldenTopicA/0: 0..9" in out
    assert "GoldenTopicA@GoldenConsumerGroup: 0=9, 1=7, 2=5, 3=5" in out
    assert "inconsistencies: none" in out


def test_inspect_reports_a_consumer_offset_past_the_queue(
    golden_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "store"
    shutil.copytree(golden_store / "config", copy / "config")
    (copy / "commitlog").mkdir()
    (copy / "checkpoint").write_bytes((golden_store / "checkpoint").read_bytes())
    assert main(["inspect", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "GoldenTopicA@GoldenConsumerGroup queue 0 = 9 is past max offset 0" in out


def test_corrupt_commitlog_is_a_one_line_error(golden_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    (copy / "commitlog").mkdir(parents=True)
    data = bytearray((golden_store / "commitlog" / "00000000000000000000").open("rb").read(40000))
    data[208 + 4] ^= 0xFF
    (copy / "commitlog" / "00000000000000000000").write_bytes(bytes(data))
    result = subprocess.run(
        [sys.executable, "-m", "rocketmq_spec.codec.cli.store", "dump", str(copy), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "at offset 208" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_missing_directory_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == f"rmq-store: store directory {tmp_path / 'nothing'} does not exist\n"


def test_a_reader_that_stops_early_ends_the_dump_quietly(tmp_path: Path) -> None:
    """More output than a pipe buffer holds, so the dump is still writing when ``head`` exits."""
    with MessageStore(tiny_config(tmp_path, mapped_file_size_commit_log=1 << 20)) as store:
        for n in range(40):
            store.put_message(message("TopicA", 0, n, body=bytes(8192)))
    dump = f"{shlex.quote(sys.executable)} -m rocketmq_spec.codec.cli.store dump {tmp_path} --json"
    command = f"set -o pipefail; {dump} | head -1"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert len(result.stdout.splitlines()) == 1


def test_query_finds_records_by_key_and_by_tag_in_a_5_5_0_store(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """5.5.0 indexes the TAGS string (RMQ-IDX-KEYS): ``--tag`` finds each record of that tag once, the
    record whose KEYS entry T#TagA hashes alike included only by its tags; a half message under its own
    topic."""
    store = extract_store(Path(__file__).parent / "data" / "apache-stores" / "apache-5.5.0-tagged.tar.gz",
                          tmp_path)

    def found(*args: str) -> list[tuple[str, str | None]]:
        assert main(["query", str(store), *args, "--json"]) == 0
        lines = capsys.readouterr().out.splitlines()
        return [(r["topic"], r["properties"].get("KEYS")) for r in map(json.loads, lines)]

    assert found(TAGGED_TOPIC, "TagA", "--tag") == [(TAGGED_TOPIC, None), (TAGGED_TOPIC, "T#TagA")]
    assert found(TAGGED_TOPIC, "T#TagA") == [(TAGGED_TOPIC, "T#TagA")]
    assert found(TAGGED_TOPIC, "TagA") == []
    assert found(TRANS_HALF_TOPIC, "TxTag0", "--tag") == [(TRANS_HALF_TOPIC, None)]
