"""The records POP writes to the revive topic, and the receipts it hands out.

Each function builds one of Java's beans (``PopCheckPoint``, ``AckMsg``, ``BatchAckMsg``) or the message
that carries it (``buildCkMsg``, ``appendAck``): tag, UNIQ_KEY and the timer property that makes the record
due in the revive queue when the popped batch becomes visible again (RMQ-POP-REVIVE-LOG).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.store.message import InnerMessage
from rocketmq_spec.spec.pop import (
    ACK_MSG,
    ACK_TAG,
    ACK_TIME_INTERVAL_MS,
    BATCH_ACK_MSG,
    BATCH_ACK_TAG,
    CK_TAG,
    POP_CHECKPOINT,
)
from rocketmq_spec.spec.properties import PropertyKey

SPLIT = "@"
"""``PopAckConstants.SPLIT``, which joins the parts of the records' UNIQ_KEYs."""


@dataclass
class CheckPoint:
    """``PopCheckPoint``: one popped batch of one queue."""

    topic: str
    """The topic popped: the original topic or the group's pop retry topic."""
    queue_id: int
    group: str
    start_offset: int
    pop_time: int
    invisible_time: int
    broker_name: str
    diffs: list[int] = field(default_factory=list)
    """Each popped message's queue offset minus ``start_offset``."""
    revive_offset: int = 0

    @property
    def revive_time(self) -> int:
        return self.pop_time + self.invisible_time

    @property
    def offsets(self) -> list[int]:
        return [self.start_offset + diff for diff in self.diffs]

    @property
    def key(self) -> tuple[str, int, str, int, int, str]:
        """What an ack names its checkpoint by: topic, queue, group, start offset, pop time, broker."""
        return (self.topic, self.queue_id, self.group, self.start_offset, self.pop_time, self.broker_name)

    def as_json(self) -> dict[str, Any]:
        return {"so": self.start_offset, "pt": self.pop_time, "it": self.invisible_time, "bm": 0,
                "n": len(self.diffs), "q": self.queue_id, "t": self.topic, "c": self.group,
                "ro": self.revive_offset, "d": self.diffs, "bn": self.broker_name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckPoint:
        return cls(str(data.get("t", "")), int(data.get("q", 0)), str(data.get("c", "")), int(data.get("so",
                                                                                                       0)),
                   int(data.get("pt", 0)), int(data.get("it", 0)), str(data.get("bn", "")),
                   [int(d) for d in data.get("d") or ()], int(data.get("ro", 0)))

    def unique_id(self) -> str:
        """``genCkUniqueId``."""
        return SPLIT.join((self.topic, str(self.queue_id), str(self.start_offset), self.group,
                           str(self.pop_time), self.broker_name, CK_TAG))


@dataclass(frozen=True)
class Ack:
    """``AckMsg`` / ``BatchAckMsg``: offsets of one batch acknowledged."""

    topic: str
    queue_id: int
    group: str
    start_offset: int
    pop_time: int
    broker_name: str
    offsets: tuple[int, ...]

    @property
    def key(self) -> tuple[str, int, str, int, int, str]:
        return (self.topic, self.queue_id, self.group, self.start_offset, self.pop_time, self.broker_name)

    @property
    def is_batch(self) -> bool:
        return len(self.offsets) != 1

    def as_json(self) -> dict[str, Any]:
        base = {"so": self.start_offset, "c": self.group, "t": self.topic, "q": self.queue_id,
                "pt": self.pop_time, "bn": self.broker_name}
        if self.is_batch:
            return {**base, "ao": -1, "aol": list(self.offsets)}
        return {**base, "ao": self.offsets[0]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ack:
        offsets = tuple(int(o) for o in data.get("aol") or ()) or (int(data.get("ao", -1)),)
        return cls(str(data.get("t", "")), int(data.get("q", 0)), str(data.get("c", "")), int(data.get("so",
                                                                                                       0)),
                   int(data.get("pt", 0)), str(data.get("bn", "")), offsets)

    def unique_id(self) -> str:
        """``genAckUniqueId`` / ``genBatchAckUniqueId``."""
        if self.is_batch:
            listed = "[" + ", ".join(str(o) for o in self.offsets) + "]"
            return SPLIT.join((self.topic, str(self.queue_id), listed, self.group, str(self.pop_time),
                               BATCH_ACK_TAG))
        return SPLIT.join((self.topic, str(self.queue_id), str(self.offsets[0]), self.group,
                           str(self.pop_time),
                           self.broker_name, ACK_TAG))


def checkpoint_message(ck: CheckPoint, revive_topic: str, revive_qid: int, host: HostPort,
                       now_ms: int) -> InnerMessage:
    """``buildCkMsg``: due one ack interval before the batch's revive time."""
    properties = {PropertyKey.TAGS: CK_TAG, PropertyKey.UNIQ_KEY: ck.unique_id(),
                  PropertyKey.TIMER_DELIVER_MS: str(ck.revive_time - ACK_TIME_INTERVAL_MS)}
    return InnerMessage(revive_topic, revive_qid, encode_body(POP_CHECKPOINT, ck.as_json()), properties,
                        now_ms,
                        host)


def ack_message(ack: Ack, invisible_time: int, revive_topic: str, revive_qid: int, host: HostPort,
                now_ms: int) -> InnerMessage:
    """``appendAck``'s record: due at the batch's revive time."""
    tag = BATCH_ACK_TAG if ack.is_batch else ACK_TAG
    spec = BATCH_ACK_MSG if ack.is_batch else ACK_MSG
    properties = {PropertyKey.TAGS: tag, PropertyKey.UNIQ_KEY: ack.unique_id(),
                  PropertyKey.TIMER_DELIVER_MS: str(ack.pop_time + invisible_time)}
    return InnerMessage(revive_topic, revive_qid, encode_body(spec, ack.as_json()), properties, now_ms, host)
