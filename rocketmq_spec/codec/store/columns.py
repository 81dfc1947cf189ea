"""Column-wise decoding of many CommitLog records at once, for readers that build tables (Spark, Arrow).

Decoding record by record costs tens of microseconds in Python; a table reader needs the same field of
thousands of records, and every fixed field sits at a position that depends only on the record start and the
two host widths (``rocketmq_spec.spec.commitlog``'s positions, the host bits of SYSFLAG). So each field is
gathered for a whole batch with one numpy indexing operation over the mapped file, variable parts (body,
topic, properties) are cut out by their offsets into one contiguous copy, and hosts and offsetMsgIds are
formatted once per distinct value instead of once per record.

The record starts come from the codec's own walk (:meth:`rocketmq_spec.codec.store.commitlog.CommitLog.scan`),
which checks boundaries, magic, TOTALSIZE bounds and PHYSICALOFFSET; :attr:`RecordColumns.sound` adds the
check that needs the variable parts (TOTALSIZE equals the length they add up to). A reader hands any record
that is not sound to :func:`rocketmq_spec.codec.store.record.decode_record`, which reports it exactly.
``tests/test_store_columns.py`` holds every column equal to ``decode_record`` on generated records. """

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rocketmq_spec.codec.fast_store import BORNHOST_V6, STOREHOST_V6, ip_text
from rocketmq_spec.spec.commitlog import (
    BODY_CRC_POSITION,
    BORN_HOST_POSITION,
    BORN_TIMESTAMP_POSITION,
    FLAG_POSITION,
    IPV4_HOST_SIZE,
    IPV6_HOST_SIZE,
    MAGIC_POSITION,
    MESSAGE_MAGIC_V2,
    PHYSICAL_OFFSET_POSITION,
    QUEUE_ID_POSITION,
    QUEUE_OFFSET_POSITION,
    SYS_FLAG_POSITION,
)
from rocketmq_spec.spec.hashing import INT32_MIN, java_string_hash

_INT32 = 4
_INT64 = 8
_PORT = 4
"""Width of the port after a host's address, and of every other int32 field."""
_SHORT = 2
_IPV4 = IPV4_HOST_SIZE - _PORT
_IPV6 = IPV6_HOST_SIZE - _PORT
_HEX_DIGITS = np.frombuffer(b"".join(f"{n:02X}".encode() for n in range(256)), np.uint8).reshape(256, 2)
"""Uppercase hex of every byte value, as offsetMsgId text spells it."""


def _gather(buf: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes at each position of ``at``: one row per position."""
    return buf[at[:, None] + np.arange(width)]


def _int(buf: np.ndarray, at: np.ndarray, dtype: str) -> np.ndarray:
    """Big-endian integers of ``dtype`` at each position, as native int64 (int32 for 4-byte fields)."""
    raw = _gather(buf, at, np.dtype(dtype).itemsize).view(dtype).reshape(-1)
    return raw.astype(np.int32 if dtype == ">i4" else np.int64)


def _bytes(view: object) -> np.ndarray:
    return np.frombuffer(view, dtype=np.uint8)  # type: ignore[call-overload]


def _host(buf: np.ndarray, at: np.ndarray, v6: np.ndarray) -> np.ndarray:
    """Host rows as :class:`RecordColumns` keeps them: IPv4 address and port moved to the layout of a
    zero-padded IPv6 host, so that one row shape serves both widths."""
    rows = _gather(buf, at, IPV6_HOST_SIZE)
    v4 = ~v6
    rows[v4, _IPV6:] = rows[v4, _IPV4:IPV4_HOST_SIZE]
    rows[v4, _IPV4:_IPV6] = 0
    return rows


class _FixedField:
    """A field at the same position in every record (position, big-endian type: a row of the record
    layout), read for all records at once the first time a query asks for it, then kept on the batch."""

    def __init__(self, position: int, dtype: str) -> None:
        self.position, self.dtype = position, dtype

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, batch: RecordColumns, owner: type | None = None) -> np.ndarray:
        value = _int(batch.buf, batch.at + self.position, self.dtype)
        batch.__dict__[self.name] = value  # non-data descriptor: from now on the instance value wins
        return value


@dataclass(frozen=True)
class RecordColumns:
    """The fields of a batch of records, one numpy array per field, in record order.

    The fields that locate the variable parts and judge a record sound are read at once; every other fixed
    field is gathered when first asked for (a table reader builds only the columns its query needs, and
    each gather is a pass over the batch). Hosts are rows of :data:`IPV6_HOST_SIZE` bytes (address then
    port) with the unused bytes of an IPv4 host zeroed, so equal hosts are equal rows; ``*_at`` are
    positions in the buffer the columns were read from.
    """

    buf: np.ndarray
    at: np.ndarray
    """The record starts."""
    total_size: np.ndarray
    magic: np.ndarray
    sys_flag: np.ndarray
    store_timestamp_at: np.ndarray
    body_at: np.ndarray
    body_length: np.ndarray
    topic_at: np.ndarray
    topic_length: np.ndarray
    properties_at: np.ndarray
    properties_length: np.ndarray
    sound: np.ndarray
    """TOTALSIZE equals the length of the parts and the parts lie within it (``decode_record``'s check)."""

    def __len__(self) -> int:
        return len(self.total_size)

    @property
    def born_v6(self) -> np.ndarray:
        return (self.sys_flag & BORNHOST_V6) != 0

    @property
    def store_v6(self) -> np.ndarray:
        """Host widths are not in the host rows (an IPv6 address may look like a padded IPv4 one)."""
        return (self.sys_flag & STOREHOST_V6) != 0

    def first_unsound(self) -> int:
        """Index of the first record that is not sound, or the number of records when all are."""
        bad = np.flatnonzero(~self.sound)
        return int(bad[0]) if len(bad) else len(self)

    body_crc = _FixedField(BODY_CRC_POSITION, ">i4")
    queue_id = _FixedField(QUEUE_ID_POSITION, ">i4")
    flag = _FixedField(FLAG_POSITION, ">i4")
    queue_offset = _FixedField(QUEUE_OFFSET_POSITION, ">i8")
    physical_offset = _FixedField(PHYSICAL_OFFSET_POSITION, ">i8")
    born_timestamp = _FixedField(BORN_TIMESTAMP_POSITION, ">i8")

    @cached_property
    def born_host(self) -> np.ndarray:
        return _host(self.buf, self.at + BORN_HOST_POSITION, self.born_v6)

    @cached_property
    def store_timestamp(self) -> np.ndarray:
        return _int(self.buf, self.store_timestamp_at, ">i8")

    @property
    def _store_host_at(self) -> np.ndarray:
        return self.store_timestamp_at + _INT64

    @cached_property
    def store_host(self) -> np.ndarray:
        return _host(self.buf, self._store_host_at, self.store_v6)

    @property
    def _reconsume_at(self) -> np.ndarray:
        return self._store_host_at + np.where(self.store_v6, IPV6_HOST_SIZE, IPV4_HOST_SIZE)

    @cached_property
    def reconsume_times(self) -> np.ndarray:
        return _int(self.buf, self._reconsume_at, ">i4")

    @cached_property
    def prepared_transaction_offset(self) -> np.ndarray:
        return _int(self.buf, self._reconsume_at + _INT32, ">i8")


def record_columns(view: object, starts: np.ndarray) -> RecordColumns:
    """The columns of the records starting at ``starts`` (positions in ``view``, a bytes-like object).

    Every start must be one the codec's walk accepted (its fixed fields lie within TOTALSIZE and the
    buffer); the variable parts are only trusted where :attr:`RecordColumns.sound` is true.
    """
    buf = _bytes(view)
    at = np.asarray(starts, dtype=np.int64)
    sys_flag = _int(buf, at + SYS_FLAG_POSITION, ">i4")
    born_v6 = (sys_flag & BORNHOST_V6) != 0
    store_v6 = (sys_flag & STOREHOST_V6) != 0
    store_timestamp_at = at + BORN_HOST_POSITION + np.where(born_v6, IPV6_HOST_SIZE, IPV4_HOST_SIZE)
    body_length_at = (store_timestamp_at + _INT64 + np.where(store_v6, IPV6_HOST_SIZE, IPV4_HOST_SIZE)
                      + _INT32 + _INT64)
    body_at = body_length_at + _INT32
    total_size = _int(buf, at, ">i4")
    end = at + total_size
    magic = _int(buf, at + MAGIC_POSITION, ">u4")
    body_length = _int(buf, body_length_at, ">i4")
    topic_prefix_at = body_at + np.maximum(body_length, 0)
    topic_prefix = np.where(magic == MESSAGE_MAGIC_V2, _SHORT, 1)
    last = len(buf) - 1
    prefix_fits = (body_length >= 0) & (topic_prefix_at + topic_prefix <= end)
    safe_topic_prefix_at = np.where(prefix_fits, topic_prefix_at, 0)
    long_topic = _int(buf, safe_topic_prefix_at, ">u2")
    topic_length = np.where(topic_prefix == _SHORT, long_topic, buf[np.minimum(safe_topic_prefix_at, last)])
    topic_at = topic_prefix_at + topic_prefix
    properties_length_at = topic_at + topic_length
    properties_fit = prefix_fits & (properties_length_at + _SHORT <= end)
    properties_length = _int(buf, np.where(properties_fit, properties_length_at, 0), ">u2")
    properties_at = properties_length_at + _SHORT
    return RecordColumns(
        buf=buf, at=at, total_size=total_size, magic=magic, sys_flag=sys_flag,
        store_timestamp_at=store_timestamp_at, body_at=body_at, body_length=body_length, topic_at=topic_at,
        topic_length=topic_length, properties_at=properties_at, properties_length=properties_length,
        sound=properties_fit & (properties_at + properties_length == end),
    )


_GATHER_MAX_MEAN = 256
"""Mean range length up to which :func:`slices` gathers with one numpy index (8 bytes of index per byte
copied: cheap for topics and properties); longer ranges (bodies) are joined as memoryview slices."""


def slices(view: object, at: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, bytes]:
    """The byte ranges ``[at, at + length)`` of ``view`` as Arrow-style ``(offsets, data)``: ``offsets``
    has one more entry than there are ranges, and range ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""
    offsets = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if total <= _GATHER_MAX_MEAN * len(at):
        index = np.repeat(np.asarray(at, dtype=np.int64) - offsets[:-1], lengths) + np.arange(total)
        return offsets, _bytes(view)[index].tobytes()
    whole = memoryview(view).cast("B")  # type: ignore[arg-type]
    ends = at + lengths
    return offsets, b"".join([whole[a:b] for a, b in zip(at.tolist(), ends.tolist(), strict=True)])


def host_texts(hosts: np.ndarray, v6: np.ndarray) -> tuple[list[str], np.ndarray]:
    """``ip:port`` (``[ip]:port`` for IPv6) of every host row: the distinct texts and, per row, the index
    of its text. A store holds few distinct hosts, so each is formatted once."""
    keyed = np.ascontiguousarray(np.concatenate([hosts, v6[:, None].astype(np.uint8)], axis=1))
    distinct, inverse = np.unique(keyed.view(f"V{keyed.shape[1]}").reshape(-1), return_inverse=True)
    texts = []
    for key in distinct.tolist():
        ip = ip_text(key[:_IPV6] if key[-1] else key[:_IPV4])
        port = int.from_bytes(key[_IPV6:IPV6_HOST_SIZE], "big", signed=True)
        texts.append(f"[{ip}]:{port}" if key[-1] else f"{ip}:{port}")
    return texts, inverse.reshape(-1)


def offset_msg_ids(store_hosts: np.ndarray, v6: np.ndarray,
                   physical_offsets: np.ndarray) -> tuple[np.ndarray, bytes]:
    """offsetMsgId text (store address, port, physical offset in uppercase hex) of every record, as
    ``(offsets, data)`` like :func:`slices`."""
    count = len(physical_offsets)
    raw = np.zeros((count, IPV6_HOST_SIZE + _INT64), dtype=np.uint8)
    raw[:, :IPV6_HOST_SIZE] = store_hosts
    raw[:, IPV6_HOST_SIZE:] = physical_offsets.astype(">i8").view(np.uint8).reshape(count, _INT64)
    v4 = ~v6
    raw[v4, _IPV4:_IPV4 + _PORT + _INT64] = raw[v4, _IPV6:]
    widths = np.where(v6, IPV6_HOST_SIZE + _INT64, IPV4_HOST_SIZE + _INT64) * 2
    digits = _HEX_DIGITS[raw].reshape(count, 2 * raw.shape[1])
    data = digits[np.arange(digits.shape[1]) < widths[:, None]].tobytes()
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(widths, out=offsets[1:])
    return offsets, data


_powers = np.ones(1, dtype=np.uint32)


def _powers_of_31(count: int) -> np.ndarray:
    """``31**k mod 2**32`` for k below ``count``, extended as longer strings come along."""
    global _powers
    if len(_powers) < count:
        grown = np.empty(max(count, 2 * len(_powers)), dtype=np.uint32)
        grown[0] = 1
        for k in range(1, len(grown)):
            grown[k] = (int(grown[k - 1]) * 31) & 0xFFFFFFFF
        _powers = grown
    return _powers[:count]


def packed_ascii_hashes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``String.hashCode`` (int32) of each ASCII text packed as ``(offsets, data)`` like :func:`slices`
    gives them (one UTF-16 unit per byte): ``h = sum(c[j] * 31**(n-1-j))`` modulo 2**32, with the powers
    from a table and each text's sum as the difference of one running sum."""
    offsets = np.asarray(offsets, dtype=np.int64)
    raw = np.asarray(data, dtype=np.uint8)[offsets[0]:offsets[-1]]
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    owner_end = np.repeat(offsets[1:], lengths)
    weights = _powers_of_31(int(lengths.max(initial=0)))[owner_end - 1 - np.arange(len(raw))]
    running = np.zeros(len(raw) + 1, dtype=np.uint64)
    np.cumsum(raw.astype(np.uint64) * weights.astype(np.uint64), out=running[1:])
    return ((running[offsets[1:]] - running[offsets[:-1]]) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def java_string_hashes(texts: Sequence[str]) -> np.ndarray:
    """``String.hashCode`` of each text (int32), equal to ``rocketmq_spec.spec.hashing.java_string_hash``:
    ASCII texts hashed together (:func:`packed_ascii_hashes`), other texts by the spec's function one by
    one."""
    ascii_texts = [text if text.isascii() else "" for text in texts]
    raw = np.frombuffer("".join(ascii_texts).encode("ascii"), dtype=np.uint8)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(text) for text in ascii_texts), dtype=np.int64, count=len(texts)),
              out=offsets[1:])
    hashes = packed_ascii_hashes(offsets, raw)
    for number, text in enumerate(texts):
        if not text.isascii():
            hashes[number] = java_string_hash(text)
    return hashes


def index_hashes(hashes: np.ndarray) -> np.ndarray:
    """``IndexFile.indexKeyHashMethod`` of keys whose ``String.hashCode`` values are ``hashes``: the
    absolute value, with Integer.MIN_VALUE taken as 0."""
    return np.where(hashes == INT32_MIN, 0, np.abs(hashes.astype(np.int64))).astype(np.int32)


def index_key_hashes(keys: Sequence[str]) -> np.ndarray:
    """``IndexFile.indexKeyHashMethod`` of each key, equal to
    ``rocketmq_spec.spec.hashing.index_key_hash``."""
    return index_hashes(java_string_hashes(keys))
