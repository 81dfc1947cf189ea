"""Querying: messages found through the index by their keys and by their UNIQ_KEY, and the bounded delay
after which a stored message is readable by every reader.

A broker indexes asynchronously after the send is answered, so a query is retried for a bounded time
(``VISIBILITY_BOUND_MS``) before its answer is judged.
"""

from __future__ import annotations

from collections.abc import Callable

from codec.command import RemotingCommand
from codec.custom_header import encode_header
from codec.store import decode_records
from conformance.case import Row, case, table
from conformance.checks import Check
from spec.behaviour import VISIBILITY_BOUND_MS
from spec.codes import RequestCode, ResponseCode
from spec.headers import QUERY_MESSAGE_REQUEST

from .messaging import Client, Message
from .support import eventually, expect_code, expect_success, unique

LATEST = (1 << 63) - 1
"""endTimestamp a Java admin sends to search everything (Long.MAX_VALUE)."""

QUERY_MAX = 32

UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"


def _query(client: Client, topic: str, key: str, *,
           unique_key: bool = False) -> Callable[[], RemotingCommand]:
    """A QUERY_MESSAGE as Java's admin sends it: _UNIQUE_KEY_QUERY is an extField outside the header class."""
    fields = {**encode_header(QUERY_MESSAGE_REQUEST, {"topic": topic, "key": key, "maxNum": QUERY_MAX,
                                                      "beginTimestamp": 0, "endTimestamp": LATEST}),
              UNIQUE_KEY_QUERY: "true" if unique_key else "false"}
    return lambda: client.connection.call(RequestCode.QUERY_MESSAGE, fields)


def _found(client: Client, topic: str, key: str, *, unique_key: bool = False) -> RemotingCommand:
    """QUERY_MESSAGE repeated until it finds something or the visibility bound passes."""
    return eventually(_query(client, topic, key, unique_key=unique_key),
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


@case("RMQ-BRK-QUERY-MESSAGE", "QUERY_MESSAGE by a key no message has is answered 22 QUERY_NOT_FOUND.")
def test_query_message_not_found(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.send(topic, Message(keys=(unique("key"),)))
    response = _query(client, topic, unique("absent"))()
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
