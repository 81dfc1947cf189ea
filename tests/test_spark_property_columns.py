"""Properties parsed for a whole batch with Arrow kernels equal the record-by-record parse, or decline the
batch (duplicate names, a UNIQ_KEY holding a space) so that the record-by-record parse takes it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.spark.property_columns import arrow_java_hashes, property_columns
from rocketmq_spec.spark.tables import _property_columns
from rocketmq_spec.spec.hashing import java_string_hash
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, PropertyKey
from rocketmq_spec.spec.sysflag import TransactionType

NAMES = st.sampled_from([PropertyKey.TAGS, PropertyKey.KEYS, PropertyKey.UNIQ_KEY, "a", "é", ""])
VALUES = st.text(st.sampled_from(f"ab é€😀#{NAME_VALUE_SEPARATOR}"), max_size=12)


@st.composite
def property_texts(draw: st.DrawFn) -> str:
    """Mostly well-formed pairs, with empty names or values, missing separators and repeats mixed in."""
    segments = []
    for name, value in draw(st.lists(st.tuples(NAMES, VALUES), max_size=6)):
        segments.append(draw(st.sampled_from([f"{name}{NAME_VALUE_SEPARATOR}{value}", name, value])))
    return PROPERTY_SEPARATOR.join(segments)


@fuzz_settings()
@given(st.lists(st.tuples(st.text(max_size=8), property_texts(),
                          st.sampled_from([0, int(TransactionType.ROLLBACK), int(TransactionType.COMMIT)])),
                max_size=12))
def test_batch_parse_equals_the_record_parse(batch: list[tuple[str, str, int]]) -> None:
    topics = [topic for topic, _, _ in batch]
    texts = [text for _, text, _ in batch]
    flags = [flag for _, _, flag in batch]
    sys_flags = np.array(flags, dtype=np.int32)
    fast = property_columns(pa.array(topics, pa.string()), pa.array(texts, pa.string()), sys_flags)
    slow = _property_columns(topics, texts, sys_flags)
    if fast is None:
        names = [[s.partition(NAME_VALUE_SEPARATOR)[0] for s in t.split(PROPERTY_SEPARATOR)
                  if s.partition(NAME_VALUE_SEPARATOR)[0] and s.partition(NAME_VALUE_SEPARATOR)[2]]
                 for t in texts]
        assert any(len(n) != len(set(n)) for n in names) or any(" " in (u or "")
                                                                 for u in slow["uniq_key"].to_pylist())
        return
    for name, column in slow.items():
        assert pa.array(fast[name]).to_pylist() == pa.array(column).to_pylist(), name


@fuzz_settings()
@given(st.lists(st.one_of(st.none(), st.text(max_size=20))))
def test_arrow_hashes_equal_the_java_hash(texts: list[str | None]) -> None:
    array = pa.array(texts, pa.string())
    assert arrow_java_hashes(array).tolist() == [java_string_hash(t or "") for t in texts]
    if len(texts) > 1:
        sliced = array.slice(1)
        assert arrow_java_hashes(sliced).tolist() == [java_string_hash(t or "") for t in texts[1:]]
