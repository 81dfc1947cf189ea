"""Known defects: findings whose cause the target's profile cites, reported as known instead of new.

A fuzzer run against a release keeps rediscovering that release's defects (Apache RocketMQ 4.9.x's fastjson
enum spin on every JSON header cut inside an enum value). The release's profile
(``rocketmq_spec/conformance/profiles/*.toml``, ``[[known_defect]]``) names each such defect by the class of
finding it produces and a cause from :data:`CAUSES`, a predicate over the stream that produced the finding,
with the source that shows it. A finding matching one is counted and saved apart, with the citation, and does
not fail the run; anything else is a finding as before.

A cause is recognised from the bytes alone, never from the target's behaviour, so a defect a profile cites
cannot hide a different failure of the same class.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence

from rocketmq_spec.conformance.profile import KnownDefect, Profile
from rocketmq_spec.conformance.regression import FindingClass
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE

_HEADER_WORD = struct.Struct(">I")
_JSON = 0
"""The serialize type in the header-length word's top byte: 0 is JSON, 1 ROCKETMQ."""

_ENUM_VALUE_CUT = re.compile(rb'"(?:language|serializeTypeCurrentRPC)"\s*:\s*"[^"]*\Z')
"""A JSON header ending inside the string value of one of the RemotingCommand fields fastjson decodes as
an enum (``LanguageCode``, ``SerializeType``)."""


def _json_headers(stream: bytes) -> list[bytes]:
    """The JSON header bytes of each frame in ``stream``, cut where its header-length word says."""
    headers, offset = [], 0
    while offset + 2 * LENGTH_FIELD_SIZE <= len(stream):
        (length,) = _HEADER_WORD.unpack_from(stream, offset)
        (word,) = _HEADER_WORD.unpack_from(stream, offset + LENGTH_FIELD_SIZE)
        start = offset + 2 * LENGTH_FIELD_SIZE
        if word >> 24 == _JSON:
            headers.append(stream[start:start + min(word & 0xFFFFFF, max(length - LENGTH_FIELD_SIZE, 0))])
        offset += LENGTH_FIELD_SIZE + max(length, LENGTH_FIELD_SIZE)
    return headers


def json_header_ends_in_enum_value(stream: bytes) -> bool:
    return any(_ENUM_VALUE_CUT.search(header) for header in _json_headers(stream))


CAUSES: dict[str, Callable[[bytes], bool]] = {
    "json-header-ends-in-enum-value": json_header_ends_in_enum_value,
}
"""Causes a profile's ``[[known_defect]]`` may name, each recognised from a finding's stream."""


class UnknownCause(ValueError):
    def __init__(self, profile: Profile, defect: KnownDefect) -> None:
        super().__init__(f"profile {profile.file or profile.name} cites a known defect of cause "
                         f"{defect.cause!r}, which rmq-fuzz cannot recognise (known: {', '.join(CAUSES)})")


def matcher(profile: Profile) -> Callable[[FindingClass, Sequence[bytes]], KnownDefect | None]:
    """What the fuzzer asks of each finding: the profile's known defect it is, if any."""
    for defect in profile.known_defects:
        if defect.cause not in CAUSES:
            raise UnknownCause(profile, defect)

    def known(finding: FindingClass, streams: Sequence[bytes]) -> KnownDefect | None:
        return next((defect for defect in profile.known_defects if defect.finding == finding.value
                     and any(CAUSES[defect.cause](stream) for stream in streams)), None)

    return known
