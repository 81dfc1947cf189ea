"""The building blocks of the custom header tables: a field's wire name, Java type and whether it is required.

Kept apart from the tables themselves so that every table module (core commands in
``rocketmq_spec.spec.headers``, admin commands in ``rocketmq_spec.spec.admin_headers``) builds on the same
types without importing each other. """

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.releases import ALL, Releases, since


class FieldType(enum.Enum):
    """The Java type a header field's string stands for (the value is the Java type name)."""

    STRING = "String"
    INT = "Integer"
    LONG = "Long"
    BOOLEAN = "Boolean"


S, INT, L, B = FieldType.STRING, FieldType.INT, FieldType.LONG, FieldType.BOOLEAN


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    required: bool
    doc: str = ""
    long_name: str | None = None
    """For SEND_MESSAGE_V2's one-letter keys: the SendMessageRequestHeader field it stands for."""
    releases: Releases = ALL
    """The releases whose header class declares the field (its Java class may be older or newer)."""

    @property
    def key(self) -> str:
        """The name callers use for the value (the V1 name for one-letter keys)."""
        return self.long_name or self.name


@dataclass(frozen=True)
class HeaderSpec:
    java_class: str
    fields: tuple[Field, ...]

    def by_wire_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    def declared_by(self, mq_version: int) -> list[Field]:
        """The fields the header class of a release (named by its version word) declares."""
        return [f for f in self.fields if f.releases.holds_for_version(mq_version)]


BNAME = Field("bname", S, False, "broker name the client addressed (RpcRequestHeader, 4.9.5+)")
"""RpcRequestHeader's one field before 5.x: every request header that extends it declares it."""
RPC_FIELDS_5X: tuple[Field, ...] = (
    Field("ns", S, False, "namespace the client works in (RpcRequestHeader)", releases=since("5.0.0")),
    Field("nsd", B, False, "namespace already applied to the names (RpcRequestHeader)",
          releases=since("5.0.0")),
    Field("oway", B, False, "the request is oneway (RpcRequestHeader)", releases=since("5.0.0")),
)
"""Optional fields every 5.x request header inherits from RpcRequestHeader besides ``bname`` (which 4.9.5+
already declares); receivers that do not know them ignore them (RMQ-CMD-EXTRA-KEYS)."""
TOPIC_RPC_FIELDS_5X: tuple[Field, ...] = (
    *RPC_FIELDS_5X,
    Field("lo", B, False, "logical queue (static topic) request (TopicRequestHeader)",
          releases=since("5.0.0")),
)
"""What topic and queue request headers (TopicRequestHeader, TopicQueueRequestHeader) inherit in 5.x."""
