"""Hand-written fast paths for the store formats, proven equal to the ``spec`` schemas by properties.

Scanning a CommitLog only needs the fixed fields of each record, and scanning consume queues only needs
arrays; building construct containers for that is orders of magnitude slower than ``struct`` and
``numpy``. Tests (``tests/test_store_fast.py``) check these against ``CommitLogRecord`` and
``ConsumeQueueEntry`` on generated data, so the schemas stay the single source of truth.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from codec.store.consumequeue import CQ_DTYPE
from spec.commitlog import IPV4_HOST_SIZE, IPV6_HOST_SIZE
from spec.sysflag import MessageSysFlag

_HEAD = struct.Struct(">iIiiiqqiq")
"""TOTALSIZE .. BORNTIMESTAMP: the part before the first variable-width host."""
_HOST4 = struct.Struct(">4si")
_HOST6 = struct.Struct(">16si")
_INT64 = struct.Struct(">q")
_TAIL = struct.Struct(">iqi")
"""RECONSUMETIMES, PREPARED OFFSET, body length."""


class FixedFields(NamedTuple):
    total_size: int
    magic: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    physical_offset: int
    sys_flag: int
    born_timestamp: int
    born_ip: bytes
    born_port: int
    store_timestamp: int
    store_ip: bytes
    store_port: int
    reconsume_times: int
    prepared_transaction_offset: int
    body_length: int
    body_position: int
    """Offset of the body from the record start."""


def unpack_fixed(buf: bytes | memoryview, pos: int = 0) -> FixedFields:
    """Every field of the record at ``pos`` up to the body length, without building the body."""
    head = _HEAD.unpack_from(buf, pos)
    sys_flag = head[7]
    at = pos + _HEAD.size
    born = (_HOST6 if sys_flag & MessageSysFlag.BORNHOST_V6 else _HOST4).unpack_from(buf, at)
    at += IPV6_HOST_SIZE if sys_flag & MessageSysFlag.BORNHOST_V6 else IPV4_HOST_SIZE
    (store_ts,) = _INT64.unpack_from(buf, at)
    at += _INT64.size
    store = (_HOST6 if sys_flag & MessageSysFlag.STOREHOST_V6 else _HOST4).unpack_from(buf, at)
    at += IPV6_HOST_SIZE if sys_flag & MessageSysFlag.STOREHOST_V6 else IPV4_HOST_SIZE
    reconsume, prepared, body_len = _TAIL.unpack_from(buf, at)
    return FixedFields(*head, *born, store_ts, *store, reconsume, prepared, body_len, at + _TAIL.size - pos)


def cq_entries(data: bytes | memoryview) -> np.ndarray:
    """Consume-queue entries of a byte string (whole entries only; a partial tail is ignored)."""
    usable = len(data) - len(data) % CQ_DTYPE.itemsize
    return np.frombuffer(data[:usable], dtype=CQ_DTYPE)


def encode_cq_entries(offsets: np.ndarray, sizes: np.ndarray, tags_codes: np.ndarray) -> bytes:
    """Many consume-queue entries at once, e.g. when rebuilding a queue from the CommitLog."""
    out = np.empty(len(offsets), dtype=CQ_DTYPE)
    out["commitlog_offset"], out["size"], out["tags_code"] = offsets, sizes, tags_codes
    return out.tobytes()
