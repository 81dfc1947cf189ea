"""What the HA cases share: a stored record's place in the master's CommitLog, and the heartbeat wait."""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.ha import HA_DEFAULTS
from rocketmq_spec.spec.message_id import decode_offset_msg_id

from .messaging import Client, Message
from .pop_support import broker_setting
from .support import expect_success

HEARTBEAT_WAIT = HA_DEFAULTS["haSendHeartbeatInterval"] / 1000 + 3.0
"""A heartbeat (either side) is due within haSendHeartbeatInterval; 3 s of margin for a busy machine."""


def ha_setting(client: Client, check: Check, name: str) -> int:
    """An HA setting of the target as its GET_BROKER_CONFIG reports it, Java's default where it reports
    none: a case never assumes the target runs with Java's defaults (rocketmq-rust's haTransferBatchSize is
    256 KiB, Java's 32 KiB). Noted, with where it came from, in the case's report."""
    reported = broker_setting(client, name)
    try:
        value, source = int(reported), "GET_BROKER_CONFIG"
    except ValueError:
        value, source = int(HA_DEFAULTS[name]), "Java's default: GET_BROKER_CONFIG reports none"
    check.note(f"{name} ({source})", value)
    return value


@dataclass(frozen=True)
class Stored:
    offset: int
    raw: bytes

    @property
    def end(self) -> int:
        return self.offset + len(self.raw)


def store_one(client: Client, check: Check, topic: str, body: bytes = b"replicated") -> Stored:
    """Send one message and read back the record bytes the broker holds for it."""
    offset = decode_offset_msg_id(client.send(topic, Message(body)).msg_ids[0]).offset
    response = expect_success(check, "VIEW_MESSAGE_BY_ID", client.call(RequestCode.VIEW_MESSAGE_BY_ID,
                                                                      {"offset": offset}))
    return Stored(offset, response.body or b"")
