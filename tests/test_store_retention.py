"""Retention: expired commitlog, consume-queue and index files deleted by hour, by disk use, forcibly or on
request; minimum offsets moved; pulls below them answered as 4.9.8 answers them; store paths honoured."""

from __future__ import annotations

import asyncio
import math
import os
from datetime import datetime
from pathlib import Path

import pytest

from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.store import GetMessageStatus, MessageStore, PutMessageStatus
from rocketmq_spec.reference_broker.store.retention import (
    DELETE_FILES_BATCH_MAX,
    disk_used_ratio,
    is_delete_hour,
)
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests.broker_support import fields, run, store_of
from tests.messaging_support import pull, send, with_broker
from tests.test_store_engine_helpers import message, tiny_config

NEVER = {"clean_resource_interval": 3_600_000}
"""No round runs by itself: each test runs them with ``run_round``."""
DISK_USED = 0.5
"""What the tests' disk reports as used (the probe is replaced: this machine's disk could be anything)."""
CALM_DISK = {"disk_max_used_space_ratio": 95, "disk_space_clean_forcibly_ratio": 0.9,
             "disk_space_warning_level_ratio": 0.9, "delete_commit_log_files_interval": 0,
             "delete_consume_queue_files_interval": 0}
"""Half full is below every threshold."""
FULL_DISK = {**CALM_DISK, "disk_max_used_space_ratio": 10}
"""Half full is past diskMaxUsedSpaceRatio (10 %, the least Java allows): deletion of expired files is due."""
OTHER_HOUR = datetime(2026, 1, 1, 3, 30)
DELETE_HOUR = "04"


def _fill(store: MessageStore, count: int, topic: str = "TopicR", start: int = 0) -> None:
    for n in range(start, start + count):
        assert store.put_message(message(topic, 0, n, body=b"x" * 300)).status is PutMessageStatus.PUT_OK


def _open(tmp_path: Path, **settings: object) -> MessageStore:
    store = MessageStore(tiny_config(tmp_path, **{**NEVER, **CALM_DISK, **settings}))
    store.retention.disk_usage = lambda path: DISK_USED
    return store


def test_delete_hour_removes_expired_files_and_moves_min_offsets(tmp_path: Path) -> None:
    small_index = {"max_hash_slot_num": 8, "max_index_num": 8}
    with _open(tmp_path, file_reserved_time=0, **small_index) as store:
        _fill(store, 40)
        files_before = sorted(p.name for p in (tmp_path / "commitlog").iterdir())
        assert len(files_before) > 3
        store.retention.run_round(OTHER_HOUR)
        assert store.min_phy_offset == 0  # not the hour, disk not full: nothing goes
        store.retention.run_round(datetime(2026, 1, 1, 4, 0))
        remaining = sorted(p.name for p in (tmp_path / "commitlog").iterdir())
        assert remaining == files_before[-1:]  # everything but the file being written
        assert store.min_phy_offset == int(remaining[0])
        queue = store.consume_queue("TopicR", 0)
        min_offset = store.min_offset("TopicR", 0)
        assert queue is not None and 0 < min_offset < 40
        first, before = queue.entry(min_offset), queue.entry(min_offset - 1)
        assert first is not None and first[0] >= store.min_phy_offset
        assert before is None or before[0] < store.min_phy_offset
        assert int(sorted((tmp_path / "consumequeue" / "TopicR" / "0").iterdir())[0].name) > 0
        below = store.get_messages("TopicR", 0, 0, 32)
        assert (below.status, below.next_begin_offset) == (GetMessageStatus.OFFSET_TOO_SMALL, min_offset)
        found = store.get_messages("TopicR", 0, min_offset, 32)
        assert found.status is GetMessageStatus.FOUND and found.queue_offsets[0] == min_offset
        assert all(index.header.end_phy_offset >= store.min_phy_offset for index in store.index.files[:-1])
        assert len(list((tmp_path / "index").iterdir())) == len(store.index.files)
    with _open(tmp_path, **small_index) as reopened:  # the new minimum survives a restart
        assert reopened.min_offset("TopicR", 0) == min_offset
        assert reopened.get_messages("TopicR", 0, min_offset, 1).status is GetMessageStatus.FOUND


def test_disk_use_is_read_as_java_reads_it(tmp_path: Path) -> None:
    """A whole percent of what users can fill (df's figure), rounded up; -1 for a path that is not there."""
    stats = os.statvfs(tmp_path)
    used = stats.f_blocks - stats.f_bfree
    assert disk_used_ratio(tmp_path) == math.ceil(used * 100 / (used + stats.f_bavail)) / 100
    assert disk_used_ratio(tmp_path / "missing") == -1


def test_delete_hours_are_hours_of_the_day() -> None:
    assert is_delete_hour("03;04", datetime(2026, 1, 1, 4, 59))
    assert not is_delete_hour(DELETE_HOUR, OTHER_HOUR)


@pytest.mark.parametrize("settings, deleted", [
    ({**FULL_DISK, "file_reserved_time": 72}, False),
    ({**FULL_DISK, "file_reserved_time": 0}, True),
    ({**FULL_DISK, "file_reserved_time": 72, "disk_space_clean_forcibly_ratio": 0.4}, True),
    ({**FULL_DISK, "file_reserved_time": 72, "disk_space_clean_forcibly_ratio": 0.4,
      "clean_file_forcibly_enable": False}, False),
    ({**CALM_DISK, "file_reserved_time": 0, "disk_max_used_space_ratio": 0}, True),  # read as 10 %
])
def test_a_full_disk_deletes_expired_files_or_forcibly(tmp_path: Path, settings: dict[str, object],
                                                       deleted: bool) -> None:
    with _open(tmp_path, **settings) as store:
        _fill(store, 20)
        store.retention.run_round(OTHER_HOUR)
        assert (store.min_phy_offset > 0) is deleted


def test_one_round_deletes_at_most_a_batch(tmp_path: Path) -> None:
    with _open(tmp_path, **FULL_DISK, file_reserved_time=0) as store:
        _fill(store, 13 * (DELETE_FILES_BATCH_MAX + 3))
        files = len(store.commitlog.files.files)
        assert files > DELETE_FILES_BATCH_MAX + 1
        store.retention.run_round(OTHER_HOUR)
        assert len(store.commitlog.files.files) == files - DELETE_FILES_BATCH_MAX


def test_past_the_warning_level_puts_are_refused_until_the_disk_is_below(tmp_path: Path) -> None:
    with _open(tmp_path, disk_space_warning_level_ratio=0.4) as store:
        store.retention.run_round(OTHER_HOUR)
        refused = store.put_message(message("TopicR", 0, 1))
        assert refused.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        store.config.disk_space_warning_level_ratio = 1.0
        store.retention.run_round(OTHER_HOUR)
        assert store.put_message(message("TopicR", 0, 1)).status is PutMessageStatus.PUT_OK


def test_delete_expired_commitlog_on_request(tmp_path: Path) -> None:
    with _open(tmp_path, file_reserved_time=0) as store:
        _fill(store, 20)
        store.delete_expired_commitlog()
        store.retention.run_round(OTHER_HOUR)
        assert store.min_phy_offset > 0


def test_clean_expired_consume_queues_drops_queues_with_nothing_left(tmp_path: Path) -> None:
    with _open(tmp_path, file_reserved_time=0) as store:
        _fill(store, 2, topic="TopicGone")
        _fill(store, 30, start=2)
        assert store.clean_expired_consume_queues() == 0  # everything still in the commitlog
        store.retention.run_round(datetime(2026, 1, 1, 4, 0))
        assert store.clean_expired_consume_queues() == 1
        assert store.consume_queue("TopicGone", 0) is None
        assert not (tmp_path / "consumequeue" / "TopicGone").exists()
        assert store.put_message(message("TopicGone", 0, 99)).queue_offset == 0


def test_store_path_commitlog_is_honoured(tmp_path: Path) -> None:
    elsewhere = tmp_path / "disk2" / "cl"
    with _open(tmp_path / "root", commit_log_dir=elsewhere) as store:
        _fill(store, 3)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["00000000000000000000"]
    assert not (tmp_path / "root" / "commitlog").exists()
    with _open(tmp_path / "root", commit_log_dir=elsewhere) as reopened:
        assert reopened.get_messages("TopicR", 0, 0, 32).status is GetMessageStatus.FOUND


def test_broker_answers_pulls_below_the_new_minimum(tmp_path: Path) -> None:
    """A broker left running with a full disk and no reserved time: its own rounds delete the old files,
    a pull from offset 0 is told where the queue now starts, and GET_MIN_OFFSET agrees."""
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        store = store_of(mq.broker)
        store.retention.disk_usage = lambda path: DISK_USED
        for _ in range(40):
            assert (await send(client, "TopicR", b"y" * 300, {}, queue_id=0)).code == ResponseCode.SUCCESS
        for _ in range(200):  # until only the file being written is left
            if len(store.commitlog.files.files) == 1:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # a few more rounds: the consume queue has followed
        min_offset = store.min_offset("TopicR", 0)
        assert min_offset > 0
        moved = await pull(client, "TopicR", 0, 0)
        assert moved.code == ResponseCode.PULL_OFFSET_MOVED and moved.remark == "OFFSET_TOO_SMALL"
        assert fields(moved)["nextBeginOffset"] == fields(moved)["minOffset"] == str(min_offset)
        answer = await client.invoke(client.request(RequestCode.GET_MIN_OFFSET, {"topic": "TopicR",
                                                                                  "queueId": "0"}))
        assert answer.ext_fields == {"offset": str(min_offset)}
        found = decode_records((await pull(client, "TopicR", 0, min_offset)).body)
        assert found[0].queue_offset == min_offset

    run(with_broker(tmp_path / "store", scenario, mapped_file_size_commit_log=4096, file_reserved_time=0,
                    clean_resource_interval=50, **FULL_DISK))


def test_broker_refuses_sends_while_the_disk_is_past_the_warning_level(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        retention = store_of(mq.broker).retention
        retention.disk_usage = lambda path: DISK_USED
        for _ in range(100):
            if retention.disk_full:
                break
            await asyncio.sleep(0.05)
        refused = await send(client, "TopicR", b"z", {})
        assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
        assert "the broker's disk is full [CL: " in (refused.remark or "")

    run(with_broker(tmp_path / "store", scenario, clean_resource_interval=50,
                    **{**CALM_DISK, "disk_space_warning_level_ratio": 0.4}))

