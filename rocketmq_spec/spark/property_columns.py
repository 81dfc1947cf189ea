"""The columns a batch of records derives from its properties strings, parsed for the whole batch at once.

A properties string is ``name\\x01value`` pairs joined by ``\\x02`` (RMQ-PROP-PARSING); both separators
are single bytes that never occur inside a UTF-8 sequence, so Arrow's string kernels can split every
record's text in one pass each, where parsing record by record costs microseconds of Python per record.
The result equals ``tables.message_row``'s for the same records, or is ``None`` for a batch the kernels
cannot vouch for: a record naming one property twice (Java's map keeps the last, which a split cannot
tell) or a UNIQ_KEY holding the keys' separator. The caller parses such a batch record by record.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketmq_spec.codec.store.columns import index_hashes, java_string_hashes, packed_ascii_hashes
from rocketmq_spec.spec.indexfile import index_key, tag_index_key
from rocketmq_spec.spec.properties import KEY_SEPARATOR, NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, PropertyKey
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, TransactionType

_INDEX_KEY_JOIN = index_key("", "")
"""What joins a topic and a key into an index key (``topic#key``)."""
_TAG_KEY_JOIN = tag_index_key("", "")
"""What joins a topic and a TAGS string into a tag index key (``topic#T#TAGS``, 5.4.0+)."""


def arrow_java_hashes(texts: pa.Array) -> np.ndarray:
    """``String.hashCode`` of each text of a string array (nulls hash as the empty string does)."""
    texts = pc.fill_null(texts, "") if texts.null_count else texts
    if not len(texts):
        return np.zeros(0, dtype=np.int32)
    if not pc.all(pc.string_is_ascii(texts)).as_py():
        return java_string_hashes(texts.to_pylist())
    _, offsets, data = texts.buffers()
    positions = np.frombuffer(offsets, dtype=np.int32)[texts.offset:texts.offset + len(texts) + 1]
    raw = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, dtype=np.uint8)
    return packed_ascii_hashes(positions, raw)


def _by_record(count: int, owners: np.ndarray, values: pa.Array) -> pa.Array:
    """Per record, the value whose owner it is, null where it has none (owners are distinct)."""
    take = np.full(count, -1, dtype=np.int64)
    take[owners] = np.arange(len(owners))
    return values.take(pa.array(take, mask=take < 0))


def property_columns(topics: pa.Array, texts: pa.Array, sys_flags: np.ndarray) -> dict[str, pa.Array] | None:
    """The map, TAGS, KEYS, UNIQ_KEY, tags code and index key hashes of each record, or ``None`` when
    the batch needs the record-by-record parser (see the module's docstring)."""
    count = len(texts)
    segments = pc.split_pattern(texts, PROPERTY_SEPARATOR)
    owner = pc.list_parent_indices(segments).to_numpy()
    pairs = pc.split_pattern(pc.list_flatten(segments), NAME_VALUE_SEPARATOR, max_splits=1)
    paired = pc.equal(pc.list_value_length(pairs), 2)
    pairs, owner = pairs.filter(paired), owner[paired.to_numpy(zero_copy_only=False)]
    names, values = pc.list_element(pairs, 0), pc.list_element(pairs, 1)
    kept = pc.and_(pc.greater(pc.binary_length(names), 0), pc.greater(pc.binary_length(values), 0))
    keep = kept.to_numpy(zero_copy_only=False)
    names, values, owner = names.filter(kept), values.filter(kept), owner[keep]
    named = pa.table({"owner": owner, "name": names})
    if named.group_by(["owner", "name"]).aggregate([]).num_rows != len(owner):
        return None
    map_offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(np.bincount(owner, minlength=count), out=map_offsets[1:])

    def column(key: str) -> pa.Array:
        match = pc.equal(names, key).to_numpy(zero_copy_only=False)
        return _by_record(count, owner[match], values.filter(pa.array(match)))

    tags, keys, uniq = column(PropertyKey.TAGS), column(PropertyKey.KEYS), column(PropertyKey.UNIQ_KEY)
    if pc.any(pc.match_substring(uniq, KEY_SEPARATOR)).as_py():
        return None
    rolled_back = (sys_flags & TRANSACTION_MASK) == TransactionType.ROLLBACK
    joined = pc.binary_join_element_wise(pc.fill_null(uniq, ""), pc.fill_null(keys, ""), KEY_SEPARATOR)
    joined = pc.if_else(pa.array(rolled_back), "", joined)
    record_keys = pc.split_pattern(joined, KEY_SEPARATOR)
    key_owner = pc.list_parent_indices(record_keys).to_numpy()
    flat_keys = pc.list_flatten(record_keys)
    present = pc.greater(pc.binary_length(flat_keys), 0)
    flat_keys, key_owner = flat_keys.filter(present), key_owner[present.to_numpy(zero_copy_only=False)]
    indexed = pc.binary_join_element_wise(topics.take(pa.array(key_owner)), flat_keys, _INDEX_KEY_JOIN)
    key_offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(np.bincount(key_owner, minlength=count), out=key_offsets[1:])
    tagged = pc.fill_null(pc.greater(pc.binary_length(tags), 0), False)
    untagged = pc.or_(pc.invert(tagged), pa.array(rolled_back))
    tag_hashes = index_hashes(arrow_java_hashes(pc.binary_join_element_wise(topics, pc.fill_null(tags, ""),
                                                                            _TAG_KEY_JOIN)))
    return {
        "tags": tags, "keys": keys,
        "properties": pa.MapArray.from_arrays(pa.array(map_offsets), names, values),
        "uniq_key": uniq,
        "tags_code": arrow_java_hashes(tags).astype(np.int64),
        "index_key_hashes": pa.ListArray.from_arrays(pa.array(key_offsets),
                                                     pa.array(index_hashes(arrow_java_hashes(indexed)),
                                                              pa.int32())),
        "tag_index_key_hash": pa.array(tag_hashes, pa.int32(), mask=untagged.to_numpy(zero_copy_only=False)),
    }
