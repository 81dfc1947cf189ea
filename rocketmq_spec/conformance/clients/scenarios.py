"""The scenarios the client cases run, each once per session however many cases judge it.

A scenario is a contract scenario with settings and a script for the relay. Scripts follow the Java
client's observable reactions: one refused send for a retry, every send refused for the retry bound, a
late answer inside sendMsgTimeout, a dropped connection, a busy broker, a server going away, a route the name
server denies, a moved pull offset and a group the broker has no offset for.
"""

from __future__ import annotations

from rocketmq_spec.conformance.clients import script as s
from rocketmq_spec.conformance.clients.judge import Scenario
from rocketmq_spec.conformance.clients.recording import Role
from rocketmq_spec.spec.client import COMPRESS_OVER, HEARTBEAT_INTERVAL, PERIOD_SLACK_MS
from rocketmq_spec.spec.client_grpc import GRPC_HEARTBEAT_INTERVAL_MS
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.shutdown import GO_AWAY_REMARK

SEND = RequestCode.SEND_MESSAGE_V2
PULL = RequestCode.PULL_MESSAGE
SENDS = (SEND, RequestCode.SEND_MESSAGE)
"""The two codes a client may send a message with: Java's V2 (short field names) and the long-named one
the C++ and Go clients use; a script acts on whichever the client sends."""


def _answer_sends(answer_code: int, *, remark: str | None = None,
                  times: int | None = 1) -> tuple[s.Rule, ...]:
    return tuple(s.answer(code, answer_code, remark=remark, times=times) for code in SENDS)

PRODUCER_STAYS_S = (HEARTBEAT_INTERVAL.value + PERIOD_SLACK_MS) // 1000
"""How long ``produce`` keeps the producer started after its sends: a whole heartbeat interval and slack.
A producer heartbeats only to brokers a route gave it, and it fetches the route with its first send, so
its first heartbeat is the next tick of the schedule (Java: 1 s after start, then every 30 s)."""
PRODUCE = Scenario("produce", "produce", idle_s=PRODUCER_STAYS_S, timeout_s=PRODUCER_STAYS_S + 60)
"""Sends, then a heartbeat interval started: the run every producer session case is judged from. The budget
is generous because a driver measures its stay from its own start, and the budget counts from its launch:
a JVM on a loaded machine took 46 s to send its first request."""
PRODUCE_KEYS = Scenario("produce-keys", "produce", count=16)
"""Sixteen sends by one producer, for the UNIQ_KEY's letters: a UNIQ_KEY ends in a counter incremented per
message, and of sixteen consecutive values one always has a letter (a-f) for its last hex digit. A client
that writes the key's tail in lower case (Go v2's ``CreateUniqID``) is so seen in every run, not only in
those where its time field happens to hold a letter."""
PRODUCE_ONEWAY = Scenario("produce-oneway", "produce-oneway")
PRODUCE_BATCH = Scenario("produce-batch", "produce-batch")
PRODUCE_LARGE = Scenario("produce-large", "produce", count=2, body_size=COMPRESS_OVER.value + 904)
PRODUCE_SMALL = Scenario("produce-small", "produce", count=1, body_size=COMPRESS_OVER.value - 1)
PRODUCE_TRANSACTION = Scenario("produce-transaction", "produce-transaction", count=1)
TRANSACTION_CHECKED = Scenario(
    "transaction-check-back",
    "produce-transaction",
    count=1,
    tx_answer="unknown",
    tx_check_answer="commit",
    idle_s=8,
    timeout_s=30,
)
"""A local transaction left unknown, so that the broker (checking back after 1 s) asks the client."""
PRODUCE_SIGNED = Scenario("produce-signed", "produce", count=2, credentials=("RocketMQ", "12345678"))

SEND_ERROR_ONCE = Scenario(
    "send-system-error-once",
    "produce",
    count=2,
    rules=tuple(s.answer(code, ResponseCode.SYSTEM_ERROR, remark="scripted", skip=1) for code in SENDS),
)
"""The second send refused once. Java retries only while its 3 s sendMsgTimeout, counted from the call,
has time left, and a cold client's first send also looks up the route and connects: on a loaded machine
that used up the 3 s, and whether the refused send was retried became a verdict of the machine's load."""
SEND_ERROR_ALWAYS = Scenario(
    "send-system-error-always",
    "produce",
    count=1,
    rules=_answer_sends(ResponseCode.SYSTEM_ERROR, times=None),
)
SEND_ILLEGAL = Scenario(
    "send-message-illegal",
    "produce",
    count=1,
    rules=_answer_sends(ResponseCode.MESSAGE_ILLEGAL, remark="scripted"),
)
SEND_SLOW = Scenario("send-slow-answer", "produce", count=2,
                     rules=tuple(s.delay(code, 1.5, skip=1) for code in SENDS))
"""The second send answered 1.5 s late, inside Java's 3 s sendMsgTimeout. Not the first: that timeout
counts from the call, and a client's first send also looks up the route and opens the broker connection,
which on a loaded machine took a cold JVM past the 3 s with the delay, a verdict of the machine's load."""
SEND_DROPPED = Scenario("send-connection-dropped", "produce", count=3,
                        rules=tuple(s.drop(code) for code in SENDS))
ROUTE_DENIED = Scenario(
    "route-topic-not-exist",
    "produce",
    count=1,
    rules=(
        s.answer(
            RequestCode.GET_ROUTEINFO_BY_TOPIC,
            ResponseCode.TOPIC_NOT_EXIST,
            role=Role.NAMESRV,
            times=None,
            where={"topic": s.TOPIC_PLACEHOLDER},
            remark="scripted: no route",
        ),
    ),
)

SEND_BUSY = Scenario(
    "send-system-busy",
    "produce",
    count=1,
    rules=_answer_sends(ResponseCode.SYSTEM_BUSY, remark="scripted: busy"),
)
"""The first send refused as a flow-controlling broker refuses it; the next one is the broker's."""
SEND_GO_AWAY = Scenario(
    "send-go-away",
    "produce",
    count=1,
    rules=_answer_sends(ResponseCode.GO_AWAY, remark=GO_AWAY_REMARK),
)
"""The first send answered as a gracefully stopping server answers it; the next one is the broker's."""

CONSUME = Scenario("consume-push", "consume-push", prefill=3, timeout_s=40)
OFFSET_MOVED_TO = 1
OFFSET_MOVED = Scenario(
    "pull-offset-moved",
    "consume-push",
    prefill=3,
    count=3,
    timeout_s=45,
    rules=(
        s.answer(
            PULL,
            ResponseCode.PULL_OFFSET_MOVED,
            where={"queueOffset": "0", "queueId": "0"},
            ext_fields={
                "suggestWhichBrokerId": "0",
                "nextBeginOffset": str(OFFSET_MOVED_TO),
                "minOffset": str(OFFSET_MOVED_TO),
                "maxOffset": str(OFFSET_MOVED_TO),
            },
        ),
    ),
)
NO_OFFSET = Scenario(
    "group-without-offset",
    "consume-push",
    prefill=3,
    count=1,
    timeout_s=45,
    rules=(
        s.answer(
            RequestCode.QUERY_CONSUMER_OFFSET,
            ResponseCode.QUERY_NOT_FOUND,
            times=None,
            remark="scripted: no offset",
        ),
    ),
)

GRPC_STAYS_S = (GRPC_HEARTBEAT_INTERVAL_MS + PERIOD_SLACK_MS) // 1000
"""A gRPC heartbeat interval and slack: an SDK's first heartbeat comes 1 s after start, then every 10 s."""
GRPC_PRODUCE = Scenario(
    "grpc-produce", "produce", count=2, protocol="grpc", idle_s=GRPC_STAYS_S, timeout_s=GRPC_STAYS_S + 45
)
"""Sends, then a gRPC heartbeat interval started (an SDK heartbeats to the endpoints of its routes)."""
GRPC_IDLE = Scenario(
    "grpc-idle", "idle", count=0, protocol="grpc", idle_s=GRPC_STAYS_S, timeout_s=GRPC_STAYS_S + 45
)
"""A producer of the topic and a consumer of the group started for a gRPC heartbeat interval."""
GRPC_POP = Scenario("grpc-pop", "consume-pop", count=2, prefill=2, protocol="grpc", timeout_s=40)
GRPC_FIFO_GROUPS = 2
GRPC_FIFO = Scenario("grpc-produce-fifo", "produce-fifo", count=6, protocol="grpc", message_type="FIFO")
"""Three messages in each of the drivers' two message groups (RMQ_MESSAGE_GROUPS defaults to 2)."""
GRPC_FIFO_CONSUME = Scenario(
    "grpc-consume-fifo",
    "consume-pop",
    count=6,
    prefill=6,
    prefill_groups=GRPC_FIFO_GROUPS,
    protocol="grpc",
    message_type="FIFO",
    orderly=True,
    timeout_s=60,
)
"""An orderly group over two message groups of three: each group's next batch comes after an ack."""
GRPC_NACK = Scenario("grpc-consume-nack", "consume-nack", count=2, prefill=2, protocol="grpc", timeout_s=60)
"""First deliveries made invisible again, redeliveries received after the new invisible duration."""
GRPC_EXTEND = Scenario(
    "grpc-consume-extend", "consume-extend", count=2, prefill=2, protocol="grpc", timeout_s=60
)
"""Each delivery given more time, then acked: the ack must carry the handle the change answered. Its two
messages lie in two queues, each first of its pop batch: Apache's broker (and the reference broker)
settles an ack after a change only for such a message (apache/rocketmq#9583), and this run judges what
the client sends, not that defect. Its budget is consume-nack's: each delivery costs a change and an
ack, one call more than a pop's, and under a load of 25 on two cores the Node.js SDK's driver once
outlived 40 s (CRASH, PASS when rerun)."""
GRPC_TRANSACTION = Scenario(
    "grpc-produce-transaction", "produce-transaction", count=2, protocol="grpc", message_type="TRANSACTION"
)
GRPC_TRANSACTION_RECOVERED = Scenario(
    "grpc-transaction-recovery",
    "produce-transaction",
    count=1,
    protocol="grpc",
    message_type="TRANSACTION",
    tx_answer="unknown",
    tx_check_answer="commit",
    idle_s=8,
    timeout_s=40,
)
"""A local transaction left unknown: the broker checks back (after 1 s) and its proxy sends the producer a
RecoverOrphanedTransactionCommand on Telemetry; the check answers commit, which an SDK must send."""

IDLE = Scenario(
    "idle",
    "idle",
    count=0,
    idle_s=(HEARTBEAT_INTERVAL.value + 2 * PERIOD_SLACK_MS) / 1000,
    timeout_s=(HEARTBEAT_INTERVAL.value + 2 * PERIOD_SLACK_MS) / 1000 + 30,
)
"""Long enough for a second heartbeat and route fetch at the Java periods, with slack on both ends."""
