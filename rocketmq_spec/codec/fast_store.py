"""Hand-written fast paths for the store formats, proven equal to the ``rocketmq_spec.spec`` schemas by
properties.

The broker encodes one record, one consume-queue entry and about three index entries per send, and a scan of a
CommitLog only needs the fixed fields of each record; construct containers cost 50-100 µs per record for that,
``struct`` a few. Tests (``tests/test_store_fast.py``, ``tests/test_store_fastpath_*.py``) hold these equal to
``CommitLogRecord``, ``ConsumeQueueEntry``, ``IndexHeader``/``IndexEntry`` and the offsetMsgId schemas on
generated data, including which inputs they refuse, so the schemas stay the single source of truth. Nothing
here imports ``rocketmq_spec.codec.store``: the store modules build on these functions. """

from __future__ import annotations

import ipaddress
import mmap
import struct
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import NamedTuple, NoReturn

import numpy as np

from rocketmq_spec.codec.hotpath import twin
from rocketmq_spec.spec import hashing as spec_hashing
from rocketmq_spec.spec.commitlog import (
    FIXED_PART_V4,
    MESSAGE_MAGIC_V1,
    MESSAGE_MAGIC_V2,
    RMQ_CL_LAYOUT,
    RMQ_CL_TOTAL_SIZE,
)
from rocketmq_spec.spec.consumequeue import RMQ_CQ_ENTRY
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.indexfile import (
    FIRST_INDEX,
    INVALID_INDEX,
    entry_position,
    slot_position,
    time_diff_seconds,
)
from rocketmq_spec.spec.properties import encode_properties as spec_encode_properties
from rocketmq_spec.spec.sysflag import MessageSysFlag

RECORD_PREFIX = struct.Struct(">iI")
"""``RecordPrefix``: TOTALSIZE and MAGICCODE, also the whole BLANK marker."""
_HEAD = struct.Struct(">iIiiiqqiq")
"""TOTALSIZE .. BORNTIMESTAMP: the part before the first variable-width host."""
_HOST4 = struct.Struct(">4si")
_HOST6 = struct.Struct(">16si")
BORNHOST_V6 = int(MessageSysFlag.BORNHOST_V6)
STOREHOST_V6 = int(MessageSysFlag.STOREHOST_V6)
"""The host-width bits as plain ints: flag-enum arithmetic costs microseconds per operation."""
_INT32_SIZE = 4
"""The port after a host's address."""
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_TAIL = struct.Struct(">iqi")
"""RECONSUMETIMES, PREPARED OFFSET, body length."""
_TOPIC_LENGTH = {False: struct.Struct(">B"), True: struct.Struct(">H")}
"""Topic length prefix by ``magic == v2``."""
_PROPERTIES_LENGTH = struct.Struct(">H")
_MSG_ID_TAIL = struct.Struct(">iq")
"""Port and commitlog offset after the IP of an offsetMsgId."""

CQ_ENTRY = struct.Struct(">qiq")
"""commitlog offset, size, tags code: one consume-queue entry."""
CQ_DTYPE = np.dtype([("commitlog_offset", ">i8"), ("size", ">i4"), ("tags_code", ">i8")])
"""Mirrors ``rocketmq_spec.spec.consumequeue.ConsumeQueueEntry`` field for field (checked in the tests)."""
INDEX_HEADER = struct.Struct(">qqqqii")
"""begin/end timestamp, begin/end phy offset, hash slot count, index count."""
INDEX_ENTRY = struct.Struct(">iqii")
"""key hash, phy offset, time diff, prev index."""
INDEX_SLOT = struct.Struct(">i")


ReadableBuffer = bytes | bytearray | memoryview | mmap.mmap
"""What the readers decode from: whole files are read through their memory maps, without a copy."""


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


def _host_struct(sys_flag: int, v6_bit: int) -> struct.Struct:
    return _HOST6 if sys_flag & v6_bit else _HOST4


_V4_RECORD_OVERHEAD = FIXED_PART_V4 + _INT32_SIZE + _PROPERTIES_LENGTH.size
"""The fixed part with IPv4 hosts plus the body and properties length prefixes."""
_V6_EXTRA = _HOST6.size - _HOST4.size


def record_length(sys_flag: int, body_len: int, topic_len: int, properties_len: int, magic: int) -> int:
    """Same value as ``rocketmq_spec.spec.commitlog.record_length`` (``calMsgLength``), without flag-enum
    arithmetic."""
    return (_V4_RECORD_OVERHEAD + body_len + topic_len + properties_len
            + _TOPIC_LENGTH[magic == MESSAGE_MAGIC_V2].size
            + (_V6_EXTRA if sys_flag & BORNHOST_V6 else 0) + (_V6_EXTRA if sys_flag & STOREHOST_V6 else 0))


def unpack_fixed(buf: ReadableBuffer, pos: int = 0) -> FixedFields:
    """Every field of the record at ``pos`` up to the body length, without building the body."""
    head = _HEAD.unpack_from(buf, pos)
    sys_flag = head[7]
    at = pos + _HEAD.size
    born_struct = _host_struct(sys_flag, BORNHOST_V6)
    born = born_struct.unpack_from(buf, at)
    (store_ts,) = _INT64.unpack_from(buf, at + born_struct.size)
    at += born_struct.size + _INT64.size
    store_struct = _host_struct(sys_flag, STOREHOST_V6)
    store = store_struct.unpack_from(buf, at)
    at += store_struct.size
    reconsume, prepared, body_len = _TAIL.unpack_from(buf, at)
    return FixedFields._make((*head, *born, store_ts, *store, reconsume, prepared, body_len,
                              at + _TAIL.size - pos))


def unpack_fixed_within(buf: ReadableBuffer, pos: int, total_size: int, where: int) -> FixedFields:
    """``unpack_fixed`` for a record that must end within ``total_size`` bytes; ``where`` is the absolute
    offset reported in errors."""
    try:
        fixed = unpack_fixed(buf, pos)
    except struct.error as exc:
        _overrun(total_size, where, exc)
    if fixed.body_position > total_size:
        _overrun(total_size, where, "fixed fields run past TOTALSIZE")
    return fixed


def unpack_record(buf: ReadableBuffer, pos: int, total_size: int,
                  where: int) -> tuple[FixedFields, bytes, str, str]:
    """The fixed fields, body, topic and properties of the record at ``pos``, which must all lie within
    ``total_size`` bytes: what ``CommitLogRecord.parse`` accepts on those bytes."""
    fixed = unpack_fixed_within(buf, pos, total_size, where)
    return (fixed, *unpack_variable(buf, pos, fixed, where))


def unpack_variable(buf: ReadableBuffer, pos: int, fixed: FixedFields, where: int) -> tuple[bytes, str, str]:
    """The body, topic and properties of the record at ``pos`` whose fixed fields (checked to lie within
    their TOTALSIZE, as :func:`unpack_fixed_within` checks them) are ``fixed``: the rest of
    :func:`unpack_record`, for a walk that has read the fixed fields already."""
    total_size = fixed.total_size
    end = pos + total_size
    body_at = pos + fixed.body_position
    topic_at = body_at + fixed.body_length
    try:
        if fixed.body_length < 0 or topic_at > end:
            raise ValueError("body runs past TOTALSIZE")
        topic_prefix = _TOPIC_LENGTH[fixed.magic == MESSAGE_MAGIC_V2]
        (topic_len,) = topic_prefix.unpack_from(buf, topic_at)
        props_at = topic_at + topic_prefix.size + topic_len
        (props_len,) = _PROPERTIES_LENGTH.unpack_from(buf, props_at)
        props_end = props_at + _PROPERTIES_LENGTH.size + props_len
        if props_end > end:
            raise ValueError("topic or properties run past TOTALSIZE")
        topic = bytes(buf[topic_at + topic_prefix.size:props_at]).decode("utf-8")
        properties = bytes(buf[props_at + _PROPERTIES_LENGTH.size:props_end]).decode("utf-8")
    except (struct.error, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        _overrun(total_size, where, exc)
    return bytes(buf[body_at:topic_at]), topic, properties


def _overrun(total_size: int, where: int, why: object) -> NoReturn:
    raise StoreError(f"record fields do not fit TOTALSIZE: {why}", expected=total_size, seen="overrun",
                     offset=where, clause=RMQ_CL_TOTAL_SIZE.id) from None


def pack_record(head: tuple[int, int, int, int, int, int, int, int, int], born: tuple[bytes, int],
                store_timestamp: int, store: tuple[bytes, int], reconsume_times: int,
                prepared_transaction_offset: int, body: bytes, topic: str, properties: str) -> bytes:
    """Same bytes as ``CommitLogRecord.build``; ``head`` is TOTALSIZE .. BORNTIMESTAMP in record order
    and the hosts are (packed IP, port). Values that do not fit their fields are refused, as the schema
    refuses them, with a SpecViolation."""
    return _pack_record_raw(head, born, store_timestamp, store, reconsume_times, prepared_transaction_offset,
                            body, topic.encode("utf-8"), properties.encode("utf-8"))


def _pack_plain_record(queue_id: int, flag: int, queue_offset: int, physical_offset: int, sys_flag: int,
                       born_timestamp: int, born_ip: bytes, born_port: int, store_timestamp: int,
                       store_ip: bytes, store_port: int, reconsume_times: int, body: bytes, topic: bytes,
                       properties: bytes) -> bytes:
    """A v1 record of a producer's message (no prepared-transaction offset) with TOTALSIZE and BODYCRC
    computed: ``pack_record`` of the same fields, flat, for the broker's send path."""
    size = record_length(sys_flag, len(body), len(topic), len(properties), MESSAGE_MAGIC_V1)
    return _pack_record_raw(
        (size, MESSAGE_MAGIC_V1, spec_hashing.masked_crc32(body), queue_id, flag, queue_offset,
         physical_offset, sys_flag, born_timestamp), (born_ip, born_port), store_timestamp,
        (store_ip, store_port), reconsume_times, 0, body, topic, properties)


pack_plain_record = twin("pack_plain_record", _pack_plain_record, declines=True)


def _pack_record_raw(head: tuple[int, int, int, int, int, int, int, int, int], born: tuple[bytes, int],
                     store_timestamp: int, store: tuple[bytes, int], reconsume_times: int,
                     prepared_transaction_offset: int, body: bytes, topic_raw: bytes,
                     props_raw: bytes) -> bytes:
    sys_flag = head[7]
    try:
        parts = [_HEAD.pack(*head), _checked_host(born, sys_flag, BORNHOST_V6),
                 _INT64.pack(store_timestamp), _checked_host(store, sys_flag, STOREHOST_V6),
                 _TAIL.pack(reconsume_times, prepared_transaction_offset, len(body)), body,
                 _TOPIC_LENGTH[head[1] == MESSAGE_MAGIC_V2].pack(len(topic_raw)), topic_raw,
                 _PROPERTIES_LENGTH.pack(len(props_raw)), props_raw]
    except struct.error as exc:
        raise SpecViolation(f"record field out of range: {exc}", expected="values that fit the field widths",
                            seen=head, clause=RMQ_CL_LAYOUT.id) from None
    return b"".join(parts)


def _checked_host(host: tuple[bytes, int], sys_flag: int, v6_bit: int) -> bytes:
    """``struct`` pads or cuts a wrong-width address silently; the schema refuses it, so this does too."""
    layout = _host_struct(sys_flag, v6_bit)
    width = layout.size - _INT32_SIZE
    if len(host[0]) != width:
        raise SpecViolation("host address width differs from the sysFlag's IPv6 bit", expected=width,
                            seen=len(host[0]), clause=RMQ_CL_LAYOUT.id)
    return layout.pack(*host)


HASH_CHUNK = 64
"""Characters folded into the hash before it is cut back to 32 bits: long enough to skip most masking,
short enough that the intermediate integer stays a few machine words."""


def _java_string_hash(text: str) -> int:
    """Same value as ``rocketmq_spec.spec.hashing.java_string_hash``. ASCII text, which every index key and
    tag in practice is, has one UTF-16 unit per byte, so its bytes are hashed directly; other text goes to the
    spec's function."""
    if not text.isascii():
        return spec_hashing.java_string_hash(text)
    raw = text.encode("ascii")
    h = 0
    for start in range(0, len(raw), HASH_CHUNK):
        for unit in raw[start:start + HASH_CHUNK]:
            h = 31 * h + unit
        h &= 0xFFFFFFFF
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


java_string_hash = twin("java_string_hash", _java_string_hash)


def index_key_hash(key: str) -> int:
    """Same value as ``rocketmq_spec.spec.hashing.index_key_hash`` (abs of the string hash, MIN_VALUE mapped
    to 0)."""
    h = java_string_hash(key)
    return 0 if h == spec_hashing.INT32_MIN else abs(h)


def _put_index_keys(buffer: mmap.mmap | bytearray, keys: Sequence[str], phy_offset: int, store_timestamp: int,
                    slot_count: int, capacity: int) -> int:
    """Index one record under ``keys`` as ``IndexFile.putKey`` does for each in turn: the entry (the key's
    hash, the commitlog offset, the seconds since the file's first record, and the slot's previous entry,
    or INVALID_INDEX where the slot held none of this file's entries), the slot pointing at it, and the
    header (RMQ-IDX-LAYOUT) counting it. Returns how many keys went in before the file was full: the
    caller rolls to a new file and puts the rest there.

    A send indexes about three keys; the compiled twin does all of this, header included, in one call."""
    begin_ts, _, begin_phy, _, used_slots, count = INDEX_HEADER.unpack_from(buffer, 0)
    if count <= 0:  # no key written yet: Java's IndexHeader.load starts counting at FIRST_INDEX
        count = FIRST_INDEX
    written = 0
    for key in keys:
        if count >= capacity:
            break
        key_hash = index_key_hash(key)
        slot_pos = slot_position(key_hash, slot_count)
        (old,) = INDEX_SLOT.unpack_from(buffer, slot_pos)
        if old <= INVALID_INDEX or old > count:
            old = INVALID_INDEX
            used_slots += 1
        INDEX_ENTRY.pack_into(buffer, entry_position(count, slot_count), key_hash, phy_offset,
                              time_diff_seconds(store_timestamp, begin_ts), old)
        INDEX_SLOT.pack_into(buffer, slot_pos, count)
        if count <= FIRST_INDEX:
            begin_phy, begin_ts = phy_offset, store_timestamp
        count += 1
        written += 1
    if written:
        INDEX_HEADER.pack_into(buffer, 0, begin_ts, store_timestamp, begin_phy, phy_offset, used_slots, count)
    return written


put_index_keys = twin("put_index_keys", _put_index_keys, declines=True)


encode_properties = twin("encode_properties", spec_encode_properties, declines=True)
"""``rocketmq_spec.spec.properties.encode_properties``, compiled where the extension is built: every
producer's message has its properties string written again (``messageProperties2String``)."""


@lru_cache(maxsize=1024)
def packed_ip(ip: str) -> bytes:
    """An address's bytes; a broker sees few distinct hosts, so parsing each once pays."""
    return ipaddress.ip_address(ip).packed


@lru_cache(maxsize=1024)
def ip_text(packed: bytes) -> str:
    return str(ipaddress.ip_address(packed))


def offset_msg_id(store_ip: bytes, port: int, offset: int) -> str:
    """Same text as ``rocketmq_spec.spec.message_id.encode_offset_msg_id`` for the address whose bytes are
    ``store_ip``."""
    return (store_ip + _MSG_ID_TAIL.pack(port, offset)).hex().upper()


def pack_cq_entry(commitlog_offset: int, size: int, tags_code: int) -> bytes:
    """Same bytes as ``ConsumeQueueEntry.build``, and out-of-range values refused like it does."""
    try:
        return CQ_ENTRY.pack(commitlog_offset, size, tags_code)
    except struct.error as exc:
        raise SpecViolation(f"consume-queue entry field out of range: {exc}", expected="int64, int32, int64",
                            seen=(commitlog_offset, size, tags_code), clause=RMQ_CQ_ENTRY.id) from None


CommitLogFile = tuple[int, int, ReadableBuffer]
"""One file of a commitlog as a reader of its records needs it: start offset, written length, mapping."""


def _gather_records(rows: np.ndarray, files: Sequence[CommitLogFile], file_size: int, max_nums: int,
                    max_bytes: int, max_count: int,
                    tag_codes: AbstractSet[int] | None) -> tuple[int, list[bytes], list[int], bool]:
    """The records consume-queue ``rows`` point at, for a pull: (entries scanned, records, their positions
    among the rows, whether a record was missing from ``files``). Entries are taken in order until the
    batch is full (``isTheBatchFull``: ``max_nums`` records, ``max_bytes`` bytes or ``max_count`` records,
    the first always fits); an entry whose tags code (as a Java int) is not in ``tag_codes`` is skipped."""
    records: list[bytes] = []
    deltas: list[int] = []
    total = 0
    missing = False
    first = files[0][0] if files else 0
    scanned = 0
    for scanned, (phys, size, code) in enumerate(_in_batches(rows, max_nums)):
        if total and records and (len(records) >= max_nums or total + size > max_bytes
                                  or len(records) >= max_count):
            break
        if tag_codes is not None and spec_hashing.to_int32(code) not in tag_codes:
            continue
        index = (phys - first) // file_size if files and phys >= first else len(files)
        if index >= len(files) or phys - files[index][0] + size > files[index][1]:
            missing = True
            continue
        position = phys - files[index][0]
        records.append(bytes(files[index][2][position:position + max(size, 0)]))  # a negative size: empty
        deltas.append(scanned)
        total += size
    else:
        scanned = len(rows)
    return scanned, records, deltas, missing


def _in_batches(rows: np.ndarray, batch: int) -> Iterator[tuple[int, int, int]]:
    """Consume-queue rows as Python values, ``batch`` at a time: a pull usually stops after its batch of
    the up to 800 entries it may scan, and converting them all at once cost more than the rest of it."""
    step = max(batch, 1)
    for start in range(0, len(rows), step):
        yield from rows[start:start + step].tolist()


gather_records = twin("gather_records", _gather_records)


def _count_records(body: bytes) -> int:
    """The records of a pull body: each starts with its total size; a size that is not positive ends it."""
    count = position = 0
    while position + _INT32.size <= len(body):
        (size,) = _INT32.unpack_from(body, position)
        if size <= 0:
            break
        position += size
        count += 1
    return count


count_records = twin("count_records", _count_records)


def cq_entries(data: bytes | memoryview) -> np.ndarray:
    """Consume-queue entries of a byte string (whole entries only; a partial tail is ignored)."""
    usable = len(data) - len(data) % CQ_DTYPE.itemsize
    return np.frombuffer(data[:usable], dtype=CQ_DTYPE)


def encode_cq_entries(offsets: np.ndarray, sizes: np.ndarray, tags_codes: np.ndarray) -> bytes:
    """Many consume-queue entries at once, e.g. when rebuilding a queue from the CommitLog."""
    out = np.empty(len(offsets), dtype=CQ_DTYPE)
    out["commitlog_offset"], out["size"], out["tags_code"] = offsets, sizes, tags_codes
    return out.tobytes()
