"""Make Apache stores whose index rolled over into later files, and one of a killed broker.

``python -m tests.capture_apache_stores OUT_DIR [VERSION ...]`` starts each Apache RocketMQ release
(default 4.9.7 and 5.5.0) with tiny index files (4 slots, 16 entries: 15 usable) and small store files,
sends keyed messages with pauses placed so that the first entry of every index file after the first is
written seconds after the previous file's last one, stops the broker cleanly and keeps its store as
``apache-VERSION-index-rollover.tar.gz``; then starts it again on a fresh store, sends, kills it (SIGKILL)
and keeps that as ``apache-VERSION-killed.tar.gz``; and a store of tagged messages, a half message among
them, stopped cleanly, as ``apache-VERSION-tagged.tar.gz`` (5.4.0+ indexes each TAGS string too,
RMQ-IDX-KEYS). These are the forms kept in ``tests/data/apache-stores``.

Java times the first entry of a later index file against the previous file's end timestamp (its header's
begin timestamp is set only once that entry is written), so with the pauses the first entries carry a
non-zero ``time_diff`` where one relative to their own file's begin would be 0: the stores show the rule.
"""

from __future__ import annotations

import asyncio
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.codec.store.indexfile import IndexFile
from rocketmq_spec.conformance.cases.messaging import uniq_key
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.indexfile import FIRST_INDEX
from rocketmq_spec.spec.sysflag import TransactionType
from tests.messaging_support import send

VERSIONS = ("4.9.7", "5.5.0")
INDEX_SLOTS, INDEX_ENTRIES = 4, 16
SMALL_STORE = {
    "mappedFileSizeCommitLog": str(64 * 1024),
    "mappedFileSizeConsumeQueue": str(300 * 20),
    "maxHashSlotNum": str(INDEX_SLOTS),
    "maxIndexNum": str(INDEX_ENTRIES),
    "defaultTopicQueueNums": "2",
    "timerWheelEnable": "false",  # 5.x: no timer log and wheel files beside the store (4.x ignores it)
}
TOPIC = "IndexRollTopic"
PER_FILE = INDEX_ENTRIES - FIRST_INDEX
"""Entries an index file takes before it is full (entry 0 is never used)."""
PAUSE_S = 2.2
"""Pause after a file fills, so the next file's first entry is timed over two seconds after its end."""
FILES = 3
KILLED_SENDS = 20
TAGGED_TOPIC = "IndexTagTopic"
TAGGED = (("TagA", ""), ("TagB", "key-b"), ("TagA", "T#TagA"), ("TagA || TagB", ""), ("", "key-untagged"))
"""(TAGS, KEYS) of the tagged store's messages: a repeated tag, a tag with a key, a key that hashes like a
tag key (topic#T#TagA), a TAGS string with separators (indexed whole), an empty TAGS (not indexed)."""
HALF_TAG = "TxTag0"


async def _send_keyed(addr: str, count: int, *, keys: bool) -> None:
    """``count`` messages, each indexed under its UNIQ_KEY (and one key of KEYS when ``keys``)."""
    client = await RemotingClient.connect(addr)
    try:
        for n in range(count):
            properties = {"UNIQ_KEY": uniq_key(), "WAIT": "true"}
            if keys:
                properties["KEYS"] = f"key-{n}"
            answer = await send(client, TOPIC, f"message {n}".encode(), properties, queue_id=n % 2)
            if answer.code != ResponseCode.SUCCESS:
                raise RuntimeError(f"send refused: {answer.code} {answer.remark}")
    finally:
        await client.close()


def _roll_over(addr: str) -> None:
    """Fill FILES index files one entry per message, pausing after each file fills and once in its middle
    (so entries within a file have time differences too), then a few two-key messages in the last."""
    for _ in range(FILES):
        asyncio.run(_send_keyed(addr, PER_FILE // 2, keys=False))
        time.sleep(PAUSE_S / 2)
        asyncio.run(_send_keyed(addr, PER_FILE - PER_FILE // 2, keys=False))
        time.sleep(PAUSE_S)
    asyncio.run(_send_keyed(addr, 3, keys=True))


async def _send_tagged(addr: str) -> None:
    """The TAGGED messages, then a half message (indexed under RMQ_SYS_TRANS_HALF_TOPIC, tag included)."""
    client = await RemotingClient.connect(addr)
    try:
        sends = [(TAGGED_TOPIC, {"TAGS": tags, "KEYS": keys}, 0) for tags, keys in TAGGED]
        sends.append((TAGGED_TOPIC, {"TAGS": HALF_TAG, "TRAN_MSG": "true", "PGROUP": "capture_tx"},
                      TransactionType.PREPARED))
        for n, (topic, extra, sys_flag) in enumerate(sends):
            properties = {"UNIQ_KEY": uniq_key(), "WAIT": "true", **{k: v for k, v in extra.items() if v}}
            answer = await send(client, topic, f"tagged {n}".encode(), properties, sys_flag=sys_flag)
            if answer.code != ResponseCode.SUCCESS:
                raise RuntimeError(f"send refused: {answer.code} {answer.remark}")
    finally:
        await client.close()


def _archive(store: Path, tarball: Path) -> Path:
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(store, arcname=tarball.name.removesuffix(".tar.gz"))
    return tarball


def _first_entries_timed_against_previous_end(store: Path) -> bool:
    """Whether some later index file's first entry has a time difference the previous file's end gives."""
    later = sorted((store / "index").iterdir())[1:]
    return any(_first_time_diff(path) > 0 for path in later)


def _first_time_diff(path: Path) -> int:
    with IndexFile(path, slot_count=INDEX_SLOTS, index_count=INDEX_ENTRIES) as index:
        return index.entry(FIRST_INDEX).time_diff


def capture(out: Path, version: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = []
    with tempfile.TemporaryDirectory() as work:
        store = Path(work) / "rolled"
        with ApacheRocketMQ(version, store=store, broker_config=SMALL_STORE, heap_mb=384) as mq:
            _roll_over(mq.broker_addr)
        if not _first_entries_timed_against_previous_end(store):
            raise RuntimeError(f"{version}: no later index file's first entry shows the rule")
        made.append(_archive(store, out / f"apache-{version}-index-rollover.tar.gz"))
        store = Path(work) / "killed"
        with ApacheRocketMQ(version, store=store, broker_config=SMALL_STORE, heap_mb=384) as mq:
            asyncio.run(_send_keyed(mq.broker_addr, KILLED_SENDS, keys=True))
            mq.kill_broker()
        made.append(_archive(store, out / f"apache-{version}-killed.tar.gz"))
        store = Path(work) / "tagged"
        with ApacheRocketMQ(version, store=store, broker_config=SMALL_STORE, heap_mb=384) as mq:
            asyncio.run(_send_tagged(mq.broker_addr))
        made.append(_archive(store, out / f"apache-{version}-tagged.tar.gz"))
    return made


if __name__ == "__main__":
    for wanted in sys.argv[2:] or VERSIONS:
        for path in capture(Path(sys.argv[1]), wanted):
            print(path)
