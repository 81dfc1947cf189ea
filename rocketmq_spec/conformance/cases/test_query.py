"""Querying: messages found through the index by their keys and by their UNIQ_KEY, and the bounded delay
after which a stored message is readable by every reader.

A broker indexes asynchronously after the send is answered, so a query is retried for a bounded time
(``VISIBILITY_BOUND_MS``) before its answer is judged.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.acl import UNIQUE_KEY_QUERY
from rocketmq_spec.spec.behaviour import VISIBILITY_BOUND_MS
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import QUERY_MESSAGE_REQUEST
from rocketmq_spec.spec.indexfile import INDEX_TAG_TYPE
from rocketmq_spec.spec.release_rules import Rule, holds

from .messaging import Client, Message
from .support import eventually, expect_code, expect_success, unique

LATEST = (1 << 63) - 1
"""endTimestamp a Java admin sends to search everything (Long.MAX_VALUE)."""

QUERY_MAX = 32



def _query(client: Client, topic: str, key: str, *, unique_key: bool = False,
           index_type: str | None = None) -> Callable[[], RemotingCommand]:
    """A QUERY_MESSAGE as Java's admin sends it: _UNIQUE_KEY_QUERY is an extField outside the header class."""
    header = {"topic": topic, "key": key, "maxNum": QUERY_MAX, "beginTimestamp": 0, "endTimestamp": LATEST}
    fields = {**encode_header(QUERY_MESSAGE_REQUEST, {**header, **({"indexType": index_type} if index_type
                                                                    else {})}),
              UNIQUE_KEY_QUERY: "true" if unique_key else "false"}
    return lambda: client.connection.call(RequestCode.QUERY_MESSAGE, fields)


def _found(client: Client, topic: str, key: str, *, unique_key: bool = False,
           index_type: str | None = None) -> RemotingCommand:
    """QUERY_MESSAGE repeated until it finds something or the visibility bound passes."""
    return eventually(_query(client, topic, key, unique_key=unique_key, index_type=index_type),
                      lambda r: r.code == ResponseCode.SUCCESS, VISIBILITY_BOUND_MS / 1000)


@table("by", [
    Row("key", "RMQ-BRK-QUERY-MESSAGE", "QUERY_MESSAGE by each of a message's keys returns it.", "key"),
    Row("uniq-key", "RMQ-BRK-QUERY-MESSAGE", "QUERY_MESSAGE by UNIQ_KEY with _UNIQUE_KEY_QUERY=true returns "
        "the message.", "uniq"),
])
def test_query_message(by: str, client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"indexed", tags="Q", keys=(unique("key"), unique("key")))
    client.send(topic, Message(b"other", keys=(unique("key"),)))
    client.send(topic, message)
    keys = [message.uniq] if by == "uniq" else list(message.keys)
    for key in keys:
        response = _found(client, topic, key, unique_key=by == "uniq")
        found = decode_records(expect_success(check, f"QUERY_MESSAGE {key}", response).body)
        check.equal(f"UNIQ_KEYs found by {key}", [message.uniq], [r.uniq_key for r in found])


@case("RMQ-BRK-QUERY-MESSAGE", "QUERY_MESSAGE with indexType T by a message's TAGS string returns it on a "
      "5.4.0+ target (release rule query-by-index-type); an older one looks the tag up as a key and answers "
      "22 QUERY_NOT_FOUND.")
def test_query_message_by_tag(client: Client, check: Check) -> None:
    topic, tag = client.create_topic(), unique("tag")
    message = Message(b"tagged", tags=tag, keys=(unique("key"),))
    client.send(topic, Message(b"other", tags=unique("tag")))
    client.send(topic, message)
    if not holds(Rule.QUERY_BY_INDEX_TYPE, client.target_version()):
        expect_success(check, "QUERY_MESSAGE by key (the message is indexed)", _found(client, topic,
                                                                                      message.keys[0]))
        response = _query(client, topic, tag, index_type=INDEX_TAG_TYPE)()
        # The tag is no key of any message: only a target that serves the tag index (whatever version it
        # announces; rocketmq-rust 1.0.0 announces 5.3.1) can answer SUCCESS, and is then judged as 5.4.0.
        if response.code != ResponseCode.SUCCESS:
            expect_code(check, "QUERY_MESSAGE by tag", response, ResponseCode.QUERY_NOT_FOUND)
            return
    else:
        response = _found(client, topic, tag, index_type=INDEX_TAG_TYPE)
    found = decode_records(expect_success(check, f"QUERY_MESSAGE indexType=T {tag}", response).body)
    check.equal(f"UNIQ_KEYs found by tag {tag}", [message.uniq], [r.uniq_key for r in found])


@case("RMQ-BRK-QUERY-MESSAGE", "QUERY_MESSAGE by a key no message has is answered 22 QUERY_NOT_FOUND once "
      "the index holds what was stored before it (within the visibility bound).")
def test_query_message_not_found(client: Client, check: Check) -> None:
    topic = client.create_topic()
    sent = unique("key")
    client.send(topic, Message(keys=(sent,)))
    # The index is dispatched after the send is answered (RMQ-BRK-VISIBILITY): first the message sent is
    # found, then the absent key is asked until the index answers for everything stored (other cases write
    # meanwhile, and a broker may refuse a query while its index is behind: rocketmq-rust answers 1 then).
    expect_success(check, f"QUERY_MESSAGE {sent} (the index has dispatched the send)",
                   _found(client, topic, sent))
    answers: list[str] = []

    def asked() -> RemotingCommand:
        response = _query(client, topic, unique("absent"))()
        answers.append(f"{response.code} {response.remark or ''}".strip())
        return response

    response = eventually(asked, lambda r: r.code != ResponseCode.SYSTEM_ERROR, VISIBILITY_BOUND_MS / 1000)
    if len(answers) > 1:
        check.note("answers while the index was behind", sorted(set(answers[:-1])))
    expect_code(check, "QUERY_MESSAGE", response, ResponseCode.QUERY_NOT_FOUND)


@case("RMQ-BRK-VISIBILITY", "A message answered SUCCESS becomes readable within the bound by every reader: "
      "GET_MAX_OFFSET counts it, PULL_MESSAGE returns it and QUERY_MESSAGE finds it by its key.")
def test_visible_to_every_reader(client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"visible", keys=(unique("key"),))
    client.send(topic, message)
    client.settle()
    pulled = client.pulled(topic).records
    check.equal("UNIQ_KEYs pulled", [message.uniq], [r.uniq_key for r in pulled])
    response = _found(client, topic, message.keys[0])
    found = decode_records(expect_success(check, "QUERY_MESSAGE by key", response).body)
    check.equal("UNIQ_KEYs found by key", [message.uniq], [r.uniq_key for r in found])


OFFSET_MSG_ID = re.compile(r"[0-9A-F]{32}|[0-9A-F]{56}")
"""Upper-case hex of IPv4 (4) or IPv6 (16) address, int32 port, int64 offset (RMQ-MSGID-OFFSET)."""
IPV4_ID_LENGTH = 32


def _split_msg_id(msg_id: str) -> tuple[str, int, int]:
    """(IP, port, offset) of an offsetMsgId by RMQ-MSGID-DECODE: 32 characters are IPv4, others IPv6."""
    raw = bytes.fromhex(msg_id)
    ip = raw[:4] if len(msg_id) == IPV4_ID_LENGTH else raw[:16]
    port = int.from_bytes(raw[len(ip):len(ip) + 4], "big")
    offset = int.from_bytes(raw[-8:], "big", signed=True)
    return str(ipaddress.ip_address(ip)), port, offset


@case("RMQ-MSGID-OFFSET",
      "A send's msgId is upper-case hex of the store host and port and the CommitLog offset the record has.")
def test_msg_id_is_the_record_s_place(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.send(topic, Message(b"before"))
    result = client.send(topic, Message(b"placed"))
    (msg_id,) = result.msg_ids
    check.that("msgId format", OFFSET_MSG_ID.fullmatch(msg_id) is not None,
               expected="32 or 56 upper-case hex characters", actual=msg_id)
    record = client.pulled(topic, offset=result.queue_offset).records[0]
    ip, port, offset = _split_msg_id(msg_id)
    check.equal("offset in the msgId", record.physical_offset, offset)
    check.equal("store host in the msgId", (record.store_host.ip, record.store_host.port), (ip, port))
    check.equal("hex length for the store host", IPV4_ID_LENGTH if not record.store_host.is_v6 else 56,
                len(msg_id))


@case("RMQ-MSGID-DECODE",
      "The msgId a send answers, decoded by its length (32 characters IPv4, else IPv6), leads "
      "VIEW_MESSAGE_BY_ID to the message sent.")
def test_msg_id_decodes_to_the_message(client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"viewed by id")
    (msg_id,) = client.send(topic, message).msg_ids
    ip, port, offset = _split_msg_id(msg_id)
    view = client.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": offset})
    records = decode_records(expect_success(check, "VIEW_MESSAGE_BY_ID", view).body)
    check.equal("(UNIQ_KEY, offset, store host) viewed", [(message.uniq, offset, (ip, port))],
                [(r.uniq_key, r.physical_offset, (r.store_host.ip, r.store_host.port)) for r in records])
