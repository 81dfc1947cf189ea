"""RemotingCommands and whole frames in both header serializations.

The two serializations can carry different things: a ROCKETMQ header writes code and version as int16,
language as a byte, and cannot tell an empty string from null (both are length 0), while a JSON header
keeps empty strings and any language name. Each strategy draws only what its serialization can carry,
so that ``decode(encode(cmd)) == cmd`` holds for every example.
"""

from __future__ import annotations

from hypothesis import strategies as st

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.fuzz.strategies.primitives import INT16, INT32, bodies, int16s, int32s, texts
from rocketmq_spec.spec.codes import REQUEST_CODES, RESPONSE_CODES
from rocketmq_spec.spec.frame import Flag, SerializeType
from rocketmq_spec.spec.language import LanguageCode

LANGUAGE_BYTE_MAX = 0xFF
EXT_MAP_MAX_ENTRIES = 8
"""Entries of a generated extFields map: past a handful, more entries exercise nothing new."""

_KNOWN_CODES = sorted({c.value for c in REQUEST_CODES} | {c.value for c in RESPONSE_CODES})


def codes(bounds: tuple[int, int]) -> st.SearchStrategy[int]:
    """Mostly codes from the spec's tables (where handlers are), sometimes any value within ``bounds``."""
    known = [code for code in _KNOWN_CODES if bounds[0] <= code <= bounds[1]]
    return st.one_of(st.sampled_from(known), st.integers(*bounds))


def flags() -> st.SearchStrategy[int]:
    """Mostly the four meaningful combinations, sometimes any int with unused bits set."""
    return st.one_of(st.sampled_from([0, Flag.RESPONSE, Flag.ONEWAY, Flag.RESPONSE | Flag.ONEWAY]), int32s())


def json_languages() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([c.name for c in LanguageCode]), texts())


def rocketmq_languages() -> st.SearchStrategy[str | int]:
    """Known codes decode to their names; unknown bytes are kept as the raw int."""
    return st.one_of(st.sampled_from([c.name for c in LanguageCode]),
                     st.integers(max(LanguageCode) + 1, LANGUAGE_BYTE_MAX))


def ext_maps(*, non_empty: bool) -> st.SearchStrategy[dict[str, str]]:
    """extFields maps; ``non_empty`` drops what a ROCKETMQ header cannot carry (empty keys and values)."""
    size = 1 if non_empty else 0
    return st.dictionaries(texts(min_size=size), texts(min_size=size), min_size=size,
                           max_size=EXT_MAP_MAX_ENTRIES)


def _optional_body() -> st.SearchStrategy[bytes | None]:
    return st.one_of(st.none(), bodies(min_size=1))


def json_commands() -> st.SearchStrategy[RemotingCommand]:
    return st.builds(
        RemotingCommand, code=codes(INT32), language=json_languages(), version=int32s(),
        opaque=int32s(), flag=flags(), remark=st.none() | texts(), ext_fields=st.none() | ext_maps(
            non_empty=False), body=_optional_body(), serialize_type=st.just(SerializeType.JSON))


def rocketmq_commands() -> st.SearchStrategy[RemotingCommand]:
    return st.builds(
        RemotingCommand, code=codes(INT16), language=rocketmq_languages(), version=int16s(),
        opaque=int32s(), flag=flags(), remark=st.none() | texts(min_size=1),
        ext_fields=st.none() | ext_maps(non_empty=True), body=_optional_body(),
        serialize_type=st.just(SerializeType.ROCKETMQ))


def commands(serialize_type: SerializeType | None = None) -> st.SearchStrategy[RemotingCommand]:
    """Canonical commands of one serialization, or of either when ``serialize_type`` is None."""
    by_type = {SerializeType.JSON: json_commands, SerializeType.ROCKETMQ: rocketmq_commands}
    if serialize_type is not None:
        return by_type[serialize_type]()
    return st.one_of(*(make() for make in by_type.values()))


def frames(serialize_type: SerializeType | None = None) -> st.SearchStrategy[bytes]:
    """Canonical frames (length word included) as the codec writes them."""
    return commands(serialize_type).map(encode)


def frame_streams(max_frames: int = 4) -> st.SearchStrategy[list[bytes]]:
    """Several frames as one connection would carry them back to back."""
    return st.lists(frames(), min_size=1, max_size=max_frames)
