"""Java integer ranges and the text that RocketMQ's encoders can carry.

Java strings are UTF-16 and every encoder writes UTF-8, so a lone surrogate has no encoding: text is
drawn without the surrogate category. Sizes are kept small because shrinking, not size, finds bugs.
"""

from __future__ import annotations

from hypothesis import strategies as st

INT8 = (-(1 << 7), (1 << 7) - 1)
INT16 = (-(1 << 15), (1 << 15) - 1)
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

SHORT_TEXT = 24
"""Characters of a generated name or value: enough for every separator and multi-byte case."""

SMALL_BODY = 256
"""Bytes of a generated body: bodies are opaque, their length is what the framing judges."""


def int8s() -> st.SearchStrategy[int]:
    return st.integers(*INT8)


def int16s() -> st.SearchStrategy[int]:
    return st.integers(*INT16)


def int32s() -> st.SearchStrategy[int]:
    return st.integers(*INT32)


def int64s() -> st.SearchStrategy[int]:
    return st.integers(*INT64)


def texts(min_size: int = 0, max_size: int = SHORT_TEXT,
          blacklist: str = "") -> st.SearchStrategy[str]:
    """Text with an UTF-8 encoding (no lone surrogates), optionally without some characters."""
    return st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters=blacklist),
                   min_size=min_size, max_size=max_size)


def names(max_size: int = SHORT_TEXT) -> st.SearchStrategy[str]:
    """Topic/group-like names: the characters RocketMQ's validators accept (``[%|a-zA-Z0-9_-]``)."""
    return st.text(st.sampled_from("%|-_abcXYZ0123456789"), min_size=1, max_size=max_size)


def bodies(min_size: int = 0, max_size: int = SMALL_BODY) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=min_size, max_size=max_size)
