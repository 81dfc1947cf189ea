"""Message property maps that the properties string can carry without loss.

The string joins ``name U+0001 value`` pairs with U+0002 and a reader drops pairs with an empty name or
value, so a canonical map has non-empty names and values free of both separators.
"""

from __future__ import annotations

from hypothesis import strategies as st

from rocketmq_spec.fuzz.strategies.primitives import texts
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, RESERVED_KEYS

_SEPARATORS = NAME_VALUE_SEPARATOR + PROPERTY_SEPARATOR
MAX_PROPERTIES = 8


def property_names() -> st.SearchStrategy[str]:
    """Reserved keys (what the broker interprets) as often as arbitrary user keys."""
    return st.one_of(st.sampled_from(sorted(RESERVED_KEYS)), texts(min_size=1, blacklist=_SEPARATORS))


def property_maps(max_size: int = MAX_PROPERTIES) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(property_names(), texts(min_size=1, blacklist=_SEPARATORS), max_size=max_size)
