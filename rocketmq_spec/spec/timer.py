"""Timer messages (5.x): a message that names its delivery time is parked in ``rmq_sys_wheel_timer``.

A producer asks for a delivery time with one of three properties (``TIMER_DELIVER_MS`` absolute,
``TIMER_DELAY_SEC`` / ``TIMER_DELAY_MS`` relative to the store time). The broker stores the start of the
wheel slot holding that time (``timerPrecisionMs``, 1000 by default) as ``TIMER_OUT_MS``, writes the message
to queue 0 of ``rmq_sys_wheel_timer`` with ``REAL_TOPIC`` and ``REAL_QID``, and writes it again to its real
topic and queue once the slot has ended: never before the requested time. A delay level wins: a message with
``DELAY`` > 0 loses its timer properties and goes through ``SCHEDULE_TOPIC_XXXX`` as in 4.x. A time not in
the future is delivered at once. The broker's own index of pending messages (``timerwheel``, ``timerlog``
and the checkpoint ``config/timercheck``) can be rebuilt from the wheel topic's queue, which is what
survives a restart.
"""

from __future__ import annotations

import base64

from construct import Int64sb, Padding, Struct

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.header_fields import BNAME, TOPIC_RPC_FIELDS_5X, Field, HeaderSpec, S

_TIMER = "store/src/main/java/org/apache/rocketmq/store/timer/"
_HOOK = "broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java"

TIMER_QUEUE_ID = 0
TIMER_PRECISION_MS = 1000
"""``timerPrecisionMs`` default."""
TIMER_MAX_DELAY_SEC = 3 * 24 * 3600
"""``timerMaxDelaySec`` default: a later delivery time is refused."""
TIMER_WHEEL_DIR = "timerwheel"
TIMER_LOG_DIR = "timerlog"
TIMER_CHECKPOINT_FILE = "config/timercheck"
TIMER_CHECKPOINT_SIZE = 4096
"""The checkpoint is one OS page, mapped whole (``DefaultMappedFile.OS_PAGE_SIZE``)."""
ILLEGAL_REMARK = ("timer message illegal, the delay time should not be bigger than the max delay {max_ms}ms; "
                  "or if set del msg, the delay time should be bigger than the current time")
"""SendMessageProcessor's remark for WHEEL_TIMER_MSG_ILLEGAL (answered 13 MESSAGE_ILLEGAL)."""

TimerCheckpoint = Struct(
    "last_read_time_ms" / Int64sb * "time the wheel has been read up to, ms",
    "last_timer_log_flush_pos" / Int64sb * "timerlog position flushed",
    "last_timer_queue_offset" / Int64sb * "offset in rmq_sys_wheel_timer queue 0 taken into the wheel",
    "master_timer_queue_offset" / Int64sb * "a slave's view of the master's queue offset",
    "state_version" / Int64sb * "DataVersion.stateVersion",
    "timestamp" / Int64sb * "DataVersion.timestamp",
    "counter" / Int64sb * "DataVersion.counter",
    Padding(TIMER_CHECKPOINT_SIZE - 56) * "zeros up to the page",
)
"""``config/timercheck``: big-endian longs at the head of a 4096-byte page."""


def rounded_deliver_ms(deliver_ms: int, precision_ms: int = TIMER_PRECISION_MS) -> int:
    """``HookUtils.transformTimerMessage``: TIMER_OUT_MS is the start S of the slot with S < D <= S + p (a
    time on the precision grid moves one step earlier, any other time down to the grid)."""
    if deliver_ms % precision_ms == 0:
        return deliver_ms - precision_ms
    return deliver_ms // precision_ms * precision_ms


def release_ms(timer_out_ms: int, precision_ms: int = TIMER_PRECISION_MS) -> int:
    """When the wheel releases a message parked with TIMER_OUT_MS: once the slot has ended. Java reads slot
    S only while ``currReadTimeMs < currWriteTimeMs``, the write time being ``now / p * p``
    (``TimerMessageStore.dequeue``, ``formatTimeMs``), i.e. once now >= S + p, the first grid time at or
    after the requested time D. A message already due when taken in is held to the same inequality."""
    return timer_out_ms // precision_ms * precision_ms + precision_ms


def read_time_ms(now: int, precision_ms: int = TIMER_PRECISION_MS) -> int:
    """``formatTimeMs``: the wheel's write time, the start of the slot ``now`` lies in. Every slot before it
    has ended, so a checkpoint's ``lastReadTimeMs`` (the next slot to read) is never later."""
    return now // precision_ms * precision_ms


TIMER_PROPERTIES = clause(
    "RMQ-TIMER-PROPERTIES", Level.MUST,
    "A message with TIMER_DELIVER_MS (absolute ms), TIMER_DELAY_SEC or TIMER_DELAY_MS (relative to its "
    "arrival) and no delay level is not visible in its topic before that time D by the broker's clock: "
    "TIMER_OUT_MS is the start S of the precision slot with S < D <= S + p, and slot S is released only "
    "once the broker's clock reached S + p, the first multiple of the precision at or after D (a re-delivery "
    "after a restart or a hand-over is never earlier either).",
    source=_HOOK + " (transformTimerMessage); " + _TIMER + "TimerMessageStore.java (dequeue, formatTimeMs)")
TIMER_PARKED = clause(
    "RMQ-TIMER-PARKED", Level.MUST,
    "A pending timer message is stored in queue 0 of rmq_sys_wheel_timer with TIMER_OUT_MS (the rounded "
    "delivery time), REAL_TOPIC and REAL_QID.",
    source=_HOOK + " (transformTimerMessage)")
TIMER_DELIVERED = clause(
    "RMQ-TIMER-DELIVERED", Level.MUST,
    "A delivered timer message keeps its body, tags, keys and timer properties and gains TIMER_ENQUEUE_MS "
    "and TIMER_DEQUEUE_MS; its stored properties still hold REAL_TOPIC and REAL_QID (the string is written "
    "before convertMessage clears them from the map, as 5.5.0 stores it).",
    source=_TIMER + "TimerMessageStore.java (convertMessage)")
TIMER_DELAY_LEVEL_WINS = clause(
    "RMQ-TIMER-DELAY-LEVEL-WINS", Level.MUST,
    "A message with both a delay level (DELAY > 0) and a timer property is delayed by its level; the timer "
    "properties are removed.",
    source=_HOOK + " (checkIfTimerMessage)")
TIMER_PAST = clause(
    "RMQ-TIMER-PAST", Level.MUST,
    "A timer message whose delivery time is not in the future is stored in its topic at once.",
    source=_HOOK + " (transformTimerMessage)")
TIMER_TOO_LATE = clause(
    "RMQ-TIMER-MAX-DELAY", Level.MUST,
    "A delivery time more than timerMaxDelaySec (3 days) ahead is refused with 13 MESSAGE_ILLEGAL and the "
    "remark \"timer message illegal, ...\".",
    source="broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java")
TIMER_BAD_VALUE = clause(
    "RMQ-TIMER-BAD-VALUE", Level.MUST,
    "A timer property that is not a number is refused with 13 MESSAGE_ILLEGAL.",
    source=_HOOK + " (transformTimerMessage: WHEEL_TIMER_MSG_ILLEGAL)")
TIMER_RESTART = clause(
    "RMQ-TIMER-RESTART", Level.MUST,
    "Timer messages pending when the broker stops are delivered after it starts again, never before their "
    "time; after a clean stop each once, also when the broker starting on the store is another "
    "implementation (whose own record of pending timers, such as Java's timerlog, must not deliver a "
    "message a second time).",
    source=_TIMER + "TimerMessageStore.java (shutdown, recover, reviseQueueOffset), TimerCheckpoint.java")
TIMER_4X = clause(
    "RMQ-TIMER-4X", Level.MUST,
    "A 4.x broker knows no timer property: the message is stored in its topic at once.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLog.java (4.9.8: only DELAY is read)")

RECALL_SOURCE = "broker/src/main/java/org/apache/rocketmq/broker/processor/RecallMessageProcessor.java"
RECALL_HANDLE_VERSION = "v1"
RECALL_TAG = "_RECALL_TAG_"
"""Tag of the deletion marker RECALL_MESSAGE parks in the wheel."""
RECALL_FORBIDDEN_REMARK = "recall failed, operation is forbidden"
RECALL_UNAVAILABLE_REMARK = "recall failed, broker service not available"
"""Java's remark for a handle naming another broker (and for a slave or a broker not taking sends)."""
"""RECALL_MESSAGE with recallMessageEnable=false (the default of 5.3.3 and 5.5.0): 16 NO_PERMISSION."""


def recall_handle(topic: str, broker_name: str, timer_out_ms: int, uniq_key: str) -> str:
    """``RecallMessageHandle.HandleV1.buildHandle`` as a send answer carries it: URL-safe base64 of
    "v1 topic brokerName timestamp uniqKey", the timestamp TIMER_OUT_MS + 1 (``attachRecallHandle``)."""
    raw = " ".join((RECALL_HANDLE_VERSION, topic, broker_name, str(timer_out_ms + 1), uniq_key))
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_recall_handle(handle: str) -> tuple[str, str, str, str]:
    """(topic, brokerName, timestamp, uniqKey); ValueError ("recall handle is invalid") otherwise."""
    try:
        items = base64.urlsafe_b64decode(handle.encode()).decode().split(" ")
    except (ValueError, UnicodeDecodeError):
        raise ValueError("recall handle is invalid") from None
    if items[0] != RECALL_HANDLE_VERSION or len(items) < 5:
        raise ValueError("recall handle is invalid")
    return items[1], items[2], items[3], items[4]


def delete_key(real_topic: str, uniq_key: str) -> str:
    """``TimerMessageStore.buildDeleteKey``: what TIMER_DEL_UNIQKEY of a recall names."""
    return f"{real_topic}+{uniq_key}"


RECALL_HANDLE = clause(
    "RMQ-TIMER-RECALL-HANDLE", Level.MUST,
    "From 5.3.2 the answer to a SEND_MESSAGE(_V2) that parked a timer message carries recallHandle: "
    "URL-safe base64 of \"v1 <topic> <brokerName> <TIMER_OUT_MS + 1> <UNIQ_KEY>\" (batches and send-backs "
    "get none).",
    source="broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java "
           "(attachRecallHandle); common/src/main/java/org/apache/rocketmq/common/producer/"
           "RecallMessageHandle.java")
RECALL = clause(
    "RMQ-TIMER-RECALL", Level.MUST,
    "RECALL_MESSAGE (370, 5.3.2+) answers 16 NO_PERMISSION \"recall failed, operation is forbidden\" unless "
    "recallMessageEnable; when enabled, a valid handle of a pending timer message answers SUCCESS with its "
    "msgId and the message is never delivered; a handle naming another topic or broker, or an unparsable "
    "one, answers 604 ILLEGAL_OPERATION.",
    source=RECALL_SOURCE)

RECALL_MESSAGE_REQUEST = HeaderSpec("RecallMessageRequestHeader", (
    Field("producerGroup", S, False, "producer group"),
    Field("topic", S, True, "topic of the timer message"),
    Field("recallHandle", S, True, "the send answer's recallHandle"),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
RECALL_MESSAGE_RESPONSE = HeaderSpec("RecallMessageResponseHeader", (
    Field("msgId", S, True, "UNIQ_KEY of the recalled message"),))
TIMER_REQUEST_HEADERS: dict[int, HeaderSpec] = {RequestCode.RECALL_MESSAGE: RECALL_MESSAGE_REQUEST}
TIMER_RESPONSE_HEADERS: dict[int, HeaderSpec] = {RequestCode.RECALL_MESSAGE: RECALL_MESSAGE_RESPONSE}
