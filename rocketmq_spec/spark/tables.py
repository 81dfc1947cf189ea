"""The tables a store or a broker is read as: Arrow schemas and the conversion of decoded values.

The Arrow schema is the single definition; the Spark schema is derived from it, so the DataFrame the
source declares and the record batches its readers yield cannot drift apart. Timestamps stay int64
milliseconds, as stored, so that sums and joins are exact.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from rocketmq_spec.codec.compression import decompress_for_sys_flag
from rocketmq_spec.codec.hotpath import twin
from rocketmq_spec.codec.store import MessageRecord, index_keys
from rocketmq_spec.codec.store.columns import (
    RecordColumns,
    host_texts,
    index_key_hashes,
    java_string_hashes,
    offset_msg_ids,
    record_columns,
    slices,
)
from rocketmq_spec.codec.store.indexfile import record_tag_key
from rocketmq_spec.spark.property_columns import property_columns
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.hashing import index_key_hash, masked_crc32, tags_code
from rocketmq_spec.spec.indexfile import index_key, tag_index_key
from rocketmq_spec.spec.properties import PropertyKey, parse_properties, split_keys
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, MessageSysFlag, TransactionType

MESSAGE_SCHEMA = pa.schema([
    ("topic", pa.string()),
    ("queue_id", pa.int32()),
    ("queue_offset", pa.int64()),
    ("physical_offset", pa.int64()),
    ("total_size", pa.int32()),
    ("magic", pa.int64()),
    ("sys_flag", pa.int32()),
    ("body_crc", pa.int32()),
    ("crc_ok", pa.bool_()),
    ("flag", pa.int32()),
    ("born_timestamp", pa.int64()),
    ("born_host", pa.string()),
    ("store_timestamp", pa.int64()),
    ("store_host", pa.string()),
    ("reconsume_times", pa.int32()),
    ("prepared_transaction_offset", pa.int64()),
    ("tags", pa.string()),
    ("keys", pa.string()),
    ("properties", pa.map_(pa.string(), pa.string())),
    ("uniq_key", pa.string()),
    ("offset_msg_id", pa.string()),
    ("tags_code", pa.int64()),
    ("index_key_hashes", pa.list_(pa.int32())),
    ("tag_index_key_hash", pa.int32()),
    ("body_size", pa.int32()),
    ("body", pa.binary()),
    ("error_clause", pa.string()),
    ("error", pa.string()),
])
"""One row per CommitLog record. ``body_size`` is the stored length; ``body`` is the stored bytes or the
decompressed ones (``decompress`` option). ``tags_code`` and ``index_key_hashes`` are what the broker
derives for the consume queue and the index, so either can be joined with those tables;
``tag_index_key_hash`` is the hash of the ``topic#T#TAGS`` key 5.4.0+ adds (null for an untagged record or a
rollback), kept apart since older releases do not write it (RMQ-IDX-KEYS). A reader that
meets a malformed record emits one row with only ``physical_offset``, ``error_clause`` and ``error`` set,
when asked to, instead of failing the job."""

BROKER_FIELD = pa.field("broker", pa.string())
"""The broker a row came from: its ``brokerName`` (live reads) or its store's name (several stores)."""

LIVE_SCHEMA = pa.schema([BROKER_FIELD,
                         *(f for f in MESSAGE_SCHEMA if f.name not in ("error_clause", "error"))])
"""One row per message pulled from a live broker: the stored record as the pull returned it, named by
the broker it came from, with the body decompressed as a consumer sees it."""

CONSUME_QUEUE_SCHEMA = pa.schema([
    ("topic", pa.string()),
    ("queue_id", pa.int32()),
    ("queue_offset", pa.int64()),
    ("physical_offset", pa.int64()),
    ("size", pa.int32()),
    ("tags_code", pa.int64()),
])
"""One row per written consume-queue entry, pre-blank entries included."""

INDEX_SCHEMA = pa.schema([
    ("index_file", pa.string()),
    ("entry", pa.int32()),
    ("key_hash", pa.int32()),
    ("physical_offset", pa.int64()),
    ("time_diff", pa.int32()),
    ("prev_index", pa.int32()),
    ("begin_timestamp", pa.int64()),
])
"""One row per used index entry (numbers 1 .. index_count-1) with its file's begin timestamp, which
``time_diff`` is relative to."""


def spark_schema(schema: pa.Schema) -> StructType:
    return from_arrow_schema(schema)


ARROW_BATCH_ROWS = 8192
"""Rows per Arrow batch handed between the JVM and Python workers (Spark's default is 10,000); a power of
two near it keeps one batch of message rows with 1 KiB bodies well under a worker's memory."""


def batches(rows: Iterable[dict[str, Any]], schema: pa.Schema, size: int) -> Iterator[pa.RecordBatch]:
    """Group row dicts into record batches of at most ``size`` rows."""
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield pa.RecordBatch.from_pylist(chunk, schema=schema)
            chunk = []
    if chunk:
        yield pa.RecordBatch.from_pylist(chunk, schema=schema)


def _application_body(record: MessageRecord) -> bytes:
    return record.application_body


def _stored_body(record: MessageRecord) -> bytes:
    return record.body


def body_reader(decompress: bool) -> Callable[[MessageRecord], bytes]:
    """The body a row carries: as the producer sent it (decompressed) or as stored."""
    return _application_body if decompress else _stored_body


def message_row(record: MessageRecord, body: Callable[[MessageRecord], bytes]) -> dict[str, Any]:
    properties = record.properties
    return {
        "topic": record.topic, "queue_id": record.queue_id, "queue_offset": record.queue_offset,
        "physical_offset": record.physical_offset, "total_size": record.total_size, "magic": record.magic,
        "sys_flag": record.sys_flag, "body_crc": record.body_crc,
        "crc_ok": masked_crc32(record.body) == record.body_crc, "flag": record.flag,
        "born_timestamp": record.born_timestamp, "born_host": str(record.born_host),
        "store_timestamp": record.store_timestamp, "store_host": str(record.store_host),
        "reconsume_times": record.reconsume_times,
        "prepared_transaction_offset": record.prepared_transaction_offset,
        "tags": properties.get(PropertyKey.TAGS), "keys": properties.get(PropertyKey.KEYS),
        "properties": properties, "uniq_key": properties.get(PropertyKey.UNIQ_KEY),
        "offset_msg_id": record.offset_msg_id, "tags_code": tags_code(record.tags),
        "index_key_hashes": [index_key_hash(key) for key in index_keys(record, tags=False)],
        "tag_index_key_hash": None if (tag := record_tag_key(record)) is None else index_key_hash(tag),
        "body_size": len(record.body), "body": body(record),
    }


def error_row(error: RocketMQSpecError, offset: int) -> dict[str, Any]:
    return {"physical_offset": error.offset if error.offset is not None else offset,
            "error_clause": error.clause, "error": error.describe()}


def _arrow(offsets: np.ndarray, data: bytes, kind: pa.DataType) -> pa.Array:
    """An Arrow string or binary array over ``(offsets, data)`` as :mod:`rocketmq_spec.codec.store.columns`
    gives them (64-bit offsets, narrowed to the schema's type, which holds up to 2 GiB per batch as
    before)."""
    large = pa.large_binary() if kind == pa.binary() else pa.large_string()
    return pa.Array.from_buffers(large, len(offsets) - 1,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(data)]).cast(kind)


def _decodable(offsets: np.ndarray, data: bytes) -> int:
    """How many leading values of ``(offsets, data)`` are UTF-8, as ``decode_record`` requires."""
    view = memoryview(data)
    for number in range(len(offsets) - 1):
        try:
            str(view[offsets[number]:offsets[number + 1]], "utf-8")
        except UnicodeDecodeError:
            return number
    return len(offsets) - 1


def _leading_texts(view: object, at: np.ndarray, lengths: np.ndarray) -> int:
    """How many leading byte ranges ``[at, at + length)`` of ``view`` are UTF-8, as ``decode_record``
    requires of a topic and a properties string: Arrow validates them all at once, and only where it
    refuses one are they decoded one by one to find which."""
    parts = slices(view, at, lengths)
    return len(at) if _arrow_valid(parts) else _decodable(*parts)


_checked_texts = twin("leading_texts", _leading_texts, declines=True)


def leading_texts(view: object, at: np.ndarray, lengths: np.ndarray) -> int:
    """:func:`_leading_texts`, compiled where the extension is built (:mod:`rocketmq_spec.codec.hotpath`),
    which checks the ranges where they lie: a query that returns neither topics nor properties copies
    neither."""
    return int(_checked_texts(view, np.ascontiguousarray(at, dtype=np.int64),
                              np.ascontiguousarray(lengths, dtype=np.int64)))


def _texts(view: object, at: np.ndarray, lengths: np.ndarray) -> pa.Array:
    return _arrow(*slices(view, at, lengths), pa.string())


def _bodies_that_decompress(columns: RecordColumns, offsets: np.ndarray, data: bytes,
                            count: int) -> tuple[int, dict[int, bytes]]:
    """The application bodies of the compressed records among the first ``count``, up to the first that
    does not decompress (whose number is returned, ``count`` when all do)."""
    view = memoryview(data)
    compressed = np.flatnonzero(columns.sys_flag[:count] & MessageSysFlag.COMPRESSED)
    bodies = {}
    for number in compressed.tolist():
        try:
            bodies[number] = decompress_for_sys_flag(bytes(view[offsets[number]:offsets[number + 1]]),
                                                     int(columns.sys_flag[number]))
        except RocketMQSpecError:
            return number, bodies
    return count, bodies


PROPERTY_COLUMNS = frozenset({"tags", "keys", "properties", "uniq_key", "tags_code", "index_key_hashes",
                              "tag_index_key_hash"})
"""The columns derived from the properties string (parsed once for all of them)."""


FIXED_COLUMNS = frozenset({"queue_id", "queue_offset", "physical_offset", "total_size", "magic", "sys_flag",
                           "body_crc", "flag", "born_timestamp", "store_timestamp", "reconsume_times",
                           "prepared_transaction_offset"})
"""The columns that are a fixed field of the record, as :class:`RecordColumns` names them."""


def message_schema(columns: Collection[str] | None) -> pa.Schema:
    """:data:`MESSAGE_SCHEMA` restricted to ``columns`` (all when ``None``), in the schema's order."""
    if columns is None:
        return MESSAGE_SCHEMA
    return pa.schema([field for field in MESSAGE_SCHEMA if field.name in columns])


def message_batch(view: object, starts: np.ndarray, *, decompress: bool,
                  columns: Collection[str] | None = None) -> tuple[pa.RecordBatch, int]:
    """Rows of the records at ``starts`` (positions the codec's walk accepted in ``view``), built column
    by column, and how many records they cover: the batch ends before the first record whose variable
    parts the columns cannot vouch for (TOTALSIZE off, text not UTF-8, a body that does not decompress
    when asked to), which the caller hands to the record decoder to report exactly. Values equal
    :func:`message_row`'s for the same records. Only ``columns`` are built (all when ``None``); which
    records the batch covers does not depend on them."""
    schema = message_schema(columns)
    wanted = set(schema.names)
    fixed = record_columns(view, starts)
    count = fixed.first_unsound()
    count = leading_texts(view, fixed.topic_at[:count], fixed.topic_length[:count])
    count = leading_texts(view, fixed.properties_at[:count], fixed.properties_length[:count])
    arrays: dict[str, Any] = {}
    if decompress or wanted & {"body", "crc_ok"}:
        arrays.update(_body_columns(view, fixed, count, decompress))
        count = len(arrays["crc_ok"])
    if wanted & (PROPERTY_COLUMNS | {"topic"}):
        arrays["topic"] = _texts(view, fixed.topic_at[:count], fixed.topic_length[:count])
    if wanted & PROPERTY_COLUMNS:
        topics = arrays["topic"]
        texts = _texts(view, fixed.properties_at[:count], fixed.properties_length[:count])
        arrays.update(property_columns(topics, texts, fixed.sys_flag[:count])
                      or _property_columns(topics.to_pylist(), texts.to_pylist(), fixed.sys_flag[:count]))
    for name, v6 in (("born_host", fixed.born_v6), ("store_host", fixed.store_v6)):
        if name in wanted:
            texts_of, at = host_texts(getattr(fixed, name)[:count], v6[:count])
            arrays[name] = pa.array(texts_of, pa.string()).take(at)
    if "offset_msg_id" in wanted:
        arrays["offset_msg_id"] = _arrow(*offset_msg_ids(fixed.store_host[:count], fixed.store_v6[:count],
                                                         fixed.physical_offset[:count]), pa.string())
    arrays.update({name: getattr(fixed, name)[:count] for name in wanted & FIXED_COLUMNS})
    if "body_size" in wanted:
        arrays["body_size"] = fixed.body_length[:count]
    arrays.update({name: pa.nulls(count, pa.string()) for name in wanted & {"error_clause", "error"}})
    batch = pa.RecordBatch.from_arrays([pa.array(arrays[f.name], f.type) for f in schema], schema=schema)
    return batch, count


def _body_columns(view: object, fixed: RecordColumns, count: int, decompress: bool) -> dict[str, Any]:
    """``body`` and ``crc_ok`` of the first ``count`` records, or of fewer: up to the first whose body
    does not decompress when ``decompress`` asks for application bodies."""
    body_offsets, body_data = slices(view, fixed.body_at[:count], fixed.body_length[:count])
    decompressed: dict[int, bytes] = {}
    if decompress:
        count, decompressed = _bodies_that_decompress(fixed, body_offsets, body_data, count)
    body_offsets = body_offsets[:count + 1]
    stored = _arrow(body_offsets, body_data, pa.binary())
    body_view = memoryview(body_data)
    crc_ok = np.fromiter((zlib.crc32(body_view[a:b]) & 0x7FFFFFFF for a, b in
                          zip(body_offsets[:-1].tolist(), body_offsets[1:].tolist(), strict=True)),
                         dtype=np.int64, count=count) == fixed.body_crc[:count]
    if decompressed:
        body = pa.array([decompressed.get(n, value) for n, value in enumerate(stored.to_pylist())],
                        pa.binary())
    else:
        body = stored
    return {"body": body, "crc_ok": crc_ok}


def _arrow_valid(parts: tuple[np.ndarray, bytes]) -> bool:
    try:
        _arrow(*parts, pa.string()).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _property_columns(topics: list[str], texts: list[str], sys_flags: np.ndarray) -> dict[str, pa.Array]:
    """The columns derived from the properties string, record by record: the map (parsed as Java does),
    TAGS, KEYS, UNIQ_KEY, the tags code and the index key hashes. For the batches that
    :func:`rocketmq_spec.spark.property_columns.property_columns` declines."""
    names: list[str] = []
    values: list[str] = []
    map_offsets = [0]
    tags: list[str | None] = []
    keys: list[str | None] = []
    uniq: list[str | None] = []
    indexed: list[str] = []
    tag_keys: list[str] = []
    tagged: list[bool] = []
    key_offsets = [0]
    rolled_back = ((sys_flags & TRANSACTION_MASK) == TransactionType.ROLLBACK).tolist()
    for topic, text, rollback in zip(topics, texts, rolled_back, strict=True):
        parsed = parse_properties(text)
        names += parsed
        values += parsed.values()
        map_offsets.append(len(names))
        tags.append(parsed.get(PropertyKey.TAGS))
        keys.append(parsed.get(PropertyKey.KEYS))
        uniq.append(parsed.get(PropertyKey.UNIQ_KEY))
        if not rollback:
            record_keys = ([uniq[-1]] if uniq[-1] else []) + split_keys(keys[-1])
            indexed += (index_key(topic, key) for key in record_keys)
        key_offsets.append(len(indexed))
        tagged.append(bool(tags[-1]) and not rollback)
        tag_keys.append(tag_index_key(topic, tags[-1] or ""))
    properties = pa.MapArray.from_arrays(pa.array(map_offsets, pa.int32()), pa.array(names, pa.string()),
                                         pa.array(values, pa.string()))
    return {
        "tags": pa.array(tags, pa.string()), "keys": pa.array(keys, pa.string()),
        "properties": properties, "uniq_key": pa.array(uniq, pa.string()),
        "tags_code": java_string_hashes([tag or "" for tag in tags]).astype(np.int64),
        "index_key_hashes": pa.ListArray.from_arrays(pa.array(key_offsets, pa.int32()),
                                                     pa.array(index_key_hashes(indexed), pa.int32())),
        "tag_index_key_hash": pa.array(index_key_hashes(tag_keys), pa.int32(), mask=~np.array(tagged, bool)),
    }
