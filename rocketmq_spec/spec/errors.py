"""Typed errors shared by every layer: each says what the spec expected and what was seen.

They live in ``rocketmq_spec.spec`` (not ``rocketmq_spec.codec``) because the schemas' own validators raise
them; ``rocketmq_spec.codec.errors`` re-exports them for callers that only know the codec. """

from __future__ import annotations

from typing import Any


class RocketMQSpecError(Exception):
    """Base of all errors raised when bytes or values do not follow the spec."""

    def __init__(self, message: str, *, expected: Any = None, seen: Any = None, clause: str | None = None,
                 offset: int | None = None, java_remark: str | None = None) -> None:
        self.message = message
        self.java_remark = java_remark
        """What a Java server puts in the SYSTEM_ERROR remark of a request rejected this way, when known."""
        self.expected = expected
        self.seen = seen
        self.clause = clause
        self.offset = offset
        super().__init__(self.describe())

    def describe(self) -> str:
        parts = [self.message]
        if self.expected is not None or self.seen is not None:
            parts.append(f"expected {self.expected!r}, seen {self.seen!r}")
        if self.offset is not None:
            parts.append(f"at offset {self.offset}")
        if self.clause:
            parts.append(f"[{self.clause}]")
        return "; ".join(parts)


class FrameError(RocketMQSpecError):
    """A RemotingCommand frame is malformed: length words, serialize type, header bounds."""


class HeaderError(RocketMQSpecError):
    """A JSON or ROCKETMQ header, or a custom header in extFields, does not follow its schema."""


class SpecViolation(RocketMQSpecError):
    """A value is well-formed but breaks a rule of the spec (a range, a relation between fields)."""


class StoreError(RocketMQSpecError):
    """A store file (commitlog, consume queue, index, checkpoint, config) is malformed or inconsistent."""


class BodyError(RocketMQSpecError):
    """A message body or a JSON command body cannot be decoded (compression, JSON shape)."""


class HAStreamError(RocketMQSpecError):
    """The HA replication stream broke a rule: a partial or lying offset report, a non-contiguous block."""
