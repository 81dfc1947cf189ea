"""The tables a store or a broker is read as: Arrow schemas and the conversion of decoded values.

The Arrow schema is the single definition; the Spark schema is derived from it, so the DataFrame the
source declares and the record batches its readers yield cannot drift apart. Timestamps stay int64
milliseconds, as stored, so that sums and joins are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from codec.store import MessageRecord, index_keys
from spec.errors import RocketMQSpecError
from spec.hashing import index_key_hash, masked_crc32, tags_code
from spec.properties import PropertyKey

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
    ("body_size", pa.int32()),
    ("body", pa.binary()),
    ("error_clause", pa.string()),
    ("error", pa.string()),
])
"""One row per CommitLog record. ``body_size`` is the stored length; ``body`` is the stored bytes or the
decompressed ones (``decompress`` option). ``tags_code`` and ``index_key_hashes`` are what the broker
derives for the consume queue and the index, so either can be joined with those tables. A reader that
meets a malformed record emits one row with only ``physical_offset``, ``error_clause`` and ``error`` set,
when asked to, instead of failing the job."""

LIVE_SCHEMA = pa.schema([pa.field("broker", pa.string()),
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
        "index_key_hashes": [index_key_hash(key) for key in index_keys(record)],
        "body_size": len(record.body), "body": body(record),
    }


def error_row(error: RocketMQSpecError, offset: int) -> dict[str, Any]:
    return {"physical_offset": error.offset if error.offset is not None else offset,
            "error_clause": error.clause, "error": error.describe()}
