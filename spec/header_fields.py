"""The building blocks of the custom header tables: a field's wire name, Java type and whether it is required.

Kept apart from the tables themselves so that every table module (core commands in ``spec.headers``,
admin commands in ``spec.admin_headers``) builds on the same types without importing each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
