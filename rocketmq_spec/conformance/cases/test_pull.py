"""Consuming: what a pull hands back, its header and status for every position in a queue, tag
filtering, long polling, a 5.x lite pull consumer's pull, and the fast port that does not serve pulls.

Pulls carry their subscription (FLAG_SUBSCRIPTION) under a fresh consumer group, as a pull consumer's
first request does, so no heartbeat has to come first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.conformance.case import Row, case, table, waits_on_target
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Info
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, ConnectionLost, Endpoint, Wire
from rocketmq_spec.spec.behaviour import FAST_PORT_OFFSET, LITE_PULL_FORBIDDEN_REMARK
from rocketmq_spec.spec.clauses import Level
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule
from rocketmq_spec.spec.sysflag import ForbiddenType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, OFFSET_MOVED_EVENT_TOPIC

from .admin_support import group_config, properties
from .messaging import QUEUES, SUSPEND_HEADROOM, Client, Message, pull_header, subscription
from .pop_support import require_code
from .support import eventually, expect_code, expect_success, unique

FILLED = 3
"""Messages in the queue the status cases pull from."""

HELD_LONG_MS = 15_000
"""suspendTimeoutMillis of a push consumer: a pull held this long can only end early by a message."""

HELD_SHORT_MS = 1_000
"""suspendTimeoutMillis of the pull left to time out: short, to keep the run fast."""

REGISTERED_SUB_VERSION = 5
"""subVersion of the subscription a consumer's heartbeat registers in the registered-subscription cases."""

STILL_HELD = 0.5
"""Seconds a held pull must stay unanswered before the case sends the message that ends it."""

USER_PROPERTIES = {"color": "blue", "ünïcode": "välue ✓", "empty-looking": " "}

LITE_PULL_ENABLE = "litePullMessageEnable"

_JAVA_HASH = ("Java's broker compares only the tags' hashCode (ExpressionMessageFilter."
              "isMatchedByConsumeQueue); the client then filters by the tag string.")


@table("sent", [
    Row("v2", "RMQ-BRK-PULL", "A message sent with SEND_MESSAGE_V2 is pulled back exactly as sent.",
        (RequestCode.SEND_MESSAGE_V2, Message(bytes(range(256)), tags="TagA", keys=("k1", "k2"),
                                               user=USER_PROPERTIES, flag=7))),
    Row("v1", "RMQ-BRK-PULL", "A message sent with SEND_MESSAGE is pulled back exactly as sent.",
        (RequestCode.SEND_MESSAGE, Message(b"v1 body", tags="TagB", keys=("k3",), user=USER_PROPERTIES,
                                           flag=-1))),
    Row("compressed", "RMQ-BRK-PULL", "A body the producer compressed (sysFlag COMPRESSED|ZLIB) is stored "
        "and pulled back as sent, sysFlag included.",
        (RequestCode.SEND_MESSAGE_V2, Message.compressed(b"compressible " * 500, tags="TagC"))),
])
def test_pull_returns_what_was_sent(sent: tuple[int, Message], client: Client, check: Check) -> None:
    code, message = sent
    topic = client.create_topic()
    client.send(topic, message, queue_id=1, code=code)
    found = client.pulled(topic, 1).records
    check.equal("records", 1, len(found))
    record = found[0]
    check.equal("(topic, queueId, queueOffset)", (topic, 1, 0),
                (record.topic, record.queue_id, record.queue_offset))
    check.equal("body", message.body, record.body)
    check.equal("flag", message.flag, record.flag)
    check.equal("sysFlag", message.sys_flag, record.sys_flag)
    check.equal("born timestamp", message.born_timestamp, record.born_timestamp)
    check.equal("born host", client.local_host, (record.born_host.ip, record.born_host.port))
    check.equal("tags", message.tags, record.tags)
    check.equal("keys", list(message.keys), record.keys)
    check.equal("properties sent (but WAIT)", message.stored_properties,
                {k: record.properties.get(k) for k in message.stored_properties})


@case("RMQ-BRK-PULL-HEADER", "A pull from offset 1 of a 3-message queue answers nextBeginOffset 3, minOffset "
      "0, maxOffset 3 and suggestWhichBrokerId 0, with the messages at offsets 1 and 2.")
def test_pull_header(client: Client, check: Check) -> None:
    topic = client.create_topic()
    sent = client.fill(topic, FILLED)
    pulled = client.pulled(topic, 0, 1)
    expected = {"nextBeginOffset": FILLED, "minOffset": 0, "maxOffset": FILLED, "suggestWhichBrokerId": 0}
    if client.follows(Rule.PULL_SYS_FLAGS):
        expected |= {"topicSysFlag": 0, "groupSysFlag": 0}
    check.equal("header", expected, pulled.header)
    check.equal("queue offsets", [1, 2], [r.queue_offset for r in pulled.records])
    check.equal("bodies", [m.body for m in sent[1:]], [r.body for r in pulled.records])


@dataclass(frozen=True)
class Position:
    """Where a pull starts, and what Java answers there (DefaultMessageStore.getMessage)."""

    queue_id: int
    offset: int
    code: int
    next_begin: int
    status: str


_EMPTY = 1
"""The queue of the status cases that holds nothing; queue 0 holds FILLED messages."""

POSITIONS = {
    "found": Position(0, 0, ResponseCode.SUCCESS, FILLED, "FOUND"),
    "at-max-offset": Position(0, FILLED, ResponseCode.PULL_NOT_FOUND, FILLED, "OFFSET_OVERFLOW_ONE"),
    "past-max-offset": Position(0, FILLED + 5, ResponseCode.PULL_OFFSET_MOVED, FILLED,
                                "OFFSET_OVERFLOW_BADLY"),
    "before-min-offset": Position(0, -1, ResponseCode.PULL_OFFSET_MOVED, 0, "OFFSET_TOO_SMALL"),
    "empty-queue-at-0": Position(_EMPTY, 0, ResponseCode.PULL_NOT_FOUND, 0, "NO_MESSAGE_IN_QUEUE"),
    "empty-queue-past-0": Position(_EMPTY, 2, ResponseCode.PULL_OFFSET_MOVED, 0, "NO_MESSAGE_IN_QUEUE"),
}


def _pull_at(client: Client, position: Position) -> tuple[int, dict[str, int], str | None]:
    topic = client.create_topic()
    client.fill(topic, FILLED)
    response = client.pull(topic, position.queue_id, position.offset)
    return response.code, pull_header(response), response.remark


@table("position", [
    Row(name, "RMQ-BRK-PULL-STATUS", f"A pull at queue {p.queue_id} offset {p.offset} is answered {p.code} "
        f"with nextBeginOffset {p.next_begin}.", p) for name, p in POSITIONS.items()
])
def test_pull_status(position: Position, client: Client, check: Check) -> None:
    code, header, _ = _pull_at(client, position)
    check.equal("response code", position.code, code)
    check.equal("nextBeginOffset", position.next_begin, header["nextBeginOffset"])
    check.equal("(minOffset, maxOffset)", (0, 0 if position.queue_id == _EMPTY else FILLED),
                (header["minOffset"], header["maxOffset"]))


@table("position", [
    Row(name, "RMQ-BRK-PULL-REMARK", f"A pull at queue {p.queue_id} offset {p.offset} has remark "
        f"{p.status}.", p) for name, p in POSITIONS.items()
])
def test_pull_remark(position: Position, client: Client, check: Check) -> None:
    check.equal("remark", position.status, _pull_at(client, position)[2])


@table("target", [
    Row("unknown-topic", "RMQ-BRK-PULL-CHECKS", "A pull of a topic the broker does not have is answered 17.",
        (False, 0, ResponseCode.TOPIC_NOT_EXIST)),
    Row("queue-out-of-range", "RMQ-BRK-PULL-CHECKS", "A pull of queue 4 of a 4-queue topic is answered 1 "
        "(29 INVALID_PARAMETER from 5.3.2).", (True, 4, ResponseCode.SYSTEM_ERROR)),
    Row("queue-negative", "RMQ-BRK-PULL-CHECKS", "A pull of queue -1 is answered 1 (29 INVALID_PARAMETER "
        "from 5.3.2).", (True, -1, ResponseCode.SYSTEM_ERROR)),
])
def test_pull_refused(target: tuple[bool, int, int], client: Client, check: Check) -> None:
    created, queue_id, code = target
    if (queue_id >= QUEUES or queue_id < 0) and client.follows(Rule.BAD_QUEUE_INVALID_PARAMETER):
        code = ResponseCode.INVALID_PARAMETER
    topic = client.create_topic() if created else unique("absent")
    expect_code(check, "pull", client.pull(topic, queue_id, 0), code)


@case("RMQ-BRK-LONG-POLL", "A suspended pull on an empty queue is answered with the message sent meanwhile, "
      "well before its 15 s hold time.")
def test_long_poll_woken_by_message(broker: Server, client: Client, wire: Wire, check: Check) -> None:
    topic = client.create_topic()
    request = client.pull_command(topic, 0, 0, suspend_ms=HELD_LONG_MS)
    client.connection.send(request)
    check.equal("answer before any message arrived", None, client.connection.response_to(request.opaque,
                                                                                        STILL_HELD))
    message = Message(b"wakes the pull")
    Client(wire.connect(broker.endpoint), check).send(topic, message)
    response = client.connection.response_to(request.opaque, SUSPEND_HEADROOM + RESPONSE_TIMEOUT)
    check.that("answered after the message arrived", response is not None, expected="an answer",
               actual=f"none within {SUSPEND_HEADROOM + RESPONSE_TIMEOUT} s")
    assert response is not None
    expect_success(check, "held pull", response)
    check.equal("bodies", [message.body], [r.body for r in decode_records(response.body)])


@case("RMQ-BRK-LONG-POLL", "A suspended pull that finds nothing is answered 19 PULL_NOT_FOUND after its "
      "suspendTimeoutMillis (1 s here).")
def test_long_poll_times_out(client: Client, check: Check) -> None:
    topic = client.create_topic()
    request = client.pull_command(topic, 0, 0, suspend_ms=HELD_SHORT_MS)
    client.connection.send(request)
    bound = HELD_SHORT_MS / 1000 + SUSPEND_HEADROOM + RESPONSE_TIMEOUT
    response = client.connection.response_to(request.opaque, bound)
    check.that("answered after the hold time", response is not None, expected="an answer",
               actual=f"none within {bound} s")
    assert response is not None
    expect_code(check, "held pull", response, ResponseCode.PULL_NOT_FOUND)


@case("RMQ-BRK-LONG-POLL", "A message wakes a pull held on its queue even after another pull held on the "
      "same queue has timed out: it is answered with the message well before its own 15 s hold time.")
def test_long_poll_woken_after_another_expired(broker: Server, client: Client, wire: Wire,
                                               check: Check) -> None:
    topic = client.create_topic()
    short = Client(wire.connect(broker.endpoint), check)
    held = client.pull_command(topic, 0, 0, suspend_ms=HELD_LONG_MS)
    client.connection.send(held)
    expired = short.pull(topic, 0, 0, suspend_ms=HELD_SHORT_MS)
    expect_code(check, "the short pull", expired, ResponseCode.PULL_NOT_FOUND)
    message = Message(b"wakes the pull left")
    Client(wire.connect(broker.endpoint), check).send(topic, message)
    response = client.connection.response_to(held.opaque, SUSPEND_HEADROOM + RESPONSE_TIMEOUT)
    check.that("answered after the message arrived", response is not None, expected="an answer",
               actual=f"none within {SUSPEND_HEADROOM + RESPONSE_TIMEOUT} s")
    if response is not None:
        expect_success(check, "held pull", response)
        check.equal("bodies", [message.body], [r.body for r in decode_records(response.body)])


@case("RMQ-BRK-LONG-POLL", "A pull held on a topic that is deleted before the hold ends is answered 17 "
      "TOPIC_NOT_EXIST: waking it runs the pull's checks again.")
@waits_on_target
def test_held_pull_of_a_deleted_topic(client: Client, check: Check) -> None:
    """The topic is deleted only once the pull is seen held. The queue holds one message, so the pull at
    offset 1 finds nothing, and it commits offset 1 (FLAG_COMMIT_OFFSET) as a push consumer's next pull
    does; QUERY_CONSUMER_OFFSET answers 1 only once the broker has committed it, which Java does in the
    pull's own thread just before holding it (5.3.3 DefaultPullMessageResultHandler.handle: tryCommitOffset
    line 111, suspendPullRequest line 186; 4.9.7 PullMessageProcessor: just after, lines 421 and 468).

    Sent back to back, the delete raced the pull across the broker's thread pools: it overtook the pull (a
    plain pull of an unknown topic, answered 17 at once), or, on a 5.x broker, it landed between the pull's
    topic check and ``handle``, whose second read of the topic config (lines 91-92) throws; the exception
    ends the future PullMessageProcessor answers through (lines 559-582), and the pull is never answered."""
    topic, group = client.create_topic(), unique("cg")
    client.send(topic, Message(b"consumed"))
    client.settle()
    held = client.pull_command(topic, 0, 1, group=group, suspend_ms=HELD_SHORT_MS, commit_offset=1)
    client.connection.send(held)
    queue = {"consumerGroup": group, "topic": topic, "queueId": 0}
    # bounded as an answer is: the pull's thread pool may be that slow to reach the hold on a loaded machine
    committed = eventually(lambda: client.call(RequestCode.QUERY_CONSUMER_OFFSET, queue),
                           lambda answer: (answer.ext_fields or {}).get("offset") == "1", RESPONSE_TIMEOUT)
    check.that("the held pull's commitOffset 1 read back before the delete",
               (committed.ext_fields or {}).get("offset") == "1", expected="offset 1",
               actual=f"{committed.code} {committed.ext_fields}")
    expect_success(check, "DELETE_TOPIC_IN_BROKER", client.call(RequestCode.DELETE_TOPIC_IN_BROKER,
                                                                {"topic": topic}))
    response = client.connection.response_to(held.opaque, SUSPEND_HEADROOM + RESPONSE_TIMEOUT)
    check.that("held pull answered", response is not None, expected="an answer", actual="none")
    if response is not None:
        expect_code(check, "held pull of the deleted topic", response, ResponseCode.TOPIC_NOT_EXIST)


@table("pulled_version", [
    Row("older-than-registered", "RMQ-BRK-PULL-SUBSCRIPTION", "A pull without FLAG_SUBSCRIPTION naming a "
        "subVersion older than the heartbeat's is served by the registered subscription.", 4),
    Row("same-as-registered", "RMQ-BRK-PULL-SUBSCRIPTION", "A pull without FLAG_SUBSCRIPTION naming the "
        "heartbeat's own subVersion (what a client's pulls carry) is served by the registered subscription.",
        REGISTERED_SUB_VERSION),
    Row("newer-than-registered", "RMQ-BRK-PULL-SUBSCRIPTION", "A pull without FLAG_SUBSCRIPTION naming a "
        "subVersion newer than the heartbeat's is answered 25 SUBSCRIPTION_NOT_LATEST.", 6),
])
def test_pull_by_registered_subscription(pulled_version: int, client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    client.send(topic, Message(b"registered"))
    consumer = subscription(group, topic)
    consumer["subscriptionDataSet"][0]["subVersion"] = REGISTERED_SUB_VERSION
    expect_success(check, "HEART_BEAT", client.heartbeat(unique("client"), [consumer]))
    response = client.call(RequestCode.PULL_MESSAGE, _registered_pull(group, topic, pulled_version))
    if pulled_version > REGISTERED_SUB_VERSION:
        expect_code(check, "pull of a newer subscription", response, ResponseCode.SUBSCRIPTION_NOT_LATEST)
    else:
        expect_success(check, "pull of a subscription not newer than the registered one", response)


@case("RMQ-BRK-PULL-SUBSCRIPTION", "A broadcasting consumer of a group whose consumeBroadcastEnable is false "
      "pulling by its registered subscription is answered 16 NO_PERMISSION.")
def test_broadcast_refused_to_a_group_without_it(client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    expect_success(check, "create group", client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {},
                                                      group_config(group, broadcast=False)))
    consumer = {**subscription(group, topic), "messageModel": "BROADCASTING"}
    expect_success(check, "HEART_BEAT", client.heartbeat(unique("client"), [consumer]))
    response = client.call(RequestCode.PULL_MESSAGE, _registered_pull(group, topic, 0))
    expect_code(check, "broadcast pull", response, ResponseCode.NO_PERMISSION)


def _registered_pull(group: str, topic: str, sub_version: int) -> dict[str, Any]:
    """A pull header without FLAG_SUBSCRIPTION: the broker filters by the registered subscription."""
    return {"consumerGroup": group, "topic": topic, "queueId": 0, "queueOffset": 0, "maxMsgNums": 32,
            "sysFlag": 0, "commitOffset": 0, "suspendTimeoutMillis": 0, "subscription": "*",
            "subVersion": sub_version, "expressionType": "TAG"}


FILTERED_TAGS = ("A", "B", "C", None, "Aa", "BB")
"""Tags of the filtered queue's messages, in order; "Aa" and "BB" share a Java hashCode."""


@table("expression", [
    Row("single-tag", "RMQ-BRK-TAG-FILTER", "Subscription 'A' returns only the message tagged A.",
        ("A", ["A"])),
    Row("or", "RMQ-BRK-TAG-FILTER", "Subscription 'A || C' returns the messages tagged A and C.",
        ("A || C", ["A", "C"])),
    Row("all", "RMQ-BRK-TAG-FILTER", "Subscription '*' returns every message, untagged ones included.",
        ("*", list(FILTERED_TAGS))),
    Row("hash-match", "RMQ-BRK-TAG-FILTER", "Subscription 'Aa' also returns the message tagged BB (same "
        "hashCode): the broker may filter by hash alone.", ("Aa", ["Aa", "BB"]), level=Level.MAY,
        java_note=_JAVA_HASH),
])
def test_tag_filter(expression: tuple[str, list[str | None]], client: Client, check: Check) -> None:
    text, expected = expression
    topic = client.create_topic()
    for tags in FILTERED_TAGS:
        client.send(topic, Message(f"tagged {tags}".encode(), tags=tags))
    pulled = client.pulled(topic, expression=text)
    check.equal("tags of the pulled messages", expected, [r.tags for r in pulled.records])
    check.equal("nextBeginOffset: past every entry scanned", len(FILTERED_TAGS),
                pulled.header["nextBeginOffset"])


@case("RMQ-BRK-FAST-PORT", "On listenPort - 2 the broker serves requests but answers PULL_MESSAGE and "
      "LITE_PULL_MESSAGE with 3.")
def test_fast_port_refuses_pull(broker: Server, wire: Wire, check: Check) -> None:
    fast = Endpoint(broker.endpoint.host, broker.endpoint.port - FAST_PORT_OFFSET)
    try:
        connection = wire.connect(fast)
    except ConnectionLost as exc:
        raise Info(f"no fast port at {fast}: {exc}") from None
    client = Client(connection, check)
    expect_success(check, "a broker request on the fast port", broker.ping(connection))
    expect_code(check, "PULL_MESSAGE on the fast port", client.pull(DEFAULT_TOPIC, 0, 0),
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
    expect_code(check, "LITE_PULL_MESSAGE on the fast port", client.pull(DEFAULT_TOPIC, 0, 0, lite=True),
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED)


@case("RMQ-BRK-LITE-PULL", "A LITE_PULL_MESSAGE from offset 1 of a 3-message queue is answered as the "
      "PULL_MESSAGE beside it (code, remark, header, records); with litePullMessageEnable false (set by "
      "UPDATE_BROKER_CONFIG, restored afterwards) it is answered 16 NO_PERMISSION, forbiddenType 1 and the "
      "broker's remark (5.0.0+).")
def test_lite_pull_answers_as_pull(client: Client, check: Check) -> None:
    require_code(client, RequestCode.LITE_PULL_MESSAGE, "RMQ-BRK-LITE-PULL")
    topic = client.create_topic()
    client.fill(topic, FILLED)
    settings = properties(client.call(RequestCode.GET_BROKER_CONFIG, {}).body)
    forbidden = LITE_PULL_FORBIDDEN_REMARK.format(broker_ip1=settings.get("brokerIP1"))
    if settings.get(LITE_PULL_ENABLE, "true") != "true":  # the target's own setting: judged as it is
        _expect_forbidden(check, client.pull(topic, 0, 1, lite=True), forbidden)
        return
    pulled, lite = client.pull(topic, 0, 1), client.pull(topic, 0, 1, lite=True)
    check.equal("code", pulled.code, lite.code)
    check.remark("remark", pulled.remark, lite.remark)
    check.equal("header", pull_header(pulled), pull_header(lite))
    check.equal("(queue offset, body) of the records",
                [(r.queue_offset, r.body) for r in decode_records(pulled.body)],
                [(r.queue_offset, r.body) for r in decode_records(lite.body)])
    try:
        switched = _enable_lite_pull(client, False)
        # a step the case needs, not the lite pull itself: a refusal is charged to the update's own clause
        check.that(f"switching {LITE_PULL_ENABLE} off at run time", switched.code == ResponseCode.SUCCESS,
                   expected=ResponseCode.SUCCESS, actual=f"{switched.code} {switched.remark or ''}".strip(),
                   clause="RMQ-ADMIN-UPDATE-CONFIG")
        _expect_forbidden(check, client.pull(topic, 0, 1, lite=True), forbidden)
        expect_success(check, "PULL_MESSAGE beside it", client.pull(topic, 0, 1))
    finally:
        _enable_lite_pull(client, True)


def _enable_lite_pull(client: Client, enabled: bool) -> RemotingCommand:
    """UPDATE_BROKER_CONFIG of litePullMessageEnable (Java applies it at once)."""
    setting = f"{LITE_PULL_ENABLE}={str(enabled).lower()}\n"
    return client.call(RequestCode.UPDATE_BROKER_CONFIG, {}, setting.encode())


def _expect_forbidden(check: Check, response: RemotingCommand, remark: str) -> None:
    expect_code(check, f"lite pull ({LITE_PULL_ENABLE}=false)", response, ResponseCode.NO_PERMISSION)
    check.remark("remark", remark, response.remark)
    check.equal("forbiddenType", str(int(ForbiddenType.BROKER_FORBIDDEN)),
                (response.ext_fields or {}).get("forbiddenType"))




@table("requested", [
    Row("past-the-end", "RMQ-BRK-OFFSET-MOVED-EVENT", "A pull past a 3-message queue's end (offset 9) leaves "
        "an OFFSET_MOVED_EVENT message naming the group, the queue, offsetRequest 9 and the offsetNew "
        "answered.", 9),
    Row("empty-queue", "RMQ-BRK-OFFSET-MOVED-EVENT", "A pull at offset 4 of a queue nothing was written to "
        "leaves an OFFSET_MOVED_EVENT message with offsetRequest 4.", 4),
])
def test_offset_moved_event(requested: int, client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    queue_id = 0 if requested == 9 else 1
    if requested == 9:
        client.fill(topic, 3)
    start = client.answer("GET_MAX_OFFSET", RequestCode.GET_MAX_OFFSET,
                          {"topic": OFFSET_MOVED_EVENT_TOPIC, "queueId": 0})["offset"]
    moved = expect_code(check, "pull", client.pull(topic, queue_id, requested, group=group),
                        ResponseCode.PULL_OFFSET_MOVED)
    answered = pull_header(moved)["nextBeginOffset"]
    events = [r for r in _records_from(client, OFFSET_MOVED_EVENT_TOPIC, start) if r.tags == group]
    check.equal("(TAGS, KEYS) of the events of this group", [(group, [group])],
                [(r.tags, r.keys) for r in events])
    bodies = [fastjson.loads(r.body) for r in events]
    queues = [body.pop("messageQueue", {}) for body in bodies]
    check.equal("event body", [{"consumerGroup": group, "offsetRequest": requested, "offsetNew": answered}],
                bodies)
    check.equal("event queue (topic, queueId, has brokerName)", [(topic, queue_id, True)],
                [(q.get("topic"), q.get("queueId"), bool(q.get("brokerName"))) for q in queues])


def _records_from(client: Client, topic: str, offset: int) -> list[MessageRecord]:
    records: list[MessageRecord] = []
    while (response := client.pull(topic, 0, offset)).code == ResponseCode.SUCCESS:
        records.extend(decode_records(response.body))
        offset = pull_header(response)["nextBeginOffset"]
    return records
