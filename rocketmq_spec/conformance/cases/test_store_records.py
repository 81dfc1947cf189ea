"""CommitLog records field by field, as :mod:`rocketmq_spec.conformance.cases.raw_records` reads them without
the codec.

The codec's scan (``test_store``) stops at the first record it cannot decode; these cases judge each
field clause on its own, from the clause's own definition (zlib's CRC-32 masked to 31 bits, the length
limits read as unsigned numbers, the transaction bits as a number of their own), so one wrong field
yields the FAIL of its clause.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Info, NonStrict
from rocketmq_spec.spec.commitlog import (
    MAX_MESSAGE_SIZE,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES_V1,
    MESSAGE_MAGIC_V1,
    RECORD_RESERVE,
    RMQ_CL_MAX_MESSAGE,
)
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, PropertyKey
from rocketmq_spec.spec.system_topics import TRANS_CHECK_MAX_TIME_TOPIC, TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC

from .raw_records import BORN_HOST_V6_BIT, COMMIT_TYPE, STORE_HOST_V6_BIT, RawRecord, RawWalk

SHOWN = 10
TRANSACTION_SYSTEM_TOPICS = (TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC, TRANS_CHECK_MAX_TIME_TOPIC)
"""Where half messages are parked, their ops, and where a half message checked too often is put with its
sysFlag (not transactional) and its properties (TRAN_MSG=true) as they were."""
HOST_MASK = BORN_HOST_V6_BIT | STORE_HOST_V6_BIT
HOST_BITS = (0, BORN_HOST_V6_BIT, STORE_HOST_V6_BIT, HOST_MASK)


def _records(raw: RawWalk) -> list[RawRecord]:
    if not raw.records and raw.stopped is None:
        raise Info("the CommitLog holds no records")
    return raw.records


def _wrong(check: Check, what: str, found: Sequence[object]) -> None:
    check.equal(what, [], found[:SHOWN])


@case("RMQ-CL-LAYOUT",
      "Every record read field by field in the clause's order (hosts sized by SYSFLAG) ends exactly at its "
      "TOTALSIZE and holds its own position as PHYSICALOFFSET; the walk reaches the end of the data.")
def test_record_layout(raw: RawWalk, check: Check) -> None:
    records = _records(raw)
    check.note("records read", len(records))
    _wrong(check, "records whose parts do not end at TOTALSIZE",
           [(r.position, r.total_size, r.parts and r.parts.end) for r in records
            if not r.fits_with(r.sys_flag)])
    _wrong(check, "records whose PHYSICALOFFSET is not their position",
           [(r.position, r.physical_offset) for r in records if r.physical_offset != r.position])
    check.equal("a record the walk could not read", None, raw.stopped)


@case("RMQ-FLAG-HOST-V6",
      "SYSFLAG's host bits are the widths that make each record add up: no record fits its TOTALSIZE only "
      "with a host read at the other width (0x10 BORNHOST, 0x20 STOREHOST: 20 bytes set, 8 clear).")
def test_host_widths_follow_sys_flag(raw: RawWalk, check: Check) -> None:
    wrong = []
    for r in _records(raw):
        fitting = [hex(bits) for bits in HOST_BITS if r.fits_with(bits)]
        if fitting and hex(r.sys_flag & HOST_MASK) not in fitting:
            wrong.append((r.position, hex(r.sys_flag), "fits with host bits", fitting))
    _wrong(check, "records whose host fields have the width SYSFLAG does not name", wrong)


@case("RMQ-CL-BODY-CRC", "Every record's BODYCRC is zlib.crc32(body as stored) & 0x7FFFFFFF.")
def test_body_crc_definition(raw: RawWalk, check: Check) -> None:
    _wrong(check, "records whose BODYCRC is not the masked CRC-32 of their body",
           [(r.position, r.body_crc, zlib.crc32(r.body) & 0x7FFFFFFF) for r in _records(raw)
            if r.body_crc != zlib.crc32(r.body) & 0x7FFFFFFF])


@case("RMQ-CL-NO-SPAN", "No record runs past the end of the file it starts in.")
def test_records_stay_in_their_file(raw: RawWalk, check: Check) -> None:
    check.note("records read", len(_records(raw)))
    _wrong(check, "records running past their file's end", raw.spans)


@case("RMQ-CL-PROPERTIES-LENGTH", "Every record's properties length field, read unsigned, is at most 32767.")
def test_properties_length_field(raw: RawWalk, check: Check) -> None:
    _wrong(check, "records whose properties length exceeds a signed short",
           [(r.position, r.parts.properties_length) for r in _records(raw)
            if r.parts and r.parts.properties_length > MAX_PROPERTIES_BYTES])


@case("RMQ-PROP-MAX-SIZE", "Every stored properties string is UTF-8 of at most 32767 bytes.")
def test_properties_string_size(raw: RawWalk, check: Check) -> None:
    wrong: list[tuple[int, object]] = []
    for r in _records(raw):
        try:
            r.properties.decode("utf-8")
        except UnicodeDecodeError:
            wrong.append((r.position, "not UTF-8"))
        if len(r.properties) > MAX_PROPERTIES_BYTES:
            wrong.append((r.position, len(r.properties)))
    _wrong(check, "records whose properties are not UTF-8 of at most 32767 bytes", wrong)


@case("RMQ-CL-TOPIC-LENGTH", "Every v1 record's topic length byte, read unsigned, is at most 127.")
def test_v1_topic_length(raw: RawWalk, check: Check) -> None:
    v1 = [r for r in _records(raw) if r.magic == MESSAGE_MAGIC_V1]
    check.note("v1 records", len(v1))
    _wrong(check, "v1 records with a topic longer than 127 bytes",
           [(r.position, r.parts.topic_length) for r in v1
            if r.parts and r.parts.topic_length > MAX_TOPIC_BYTES_V1])


@case("RMQ-CL-MAX-MESSAGE",
      "No stored body exceeds maxMessageSize and no record maxMessageSize + 64 KiB (Java's default 4 MiB; a "
      "larger record is NON-STRICT, as a broker may be set higher).")
def test_no_record_over_the_limit(raw: RawWalk, check: Check) -> None:
    # a store gives no broker settings: above Java's default is NON-STRICT (a broker may be set higher)
    over = [(r.position, len(r.body), r.total_size) for r in _records(raw)
            if len(r.body) > MAX_MESSAGE_SIZE or r.total_size > MAX_MESSAGE_SIZE + RECORD_RESERVE]
    check.note("largest record", max((r.total_size for r in raw.records), default=0))
    if over:
        raise NonStrict(f"records over Java's default maxMessageSize {MAX_MESSAGE_SIZE} "
                        f"[{RMQ_CL_MAX_MESSAGE.id}]", expected=f"body <= {MAX_MESSAGE_SIZE}",
                        actual=over[:SHOWN])


def _segments(r: RawRecord) -> list[str]:
    """The name-value pairs; one trailing separator is how 5.2.0 and later end the string."""
    return r.properties.decode("utf-8", "replace").removesuffix(PROPERTY_SEPARATOR).split(PROPERTY_SEPARATOR)


@case("RMQ-PROP-ENCODING",
      "Every stored properties string is name U+0001 value pairs joined by U+0002: no empty pair, no pair "
      "without a name (one trailing U+0002 is how releases since 5.2.0 end it).",
      java_note="messageProperties2String appends U+0002 after every pair since 5.2.0 (apache/rocketmq "
                "#7468), where 4.x and 5.0-5.1 deleted the last one: common/src/main/java/org/apache/"
                "rocketmq/common/message/MessageDecoder.java")
def test_properties_encoding(raw: RawWalk, check: Check) -> None:
    wrong = []
    for r in _records(raw):
        if not r.properties:
            continue
        bad = [s for s in _segments(r)
               if not s.partition(NAME_VALUE_SEPARATOR)[0] or NAME_VALUE_SEPARATOR not in s]
        if bad:
            wrong.append((r.position, bad[:3]))
    _wrong(check, "records with a pair that is not name U+0001 value", wrong)


@case("RMQ-FLAG-TRANSACTION",
      "The transaction type is (SYSFLAG >> 2) & 3: a record of type 2 (commit) is a transactional message "
      "(TRAN_MSG=true), and a transactional message outside the transaction system topics is of type 2.")
def test_transaction_bits(raw: RawWalk, check: Check) -> None:
    wrong = []
    for r in _records(raw):
        kind = (r.sys_flag >> 2) & 3
        text = r.properties.decode("utf-8", "replace")
        prepared = f"{PropertyKey.TRANSACTION_PREPARED}{NAME_VALUE_SEPARATOR}true"
        transactional = prepared in text.split(PROPERTY_SEPARATOR)
        topic = r.topic
        if (kind == COMMIT_TYPE) != transactional and topic not in TRANSACTION_SYSTEM_TOPICS:
            wrong.append((r.position, topic, hex(r.sys_flag), transactional))
    _wrong(check, "records whose transaction bits disagree with TRAN_MSG", wrong)
