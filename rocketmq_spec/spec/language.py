"""LanguageCode: the implementation language a peer announces in every header.

JSON headers carry the name, ROCKETMQ headers the byte code; the code equals the enum ordinal, so new
languages are only ever appended. A receiver that meets a code it does not know keeps going (Java maps it
to null), which is why the codec keeps unknown values as raw integers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

_SOURCE = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/LanguageCode.java"


class LanguageCode(enum.IntEnum):
    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12
    NODE_JS = 13


@dataclass(frozen=True)
class LanguageIntroduction:
    language: LanguageCode
    since: str
    """First release that declares the code; ``"4.9.0"`` stands for "before the covered range"."""


LANGUAGE_SINCE: tuple[LanguageIntroduction, ...] = (
    *(LanguageIntroduction(code, "4.9.0") for code in LanguageCode if code <= LanguageCode.OMS),
    LanguageIntroduction(LanguageCode.RUST, "4.9.4"),
    LanguageIntroduction(LanguageCode.NODE_JS, "5.3.2"),
)
"""When each code appeared (RUST with 4.9.4, NODE_JS with 5.3.2: absent from every 4.9.x release and from
5.0.0-5.3.1, per the release tags; the 5.3.3+ jars declare it)."""

LANGUAGE_BY_NAME = clause(
    "RMQ-HDR-LANGUAGE-NAME", Level.MUST,
    "JSON headers carry the language as its enum name (\"JAVA\"), ROCKETMQ headers as its byte code.",
    source=_SOURCE)
LANGUAGE_UNKNOWN = clause(
    "RMQ-HDR-LANGUAGE-UNKNOWN", Level.MUST,
    "An unknown language code or name does not make a header undecodable.",
    source=_SOURCE)


_NAME_BY_CODE: dict[int, str] = {code.value: code.name for code in LanguageCode}
"""Every frame's language goes through ``language_name``; a dict lookup costs a fraction of an enum call."""


def language_name(value: str | int) -> str | int:
    """Canonical form of a language: the enum name when known, otherwise the raw value as seen."""
    if isinstance(value, str):
        return value
    return _NAME_BY_CODE.get(value, value)


def language_code(value: str | int) -> int | None:
    """Byte code of a language for the ROCKETMQ header; None when a name has no code."""
    if isinstance(value, int):
        return value
    member = LanguageCode.__members__.get(value)
    return None if member is None else member.value
