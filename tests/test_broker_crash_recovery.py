"""A real ``kill -9`` of a running ``rmq-broker`` under producer load, then recovery on the same store.

Producers on their own connections send SEND_MESSAGE_V2 with WAIT=true to a SYNC_FLUSH broker whose
commitlog files are small enough to roll (BLANK markers) while the load runs. Each SUCCESS is recorded
with the msgId, queue id and queue offset the broker acknowledged. Once some hundreds are acknowledged the
process is killed; it leaves its abort file, and a new process recovers the store. Then every
acknowledged message must be found over the wire (pull, VIEW_MESSAGE_BY_ID, QUERY_MESSAGE) where it was
acknowledged, queues must be contiguous, and whatever else is stored must be an intact copy of something
a producer sent, at most once. After a clean stop the files are checked offline through the codec and by
``rmq-conformance store``.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import MessageRecord, StoreDirectory, decode_records
from rocketmq_spec.codec.store.commitlog import segment_files
from rocketmq_spec.reference_broker.client import CLIENT_VERSION, RemotingClient, next_opaque
from rocketmq_spec.reference_broker.client_requests import send_fields
from rocketmq_spec.reference_broker.stream import FramedStream
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CREATE_TOPIC_REQUEST
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import ABORT_FILE
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests import process_tree
from tests.broker_process import BrokerProcess, write_broker_conf
from tests.broker_support import fields, run
from tests.golden import PROJECT_ROOT
from tests.messaging_support import pull
from tests.test_store_engine_helpers import assert_consistent

TOPIC = "CrashTopic"
QUEUES = 4
PRODUCERS = 4
ACKS_BEFORE_KILL = 400
COMMITLOG_FILE = 256 * 1024
MIN_COMMITLOG_FILES = 3
"""The acknowledged load alone (some 600 KB) rolls the commitlog twice, so the crash recovers across
files ended by BLANK markers."""
BODY_SIZES = range(300, 2300)
"""Bodies of varied length, so BLANK markers of varied length end the rolled files."""
CLUSTER = "DefaultCluster"
CONFORMANCE_TIMEOUT_S = 300.0
PULL_BATCH = 32
TEARING_PRODUCER = PRODUCERS
"""Producer id of the connection that holds half a frame when the broker dies."""
LATE_PRODUCER = PRODUCERS + 1
"""Producer id of the sends made after the restart."""

BROKER_CONF = {
    "brokerClusterName": CLUSTER,
    "flushDiskType": "SYNC_FLUSH",
    "mappedFileSizeCommitLog": str(COMMITLOG_FILE),
}
"""Consume-queue and index files keep Java's default geometry (sparse files), which ``rmq-conformance
store`` holds a store to."""
KEY_GROUP = 16
"""Messages of one producer sharing a second key, so index hash chains run through many entries while
every lookup of that key still fits in one query (``maxMsgsNumBatch`` is 64)."""


@dataclass(frozen=True)
class Attempt:
    """One message a producer tried to send, kept before it is written so nothing sent goes unaccounted."""

    producer: int
    seq: int

    @property
    def queue_id(self) -> int:
        return (self.producer + self.seq) % QUEUES

    @property
    def uniq_key(self) -> str:
        return f"7F0000010FA0{self.producer:012X}{self.seq:08X}"

    @property
    def key(self) -> str:
        return f"k-{self.producer}-{self.seq}"

    @property
    def born(self) -> int:
        return 1_700_000_000_000 + self.producer * 1_000_000 + self.seq

    @property
    def body(self) -> bytes:
        span = len(BODY_SIZES)
        size = BODY_SIZES.start + (self.producer * 7919 + self.seq * 104729) % span
        return bytes((self.producer * 31 + self.seq + i) % 256 for i in range(size))

    @property
    def properties(self) -> dict[str, str]:
        return {PropertyKey.KEYS: f"{self.key} g-{self.producer}-{self.seq // KEY_GROUP}",
                PropertyKey.TAGS: f"Tag{self.seq % 3}", PropertyKey.UNIQ_KEY: self.uniq_key,
                PropertyKey.WAIT: "true", "producer": str(self.producer), "seq": str(self.seq)}

    @property
    def stored_properties(self) -> dict[str, str]:
        """What the broker stores: WAIT honoured and dropped, CLUSTER added (spec facts §10.2)."""
        stored = {k: v for k, v in self.properties.items() if k != PropertyKey.WAIT}
        return {**stored, PropertyKey.CLUSTER: CLUSTER}

    def request(self) -> RemotingCommand:
        header = send_fields(TOPIC, self.properties, queue_id=self.queue_id, born=self.born)
        return RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, header, self.body, opaque=next_opaque(),
                                       version=CLIENT_VERSION)


@dataclass(frozen=True)
class Ack:
    attempt: Attempt
    msg_id: str
    queue_id: int
    queue_offset: int


@dataclass
class Ledger:
    """Every attempted send by UNIQ_KEY and every SUCCESS the broker answered."""

    attempts: dict[str, Attempt] = field(default_factory=dict)
    acks: dict[str, Ack] = field(default_factory=dict)
    never_complete: set[str] = field(default_factory=set)
    """Sends whose frame the broker never received whole; they must not be stored."""
    enough: asyncio.Event = field(default_factory=asyncio.Event)

    def attempt(self, producer: int, seq: int) -> Attempt:
        attempt = Attempt(producer, seq)
        self.attempts[attempt.uniq_key] = attempt
        return attempt

    def record(self, attempt: Attempt, answer: RemotingCommand) -> None:
        if answer.code != ResponseCode.SUCCESS:
            return
        sent = fields(answer)
        self.acks[attempt.uniq_key] = Ack(attempt, sent["msgId"], int(sent["queueId"]),
                                          int(sent["queueOffset"]))
        if len(self.acks) >= ACKS_BEFORE_KILL:
            self.enough.set()


# ------------------------------------------------------------------ load and kill

async def _create_topic(addr: str) -> None:
    client = await RemotingClient.connect(addr)
    try:
        header = encode_header(CREATE_TOPIC_REQUEST, {
            "topic": TOPIC, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": QUEUES, "writeQueueNums": QUEUES,
            "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})
        created = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC, header))
        assert created.code == ResponseCode.SUCCESS, created.remark
    finally:
        await client.close()


async def _produce(addr: str, producer: int, ledger: Ledger) -> None:
    """Send one message at a time until the connection dies with the broker."""
    client = await RemotingClient.connect(addr)
    try:
        for seq in itertools.count():
            attempt = ledger.attempt(producer, seq)
            try:
                answer = await client.invoke(attempt.request())
            except ConnectionError:
                return
            ledger.record(attempt, answer)
    finally:
        await client.close()


async def _tear_a_frame(addr: str, producer: int, ledger: Ledger) -> None:
    """Write a whole send and the first half of the next in one write, and wait for the first's answer.

    The few KB leave in one loopback segment and the broker reads up to 64 KiB at a time, so by the time
    it answers the first send it holds the half frame in its decoder, and dies holding it. Whether or not
    it had read those bytes, the torn send must never be stored.
    """
    reader, writer = await asyncio.open_connection(*addr.rsplit(":", 1))
    stream = FramedStream(reader, writer)
    whole, torn = ledger.attempt(producer, 0), ledger.attempt(producer, 1)
    first = whole.request()
    second = encode(torn.request())
    ledger.never_complete.add(torn.uniq_key)
    try:
        writer.write(encode(first) + second[:len(second) // 2])
        await writer.drain()
        async for answer in stream.commands():
            assert (answer.opaque, answer.code) == (first.opaque, ResponseCode.SUCCESS), answer.remark
            ledger.record(whole, answer)
            return
        raise AssertionError("the broker closed the connection without answering the whole send")
    finally:
        stream.close()


async def _load_then_kill(broker: BrokerProcess, ledger: Ledger, mid_frame: bool) -> None:
    producers = [asyncio.ensure_future(_produce(broker.broker_addr, p, ledger)) for p in range(PRODUCERS)]
    try:
        await ledger.enough.wait()
        if mid_frame:
            await _tear_a_frame(broker.broker_addr, TEARING_PRODUCER, ledger)
        broker.kill()
        await asyncio.gather(*producers)
    finally:
        for task in producers:
            task.cancel()


# ------------------------------------------------------------------ what the restarted broker answers

async def _max_offset(client: RemotingClient, queue_id: int) -> int:
    answer = await client.invoke(client.request(RequestCode.GET_MAX_OFFSET,
                                                {"topic": TOPIC, "queueId": str(queue_id)}))
    return int(fields(answer)["offset"])


async def _pull_queue(client: RemotingClient, queue_id: int) -> list[MessageRecord]:
    """Every message of a queue from offset 0 to its max offset, each pull starting where the last ended."""
    high = await _max_offset(client, queue_id)
    got: list[MessageRecord] = []
    while len(got) < high:
        answer = await pull(client, TOPIC, queue_id, len(got), max_nums=PULL_BATCH)
        assert answer.code == ResponseCode.SUCCESS, f"queue {queue_id} at {len(got)}: {answer.remark}"
        got += decode_records(answer.body)
    assert [r.queue_offset for r in got] == list(range(high)), f"queue {queue_id} has holes"
    return got


async def _send_after_restart(client: RemotingClient, ledger: Ledger, producer: int) -> None:
    """One more send per queue: it must take the queue's next offset, right after what was recovered."""
    for seq in range(QUEUES):
        attempt = ledger.attempt(producer, seq)
        high = await _max_offset(client, attempt.queue_id)
        answer = await client.invoke(attempt.request())
        assert answer.code == ResponseCode.SUCCESS, answer.remark
        ledger.record(attempt, answer)
        assert ledger.acks[attempt.uniq_key].queue_offset == high


async def _look_up(client: RemotingClient, ack: Ack, record: MessageRecord) -> None:
    """The acknowledged msgId views the record, and the message's own key finds it and nothing else."""
    offset = decode_offset_msg_id(ack.msg_id).offset
    view = await client.invoke(client.request(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": str(offset)}))
    assert (view.code, view.body) == (ResponseCode.SUCCESS, record.encode()), view.remark
    query = await client.invoke(client.request(RequestCode.QUERY_MESSAGE, {
        "topic": TOPIC, "key": ack.attempt.key, "maxNum": "32", "beginTimestamp": "0",
        "endTimestamp": str(2**63 - 1)}))
    assert query.code == ResponseCode.SUCCESS, f"key {ack.attempt.key}: {query.remark}"
    assert [r.encode() for r in decode_records(query.body)] == [record.encode()], f"key {ack.attempt.key}"


async def _verify_over_wire(addr: str, ledger: Ledger) -> None:
    client = await RemotingClient.connect(addr)
    try:
        await _send_after_restart(client, ledger, LATE_PRODUCER)
        pulled = [r for queue_id in range(QUEUES) for r in await _pull_queue(client, queue_id)]
        stored = _match_ledger(pulled, ledger)
        for key, ack in ledger.acks.items():
            await _look_up(client, ack, stored[key])
    finally:
        await client.close()


# ------------------------------------------------------------------ checks shared by wire and files

def _match_ledger(stored: list[MessageRecord], ledger: Ledger) -> dict[str, MessageRecord]:
    """Every stored message is an intact, single copy of an attempted send whose frame was whole, and
    every acknowledged send is stored where its acknowledgement said; returns the records by UNIQ_KEY."""
    by_key: dict[str, MessageRecord] = {}
    for record in stored:
        key = record.uniq_key or ""
        attempt = ledger.attempts.get(key)
        assert attempt is not None, f"stored message {key!r} at {record.physical_offset} was never sent"
        assert key not in ledger.never_complete, f"{key} is stored though its frame was never complete"
        assert key not in by_key, f"{key} is stored twice"
        seen = (record.topic, record.queue_id, record.born_timestamp, record.properties, record.body)
        assert seen == (TOPIC, attempt.queue_id, attempt.born, attempt.stored_properties, attempt.body), key
        by_key[key] = record
    lost = sorted(set(ledger.acks) - set(by_key))
    assert not lost, f"{len(lost)} acknowledged messages lost, first {lost[:5]}"
    for key, ack in ledger.acks.items():
        record = by_key[key]
        assert (record.queue_id, record.queue_offset, record.offset_msg_id) == (
            ack.queue_id, ack.queue_offset, ack.msg_id), key
    return by_key


def _verify_offline(store: Path, ledger: Ledger) -> None:
    """After the clean stop: the files alone agree with the ledger, and queues and index with the
    commitlog (read through the codec, never through the broker's store engine)."""
    with StoreDirectory(store) as directory:
        assert not directory.crashed
        _match_ledger([r for r in directory.messages() if r.topic == TOPIC], ledger)
    assert_consistent(store)
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             "store", str(store)], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=CONFORMANCE_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


# ------------------------------------------------------------------ the test

@pytest.mark.parametrize("mid_frame", [False, True], ids=["between-frames", "mid-frame"])
def test_kill_9_under_load_loses_no_acknowledged_send(tmp_path: Path, mid_frame: bool) -> None:
    """``mid-frame`` also has a connection holding half a send's frame in the broker when it dies."""
    store = tmp_path / "store"
    conf = write_broker_conf(tmp_path / "broker.conf", {**BROKER_CONF, "storePathRootDir": str(store)})
    ledger = Ledger()
    with BrokerProcess(conf, tmp_path / "crashed.log") as crashed:
        run(_create_topic(crashed.broker_addr))
        run(_load_then_kill(crashed, ledger, mid_frame))
    assert (store / ABORT_FILE).exists()
    assert len(ledger.acks) >= ACKS_BEFORE_KILL
    assert len(segment_files(store / "commitlog")) >= MIN_COMMITLOG_FILES
    with BrokerProcess(conf, tmp_path / "restarted.log") as restarted:
        run(_verify_over_wire(restarted.broker_addr, ledger))
        assert restarted.stop() == 0, restarted.log_tail()
    _verify_offline(store, ledger)
