"""What the HA cases share: a stored record's place in the master's CommitLog, and the heartbeat wait."""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.ha import HA_DEFAULTS
from rocketmq_spec.spec.message_id import decode_offset_msg_id

from .messaging import Client, Message
from .pop_support import target_setting
from .support import expect_success

HEARTBEAT_MARGIN = 3.0
"""Seconds of margin on a busy machine for what is due within an interval."""
HEARTBEAT_WAIT = HA_DEFAULTS["haSendHeartbeatInterval"] / 1000 + HEARTBEAT_MARGIN
"""A heartbeat (either side) is due within haSendHeartbeatInterval (Java's default: the bound of a wait for
something that comes sooner; a case judging the interval reads the target's, :func:`heartbeat_wait`)."""


def ha_setting(client: Client, check: Check, name: str) -> int:
    """An HA setting of the target (``target_setting``; Java's default where it reports none)."""
    value = target_setting(client, check, name, str(HA_DEFAULTS[name]))
    try:
        return int(value)
    except ValueError:
        check.that(f"{name} is a number", False, expected="an integer", actual=value)
        raise


def heartbeat_wait(client: Client, check: Check) -> float:
    """HEARTBEAT_WAIT for the target's own haSendHeartbeatInterval."""
    return ha_setting(client, check, "haSendHeartbeatInterval") / 1000 + HEARTBEAT_MARGIN


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
