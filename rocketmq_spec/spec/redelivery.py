"""Messages a broker delivers later: delay levels, and a consumer's send-back to retry and dead-letter topics.

A message sent with a DELAY level is parked in ``SCHEDULE_TOPIC_XXXX`` (queue level - 1) and put back into
its own topic and queue once the level's delay has passed since it was stored. A push consumer that could
not consume a message hands it back with CONSUMER_SEND_MSG_BACK; the broker stores a copy for the group,
to ``%RETRY%<group>`` behind a delay level (so through the schedule topic) or, once the group's reconsume
limit is reached, to ``%DLQ%<group>`` at once.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_SCHEDULE = "store/src/main/java/org/apache/rocketmq/store/schedule/ScheduleMessageService.java"
_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
_SEND = "broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java"

FIRST_RETRY_DELAY_LEVEL = 3
"""The delay level of a first retry when the consumer leaves the choice to the broker (delayLevel 0)."""
DEFAULT_MAX_RECONSUME_TIMES = 16
"""``SubscriptionGroupConfig.retryMaxTimes``."""

RMQ_BRK_DELAY_PARK = clause(
    "RMQ-BRK-DELAY-PARK", Level.MUST,
    "A message sent with DELAY=L (1 <= L <= the number of messageDelayLevel levels) is stored in "
    "SCHEDULE_TOPIC_XXXX queue L-1 with REAL_TOPIC and REAL_QID naming its topic and queue, and is not "
    "readable in its own queue until it is delivered.",
    source=f"{_COMMITLOG} (putMessage)")
RMQ_BRK_DELAY_DELIVER = clause(
    "RMQ-BRK-DELAY-DELIVER", Level.MUST,
    "A parked message is stored again in its own topic and queue once level L's delay has passed since it "
    "was parked (never earlier: the copy's store time is at least the parked store time plus the delay), "
    "with the parked message's body, flag, born time and properties (DELAY, REAL_TOPIC and REAL_QID kept).",
    source=f"{_SCHEDULE} (DeliverDelayedMessageTimerTask, messageTimeup)")
RMQ_BRK_SEND_BACK = clause(
    "RMQ-BRK-SEND-BACK", Level.MUST,
    "CONSUMER_SEND_MSG_BACK of the message at a commitlog offset, for group G, below the reconsume limit, is "
    "answered SUCCESS and stores a copy for %RETRY%G queue 0 behind delay level delayLevel (0: 3 + "
    "reconsumeTimes): the original's body, flag, born time and properties, plus RETRY_TOPIC (the first "
    "topic) and ORIGIN_MESSAGE_ID (the first offsetMsgId), reconsumeTimes + 1.",
    source=f"{_SEND} (asyncConsumerSendMsgBack)")
RMQ_BRK_SEND_BACK_DLQ = clause(
    "RMQ-BRK-SEND-BACK-DLQ", Level.MUST,
    "A sent-back message already reconsumed maxReconsumeTimes times (the header's, else the group's "
    "retryMaxTimes, 16), or sent back with a negative delayLevel, is stored at once in %DLQ%G queue 0, a "
    "readable and writable topic of one queue.",
    source=f"{_SEND} (asyncConsumerSendMsgBack)")
RMQ_BRK_SEND_BACK_NOT_FOUND = clause(
    "RMQ-BRK-SEND-BACK-NOT-FOUND", Level.MUST,
    "CONSUMER_SEND_MSG_BACK of an offset where no message is stored is answered 1 SYSTEM_ERROR with the "
    "remark 'look message by offset failed, <offset>'.",
    source=f"{_SEND} (asyncConsumerSendMsgBack)")

