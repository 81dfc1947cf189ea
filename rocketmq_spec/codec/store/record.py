"""One CommitLog record as a Python value, and its exact byte form.

The broker writes through :func:`encode_record`, so encoding must give the bytes Java writes; the
properties are therefore kept as the stored *string* (``properties_text``), because the parsed map loses
order and duplicates (batch records carry WAIT twice) and could not be written back identically.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from rocketmq_spec.codec.compression import decompress_for_sys_flag
from rocketmq_spec.codec.fast_store import (
    BORNHOST_V6,
    RECORD_PREFIX,
    STOREHOST_V6,
    FixedFields,
    ReadableBuffer,
    ip_text,
    offset_msg_id,
    pack_record,
    packed_ip,
    record_length,
    unpack_fixed_within,
    unpack_variable,
)
from rocketmq_spec.spec.commitlog import (
    BLANK_MAGIC,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES_V1,
    MAX_TOPIC_BYTES_V2,
    MESSAGE_MAGIC_V1,
    MESSAGE_MAGIC_V2,
    MESSAGE_MAGICS,
    RMQ_CL_BODY_CRC_CHECK,
    RMQ_CL_MAGIC,
    RMQ_CL_PROPERTIES_LENGTH,
    RMQ_CL_TOPIC_LENGTH,
    RMQ_CL_TOTAL_SIZE,
    RecordPrefix,
)
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.hashing import masked_crc32
from rocketmq_spec.spec.message_id import IPV6_LEN
from rocketmq_spec.spec.properties import PropertyKey, encode_properties, parse_properties, split_keys
from rocketmq_spec.spec.sysflag import TransactionType, transaction_type

PREFIX_SIZE = RecordPrefix.sizeof()
_HOST_V6_BITS = BORNHOST_V6 | STOREHOST_V6


class HostPort(NamedTuple):
    ip: str
    port: int

    def __str__(self) -> str:
        return f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"

    @property
    def is_v6(self) -> bool:
        return len(packed_ip(self.ip)) == IPV6_LEN


@dataclass(frozen=True)
class MessageRecord:
    """Every field of a stored record; ``body`` is as stored (compressed when the sysFlag says so)."""

    physical_offset: int
    total_size: int
    magic: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    sys_flag: int
    born_timestamp: int
    born_host: HostPort
    store_timestamp: int
    store_host: HostPort
    reconsume_times: int
    prepared_transaction_offset: int
    body: bytes
    topic: str
    properties_text: str

    @cached_property
    def properties(self) -> dict[str, str]:
        """The properties as a Java reader sees them (malformed pairs dropped, last duplicate wins)."""
        return parse_properties(self.properties_text)

    @property
    def tags(self) -> str | None:
        return self.properties.get(PropertyKey.TAGS)

    @property
    def keys(self) -> list[str]:
        return split_keys(self.properties.get(PropertyKey.KEYS))

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(PropertyKey.UNIQ_KEY)

    @property
    def offset_msg_id(self) -> str:
        return offset_msg_id(packed_ip(self.store_host.ip), self.store_host.port, self.physical_offset)

    @property
    def transaction_type(self) -> TransactionType:
        return transaction_type(self.sys_flag)

    @cached_property
    def application_body(self) -> bytes:
        """The body the producer sent: decompressed when COMPRESSED is set (raises BodyError if broken)."""
        return decompress_for_sys_flag(self.body, self.sys_flag)

    def decompressed_body(self) -> bytes:
        return self.application_body

    def encode(self) -> bytes:
        """The record's bytes, written from its fields (TOTALSIZE and BODYCRC as carried, not recomputed)."""
        return pack_record(
            (self.total_size, self.magic, self.body_crc, self.queue_id, self.flag, self.queue_offset,
             self.physical_offset, self.sys_flag, self.born_timestamp),
            (packed_ip(self.born_host.ip), self.born_host.port), self.store_timestamp,
            (packed_ip(self.store_host.ip), self.store_host.port), self.reconsume_times,
            self.prepared_transaction_offset, self.body, self.topic, self.properties_text)


def read_prefix(buf: ReadableBuffer, pos: int) -> tuple[int, int]:
    """TOTALSIZE and MAGICCODE at ``pos``: enough to tell a record from a BLANK marker or unwritten space."""
    total_size, magic = RECORD_PREFIX.unpack_from(buf, pos)
    return total_size, magic


def _checked_prefix(buf: ReadableBuffer, pos: int, where: int) -> tuple[int, int]:
    """TOTALSIZE and MAGICCODE of a message record that lies within ``buf``."""
    if len(buf) - pos < PREFIX_SIZE:
        raise StoreError("truncated record prefix", expected=PREFIX_SIZE, seen=len(buf) - pos, offset=where,
                         clause=RMQ_CL_TOTAL_SIZE.id)
    total_size, magic = read_prefix(buf, pos)
    if magic not in MESSAGE_MAGICS:
        raise StoreError("not a message record", expected=[hex(m) for m in MESSAGE_MAGICS], seen=hex(magic),
                         offset=where, clause=RMQ_CL_MAGIC.id)
    if total_size < PREFIX_SIZE or total_size > len(buf) - pos:
        raise StoreError("TOTALSIZE runs past the data", expected=f"<= {len(buf) - pos}", seen=total_size,
                         offset=where, clause=RMQ_CL_TOTAL_SIZE.id)
    return total_size, magic


def unpack_bounded_fixed(buf: ReadableBuffer, pos: int, where: int) -> FixedFields:
    """The fixed fields of the message record at ``pos``, with the checks of :func:`decode_record` that
    need no variable part: magic, TOTALSIZE within ``buf``, fixed fields within TOTALSIZE."""
    total_size, _ = _checked_prefix(buf, pos, where)
    return unpack_fixed_within(buf, pos, total_size, where)


def decode_record(buf: ReadableBuffer, pos: int = 0, *, verify_crc: bool = True,
                  base_offset: int = 0) -> MessageRecord:
    """Decode the record at ``pos``; errors carry ``base_offset + pos`` as their offset.

    Checks the magic, that TOTALSIZE fits the buffer and equals the length of the parsed parts, and
    (unless ``verify_crc`` is false) BODYCRC.
    """
    return decode_walked(buf, pos, unpack_bounded_fixed(buf, pos, base_offset + pos),
                         verify_crc=verify_crc, base_offset=base_offset)


def decode_walked(buf: ReadableBuffer, pos: int, fixed: FixedFields, *, verify_crc: bool,
                  base_offset: int) -> MessageRecord:
    """:func:`decode_record` of a record whose fixed fields a walk has read and bounded already
    (:func:`unpack_bounded_fixed`): a scan reads them once per record instead of twice."""
    where = base_offset + pos
    body, topic, properties = unpack_variable(buf, pos, fixed, where)
    total_size, magic, sys_flag = fixed.total_size, fixed.magic, fixed.sys_flag
    computed = record_length(sys_flag, len(body), len(topic.encode()), len(properties.encode()), magic)
    if computed != total_size:
        raise StoreError("TOTALSIZE differs from the length of the record's parts", expected=computed,
                         seen=total_size, offset=where, clause=RMQ_CL_TOTAL_SIZE.id)
    if verify_crc and masked_crc32(body) != fixed.body_crc:
        raise StoreError("BODYCRC does not match the body", expected=masked_crc32(body),
                         seen=fixed.body_crc, offset=where, clause=RMQ_CL_BODY_CRC_CHECK.id)
    # positional, in field order: keywords cost measurably on a scan
    return MessageRecord(
        fixed.physical_offset, total_size, magic, fixed.body_crc, fixed.queue_id, fixed.flag,
        fixed.queue_offset, sys_flag, fixed.born_timestamp, HostPort(ip_text(fixed.born_ip), fixed.born_port),
        fixed.store_timestamp, HostPort(ip_text(fixed.store_ip), fixed.store_port), fixed.reconsume_times,
        fixed.prepared_transaction_offset, body, topic, properties)


def decode_records(body: bytes | None) -> list[MessageRecord]:
    """A PULL_MESSAGE or QUERY_MESSAGE body: whole CommitLog records back to back, as the broker copied
    them out of its log (``MessageDecoder.decodes``); each record is checked as a store reader checks it."""
    records: list[MessageRecord] = []
    data = body or b""
    position = 0
    while position < len(data):
        records.append(decode_record(data, position))
        position += records[-1].total_size
    return records


def make_record(*, topic: str, body: bytes, properties: Mapping[str, str | None] | str, queue_id: int,
                queue_offset: int, physical_offset: int, born_timestamp: int, born_host: HostPort,
                store_timestamp: int, store_host: HostPort, sys_flag: int = 0, flag: int = 0,
                reconsume_times: int = 0, prepared_transaction_offset: int = 0,
                magic: int | None = None, parsed_properties: dict[str, str] | None = None) -> MessageRecord:
    """A record as the broker would store it: TOTALSIZE and BODYCRC computed, host bits from the addresses.

    ``properties`` is written in the given order (pass a string, or a mapping ordered with
    ``rocketmq_spec.spec.properties.java_hashmap_order``, to match Java). ``magic`` defaults to v1 and to v2
    only when the topic does not fit v1, as 5.x's ``autoMessageVersionOnTopicLen`` does.
    ``parsed_properties``, when the caller has it, is what ``parse_properties`` makes of the written string:
    the record's ``properties`` then start from it instead of parsing the string again. """
    text = properties if isinstance(properties, str) else encode_properties(properties)
    topic_len = len(topic.encode())
    props_len = len(text.encode())
    if magic is None:
        magic = MESSAGE_MAGIC_V1 if topic_len <= MAX_TOPIC_BYTES_V1 else MESSAGE_MAGIC_V2
    limit = MAX_TOPIC_BYTES_V1 if magic == MESSAGE_MAGIC_V1 else MAX_TOPIC_BYTES_V2
    if topic_len > limit:
        raise SpecViolation("topic too long for the record version", expected=f"<= {limit} bytes",
                            seen=topic_len, clause=RMQ_CL_TOPIC_LENGTH.id)
    if props_len > MAX_PROPERTIES_BYTES:
        raise SpecViolation("properties too long", expected=f"<= {MAX_PROPERTIES_BYTES} bytes",
                            seen=props_len, clause=RMQ_CL_PROPERTIES_LENGTH.id)
    sys_flag &= ~_HOST_V6_BITS
    sys_flag |= (BORNHOST_V6 if born_host.is_v6 else 0) | (STOREHOST_V6 if store_host.is_v6 else 0)
    # positional, in field order: keywords cost measurably on the broker's put path
    record = MessageRecord(
        physical_offset, record_length(sys_flag, len(body), topic_len, props_len, magic), magic,
        masked_crc32(body), queue_id, flag, queue_offset, int(sys_flag), born_timestamp, born_host,
        store_timestamp, store_host, reconsume_times, prepared_transaction_offset, body, topic, text)
    if parsed_properties is not None:
        vars(record)["properties"] = parsed_properties  # the cached_property's own slot
    return record


def encode_record(**fields: object) -> bytes:
    """``make_record(**fields).encode()``: the bytes to append to the CommitLog."""
    return make_record(**fields).encode()  # type: ignore[arg-type]


def encode_blank(remaining: int) -> bytes:
    """The end-of-file marker for a file with ``remaining`` bytes left."""
    return RECORD_PREFIX.pack(remaining, BLANK_MAGIC)


def is_blank(magic: int) -> bool:
    return magic == BLANK_MAGIC

