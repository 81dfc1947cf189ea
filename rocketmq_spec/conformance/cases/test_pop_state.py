"""Where POP keeps its state and what it hands back (5.x): the offset a new group starts from, the records
of the revive log, and the receipt and topic of a message served from the group's pop retry topic.

Like the other pop cases, each pops a topic it created with a group of its own, and a 4.x target is
reported UNSUPPORTED with its version as the reason (RMQ-POP-4X).
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.pop import (
    ACK_MSG,
    ACK_TAG,
    ACK_TIME_INTERVAL_MS,
    CK_TAG,
    POP_CHECKPOINT,
    POP_MESSAGE_RESPONSE,
    REVIVE_QUEUE_NUM,
    InitMode,
    build_extra_info,
    pop_retry_topic,
    retry_flag,
    revive_topic,
)
from rocketmq_spec.spec.properties import PropertyKey

from .messaging import Client
from .pop_support import SHORT_INVISIBLE_MS, PopClient, broker_setting, pop_again, ready_topic
from .support import eventually, expect_success

REVIVE_LOG_INVISIBLE_MS = 6000
"""Long enough that a record written at once, not as a timer message, is seen to be early."""
REVIVE_LOG_LAG_S = 30
"""How long past its due time a revive record may take to appear on a loaded machine."""


# -- where a new group starts -------------------------------------------------------------------------

@table("init_mode", [
    Row("min", "RMQ-POP-INIT-MODE", "A group with no offset popping with initMode MIN starts at the queue's "
        "first message.", InitMode.MIN),
    Row("last", "RMQ-POP-INIT-MODE", "A group with no offset popping with initMode LAST starts at 0 while "
        "the queue's first message is in memory (initPopOffsetByCheckMsgInMem, the default), else at the "
        "last message.", InitMode.LAST),
])
def test_init_mode(init_mode: int, client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-INIT-MODE")
    answer = expect_success(check, "first pop of the group", pops.pop(topic, queue_id=0, init_mode=init_mode))
    from_memory = broker_setting(client, "initPopOffsetByCheckMsgInMem") != "false"
    expected = [0, 1, 2] if init_mode == InitMode.MIN or from_memory else [2]
    check.equal("offsets popped", expected, [p.record.queue_offset for p in pops.popped(answer)])


# -- the revive log -----------------------------------------------------------------------------------

def _revive_ends(client: Client, topic: str) -> list[int]:
    """Each revive queue's max offset: the records a case causes come after these."""
    return [client.answer("revive max offset", RequestCode.GET_MAX_OFFSET,
                          {"topic": topic, "queueId": queue})["offset"] for queue in range(REVIVE_QUEUE_NUM)]


def _revive_records(client: Client, topic: str, queue_id: int, start: int) -> list[MessageRecord]:
    """Every record of one revive queue from ``start`` on (shared with the other pop cases)."""
    found: list[MessageRecord] = []
    while True:
        answer = client.pull(topic, queue_id, start + len(found))
        records = decode_records(answer.body) if answer.code == ResponseCode.SUCCESS else []
        if not records:
            return found
        found.extend(records)


def _group_of(record: MessageRecord) -> Any:
    """The consumer group a revive record's JSON names (``c`` in PopCheckPoint and AckMsg alike)."""
    bean = fastjson_loads(record.body) if record.body.startswith(b"{") else {}
    return bean.get("c") if isinstance(bean, dict) else None


@case("RMQ-POP-REVIVE-LOG", "A pop writes a checkpoint (tag ck, PopCheckPoint of the batch) and an ack "
      "an ack record (tag ack, AckMsg of the offset) to the answer's revive queue of "
      "rmq_sys_REVIVE_LOG_<cluster>, each written there only when due: the checkpoint at the revive time "
      "less 1 s, the ack at it.")
def test_revive_log(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-REVIVE-LOG", count=2)
    revive = revive_topic(broker_setting(client, "brokerClusterName"))
    ends = _revive_ends(client, revive)
    answer = expect_success(check, "pop", pops.pop(topic, queue_id=0, invisible_ms=REVIVE_LOG_INVISIBLE_MS))
    header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
    acked = pops.popped(answer)[0]
    expect_success(check, "ack", pops.ack(topic, acked))
    queue, revive_at = header["reviveQid"], header["popTime"] + header["invisibleTime"]

    def ours() -> dict[str, MessageRecord]:
        records = _revive_records(client, revive, queue, ends[queue] if queue < len(ends) else 0)
        return {record.properties.get(PropertyKey.TAGS, ""): record for record in records
                if _group_of(record) == pops.group}
    found = eventually(ours, lambda tagged: {CK_TAG, ACK_TAG} <= set(tagged),
                       REVIVE_LOG_INVISIBLE_MS / 1000 + REVIVE_LOG_LAG_S)
    check.equal("tags of the group's records", [ACK_TAG, CK_TAG], sorted(found))
    if CK_TAG not in found or ACK_TAG not in found:
        return
    ck, ack = decode_body(POP_CHECKPOINT, found[CK_TAG].body), decode_body(ACK_MSG, found[ACK_TAG].body)
    check.equal("checkpoint", (topic, 0, 0, 2, header["popTime"], header["invisibleTime"]),
                (ck.get("t"), ck.get("q"), ck.get("so"), ck.get("n"), ck.get("pt"), ck.get("it")))
    check.equal("ack", (topic, 0, acked.offset, header["popTime"]),
                (ack.get("t"), ack.get("q"), ack.get("ao"), ack.get("pt")))
    for tag, due in ((CK_TAG, revive_at - ACK_TIME_INTERVAL_MS), (ACK_TAG, revive_at)):
        stored = found[tag].store_timestamp
        check.that(f"{tag} record written when due", stored >= due, expected=f">= {due}", actual=stored)


# -- a message served from the pop retry topic --------------------------------------------------------

def _revived(client: Client, check: Check,
             clause: str) -> tuple[PopClient, str, dict[str, Any], MessageRecord | None]:
    """A message popped, left unacked, and popped again from the group's pop retry topic."""
    pops, topic = ready_topic(client, clause, count=1)
    expect_success(check, "pop", pops.pop(topic, invisible_ms=SHORT_INVISIBLE_MS))
    answer = pop_again(check, pops, topic)
    revived = pops.popped(answer)
    check.equal("messages back", 1, len(revived))
    header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
    return pops, topic, header, revived[0].record if revived else None


def _retry_topic(client: Client, pops: PopClient, topic: str) -> str:
    """The group's pop retry topic, V2 when the broker says so (``enableRetryTopicV2``)."""
    return pop_retry_topic(topic, pops.group, broker_setting(client, "enableRetryTopicV2") == "true")


@case("RMQ-POP-RETRY-RECODE", "A message popped from the group's pop retry topic is answered under the "
      "original topic with POP_CK set (popResponseReturnActualRetryTopic=false, the default).")
def test_retry_topic_recoded(client: Client, check: Check) -> None:
    pops, topic, _, record = _revived(client, check, "RMQ-POP-RETRY-RECODE")
    if record is None:
        return
    actual = broker_setting(client, "popResponseReturnActualRetryTopic") == "true"
    check.equal("topic answered", _retry_topic(client, pops, topic) if actual else topic, record.topic)
    check.that("POP_CK set", actual or PropertyKey.POP_CK in record.properties, expected="POP_CK",
               actual=sorted(record.properties))


@case("RMQ-POP-RECEIPT", "The receipt a broker sets (POP_CK of a message from the pop retry topic) is "
      "\"ckOffset popTime invisibleTime reviveQid retry brokerName queueId queueOffset\" with single spaces, "
      "each as the answer says.")
def test_receipt(client: Client, check: Check) -> None:
    pops, topic, header, record = _revived(client, check, "RMQ-POP-RECEIPT")
    if record is None:
        return
    retry = retry_flag(_retry_topic(client, pops, topic))
    starts = {tuple(entry.split()[:2]): int(entry.split()[2])
              for entry in filter(None, (header.get("startOffsetInfo") or "").split(";"))}
    expected = build_extra_info(starts.get((retry, str(record.queue_id)), -1), header["popTime"],
                                header["invisibleTime"], header["reviveQid"], retry, pops.broker_name,
                                record.queue_id, record.queue_offset)
    check.equal("receipt", expected, record.properties.get(PropertyKey.POP_CK))
