"""The lanes equal the general path: the same store bytes and the same answers.

``MessageStore.put_plain`` (what the lane calls) against ``put_message`` on generated producer messages:
two stores fed the same messages on the same clock end up byte for byte the same (commitlog, consume
queues, index), and each plain put reports the offsets and msgId the general put reports. Over the wire,
a broker with lanes and one without answer every kind of send and pull request the same way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketmq_spec.codec.store import HostPort, decode_records
from rocketmq_spec.fuzz.profiles import SLOW_DATA
from rocketmq_spec.fuzz.strategies.properties import property_maps
from rocketmq_spec.reference_broker.broker.pull import PullHandlers, PullPlan
from rocketmq_spec.reference_broker.broker.pull_lane import PullLane
from rocketmq_spec.reference_broker.broker.send_lane import SendLane
from rocketmq_spec.reference_broker.broker.send_plan import SendPlan, SendPlanner
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.server import RemotingServer
from rocketmq_spec.reference_broker.small_store import small_config
from rocketmq_spec.reference_broker.store import InnerMessage, MessageStore
from rocketmq_spec.reference_broker.store import puts as puts_module
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.sysflag import MessageSysFlag, TransactionType
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC
from tests.messaging_support import pull, send
from tests.test_store_engine_helpers import tiny_config

HOSTS = (HostPort("127.0.0.1", 40666), HostPort("::1", 40667))
SMALL_INDEX = {"max_hash_slot_num": 64, "max_index_num": 512}
"""An index file of a few kilobytes instead of Java's 420 MB default, which each example would read twice to
compare; 64 slots for up to 40 messages of up to three keys also make the hash chains the index writes."""


@st.composite
def producer_messages(draw: st.DrawFn) -> InnerMessage:
    """Producer messages of every kind but a delayed one, which the delay scheduler's thread delivers on
    its own clock (the lane leaves those to the general path, which the wire test below covers)."""
    props = draw(property_maps(max_size=4))
    for key, values in ((PropertyKey.UNIQ_KEY, st.text("0123456789ABCDEF", min_size=1, max_size=32)),
                        (PropertyKey.KEYS, st.sampled_from(["k1", "k1 k2", " k3 ", "é"])),
                        (PropertyKey.TAGS, st.sampled_from(["TagA", "TagB", "é"])),
                        (PropertyKey.WAIT, st.sampled_from(["true", "false", "TRUE"])),
                        (PropertyKey.DELAY, st.sampled_from(["0", "-1", "x"]))):
        if draw(st.booleans()):
            props[key] = draw(values)
    sys_flag = draw(st.sampled_from([0, 0, 0, int(MessageSysFlag.COMPRESSED), int(TransactionType.COMMIT),
                                     int(TransactionType.PREPARED)]))
    return InnerMessage.from_wire(
        topic=draw(st.sampled_from(["TopicA", "TopicB", "%RETRY%g", "T" * 130])),
        queue_id=draw(st.integers(0, 2)),
        body=draw(st.binary(max_size=300)), properties=encode_properties(props),
        born_timestamp=draw(st.integers(0, 1 << 42)), born_host=draw(st.sampled_from(HOSTS)),
        flag=draw(st.integers(-5, 5)), sys_flag=sys_flag, reconsume_times=draw(st.integers(0, 3)))


def _files(root: Path) -> dict[str, bytes]:
    """Every store file's content, the index files by their order rather than their (clock) names."""
    files = {}
    for part in ("commitlog", "consumequeue"):
        files.update({str(p.relative_to(root)): p.read_bytes() for p in sorted((root / part).rglob("*"))
                      if p.is_file()})
    files.update({f"index/{n}": p.read_bytes() for n, p in enumerate(sorted((root / "index").glob("*")))})
    return files


@settings(max_examples=25, suppress_health_check=[*SLOW_DATA, HealthCheck.function_scoped_fixture])
@given(st.lists(producer_messages(), min_size=1, max_size=40))
def test_plain_put_equals_general_put(tmp_path_factory: pytest.TempPathFactory,
                                      monkeypatch: pytest.MonkeyPatch, messages: list[InnerMessage]) -> None:
    clock = itertools.count(1_700_000_000_000, 7)
    stamps: list[int] = []
    monkeypatch.setattr(puts_module, "now_ms", lambda: stamps[-1])
    roots = [tmp_path_factory.mktemp("lane"), tmp_path_factory.mktemp("general")]
    configs = [tiny_config(root, max_message_size=600, **SMALL_INDEX) for root in roots]
    taken = 0
    with MessageStore(configs[0]) as lane, MessageStore(configs[1]) as general:
        for message in messages:
            stamps.append(next(clock))
            plain = lane.put_plain(message)
            expected = general.put_message(message)
            if plain is None:
                assert lane.put_message(message) == expected
                continue
            taken += 1
            assert expected.ok
            assert (plain.physical_offset, plain.queue_offset, plain.msg_id) == (
                expected.phys_offset, expected.queue_offset, expected.msg_id)
            assert decode_offset_msg_id(plain.msg_id).offset == plain.physical_offset
    assert _files(roots[0]) == _files(roots[1])


def test_plain_put_takes_an_ordinary_message(tmp_path: Path) -> None:
    message = InnerMessage.from_wire(topic="TopicA", queue_id=0, body=b"x",
                                     properties="TAGS\x01t\x02WAIT\x01true", born_timestamp=1,
                                     born_host=HOSTS[0])
    with MessageStore(tiny_config(tmp_path)) as store:
        assert store.put_plain(message) is None  # a queue's first message makes the queue: the general put
        store.put_message(message)
        assert store.put_plain(message) is not None


# ---------------------------------------------------------------- over the wire

REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("Lane", {}),
    ("Lane", {"queue_id": 3}),
    ("Lane", {"queue_id": 9}),
    ("Lane", {"sys_flag": int(TransactionType.PREPARED)}),
    ("Lane", {"batch": True}),
    ("Lane", {"v2": False}),
    ("%RETRY%cg", {}),
    ("Missing", {"default_topic": "Nope"}),
    ("bad topic!", {}),
    (SCHEDULE_TOPIC, {}),
]
PROPERTIES = [{"TAGS": "t", "WAIT": "true"}, {"DELAY": "1"}, {"TRAN_MSG": "true"},
              {"WAIT": "false", "KEYS": "a b"}]
PULLS: list[tuple[str, int, int, dict[str, Any]]] = [
    ("Lane", 0, 0, {}),
    ("Lane", 0, 1, {"max_nums": 1}),
    ("Lane", 0, 0, {"expression": "t"}),
    ("Lane", 0, 0, {"expression": "nothing || else"}),
    ("Lane", 0, 0, {"commit_offset": 1}),
    ("Lane", 0, 1000, {}),
    ("Lane", 1, 0, {"suspend_ms": 50}),
    ("Lane", 3, 0, {}),
    ("Lane", 0, 2, {}),
    ("Lane", 0, 3, {}),
    ("Lane", 0, 3, {"suspend_ms": 50}),
    ("Lane", 0, 0, {"expression": None}),
    ("Lane", 9, 0, {}),
    ("Missing", 0, 0, {}),
    ("%RETRY%cg", 0, 0, {"group": "other"}),
]
"""Pulls the lane answers (found, filtered, not found without a wait, committing) and ones it leaves to
the general path (parked, offset moved, refused)."""


def _record_fields(body: bytes | None) -> list[tuple[Any, ...]]:
    """What a pull body carries that does not depend on the broker's clock or ports."""
    return [(r.queue_id, r.queue_offset, r.physical_offset, r.body, r.topic, r.properties_text)
            for r in decode_records(body)]


async def _answers(root: Path, lane: bool) -> list[tuple[Any, ...]]:
    answers: list[tuple[Any, ...]] = []
    async with EmbeddedRocketMQ(root, broker_config=small_config(root)) as mq:
        client = await RemotingClient.connect(mq.broker_addr)
        try:
            for topic, options in REQUESTS:
                for properties in PROPERTIES:
                    answer = await send(client, topic, b"body", properties, **options)
                    fields = dict(answer.ext_fields or {})
                    if "msgId" in fields:  # the store host differs between the two brokers: keep the offset
                        fields["msgId"] = str(decode_offset_msg_id(fields["msgId"]).offset)
                    remark = re.sub(r"Producer: \S+", "Producer: (peer)", answer.remark or "")
                    answers.append((answer.code, remark, fields))
            for topic, queue_id, offset, options in PULLS:
                answer = await pull(client, topic, queue_id, offset, **options)
                remark = re.sub(r"consumer:\[/\S+\]", "consumer:[(peer)]", answer.remark or "")
                fields = dict(answer.ext_fields or {})
                answers.append((answer.code, remark, fields, _record_fields(answer.body)))
            assert mq.broker is not None
            answers.append(("pull offsets", mq.broker.offsets.pulled))  # what queryPullOffset reports
        finally:
            await client.close()
    assert (mq.broker is not None and mq.broker.server.lane is not None) == lane
    return answers


def test_lanes_answer_as_the_general_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_lane = asyncio.run(_answers(tmp_path / "lane", lane=True))
    monkeypatch.setattr(RemotingServer, "use_lane", lambda self, lane: None)
    without = asyncio.run(_answers(tmp_path / "general", lane=False))
    assert with_lane == without


def _count_takes(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many requests each lane answered itself."""
    taken: Counter[str] = Counter()
    for lane in (SendLane, PullLane):
        def counted(self: Any, *args: Any, take: Any = lane.take, name: str = lane.__name__) -> bool:
            took: bool = take(self, *args)
            taken[name] += took
            return took
        monkeypatch.setattr(lane, "take", counted)
    return taken


def _add_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new rule in each plan: sends with KEYS go to queue 1, and every pull suggests broker 7."""
    send_plan, pull_plan = SendPlanner.plan, PullHandlers.plan

    def moved(self: SendPlanner, header: Any, peer: str, body: bytes, client_version: int | None) -> SendPlan:
        planned = send_plan(self, header, peer, body, client_version)
        if PropertyKey.KEYS not in planned.message.properties or planned.message.topic != "Lane":
            return planned
        return planned._replace(message=dataclasses.replace(planned.message, queue_id=1), queue_id=1)

    def suggested(self: PullHandlers, peer: str, header: Any) -> PullPlan:
        planned = pull_plan(self, peer, header)
        return planned._replace(values={**planned.values, "suggestWhichBrokerId": 7})

    monkeypatch.setattr(SendPlanner, "plan", moved)
    monkeypatch.setattr(PullHandlers, "plan", suggested)


def test_a_rule_added_to_a_plan_holds_on_both_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A send or pull is decided by one plan whichever route answers it: a rule added to the plan shows in
    the lanes' answers (which the lanes must have given) exactly as in the general path's."""
    _add_rules(monkeypatch)
    taken = _count_takes(monkeypatch)
    with_lane = asyncio.run(_answers(tmp_path / "lane", lane=True))
    assert taken["SendLane"] > 0 and taken["PullLane"] > 0
    monkeypatch.setattr(RemotingServer, "use_lane", lambda self, lane: None)
    without = asyncio.run(_answers(tmp_path / "general", lane=False))
    assert with_lane == without
    sends = len(REQUESTS) * len(PROPERTIES)
    assert any(answer[2].get("queueId") == "1" for answer in with_lane[:sends])
    assert any(answer[2].get("suggestWhichBrokerId") == "7" for answer in with_lane[sends:sends + len(PULLS)])
