"""The compiled hot path (``rocketmq_spec.codec._hotpath``) equals the pure-Python functions it twins.

Each compiled function is compared with its pure twin on generated input: byte-for-byte encodes, equal
decodes, and the same refusals (a twin that declines leaves the input to the pure function, so the
caller sees the pure function's typed error). The record twin is also checked against the spec's
construct schema, and the send scanner against the general decoder on frames Java's shape and on
mutations of them. Runs whether or not the broker itself uses the extension (``RMQ_PURE_PYTHON``);
skipped only where the extension is not built.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from rocketmq_spec.codec.answer_template import _join_answer
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.fast_store import (
    CQ_DTYPE,
    _count_records,
    _gather_records,
    _java_string_hash,
    _pack_plain_record,
    _put_index_keys,
    packed_ip,
    put_index_keys,
)
from rocketmq_spec.codec.hotpath import load_compiled, twin
from rocketmq_spec.codec.request_scan import RequestScanner
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.commitlog import hosts
from rocketmq_spec.fuzz.strategies.frames import frames
from rocketmq_spec.fuzz.strategies.primitives import INT32, INT64, int32s, texts
from rocketmq_spec.fuzz.strategies.properties import property_maps
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.commitlog import MESSAGE_MAGIC_V1, CommitLogRecord
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.hashing import java_string_hash as spec_java_string_hash
from rocketmq_spec.spec.headers import PULL_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.indexfile import ENTRY_SIZE, HEADER_SIZE, SLOT_SIZE, IndexEntry, IndexHeader
from rocketmq_spec.spec.properties import encode_properties, parse_properties
from rocketmq_spec.spec.sysflag import MessageSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

compiled = load_compiled()
pytestmark = pytest.mark.skipif(compiled is None,
                                reason="rocketmq_spec.codec._hotpath is not built (no C compiler)")
EQUALITY = fuzz_settings()
"""The fuzz profile's example counts (``RMQ_FUZZ_PROFILE``: 60 in the default run, 20,000 in
``tox -e fuzz-long``), no deadline on a shared machine."""

SCANNER = RequestScanner({int(RequestCode.SEND_MESSAGE): SEND_MESSAGE_REQUEST,
                          int(RequestCode.SEND_MESSAGE_V2): SEND_MESSAGE_REQUEST_V2,
                          int(RequestCode.PULL_MESSAGE): PULL_MESSAGE_REQUEST})
V6 = int(MessageSysFlag.BORNHOST_V6) | int(MessageSysFlag.STOREHOST_V6)


def _scan_compiled(frame: bytes) -> Any:
    assert compiled is not None
    return compiled.scan_request(frame, SCANNER.prefixes, SCANNER.plans)


# ---------------------------------------------------------------- the send scanner

_digits = st.integers(-(1 << 31), (1 << 31) - 1).map(str)
_numbers = st.one_of(_digits, st.integers(-(1 << 70), 1 << 70).map(str), st.sampled_from(
    ["", "+7", "-0", "007", " 5", "5 ", "1_0", "٣", "0x10", "1e3"]))
_booleans = st.sampled_from(["true", "false", "TRUE", "False", "1", "0", " true", "yes", "", "tRuE"])


@st.composite
def lane_requests(draw: st.DrawFn) -> RemotingCommand:
    """SEND_MESSAGE(_V2) and PULL_MESSAGE requests as clients write them, with values a decoder may or may
    not take."""
    code, spec = draw(st.sampled_from([(RequestCode.SEND_MESSAGE_V2, SEND_MESSAGE_REQUEST_V2),
                                       (RequestCode.SEND_MESSAGE, SEND_MESSAGE_REQUEST),
                                       (RequestCode.PULL_MESSAGE, PULL_MESSAGE_REQUEST)]))
    fields: dict[str, str] = {}
    for field in spec.fields:
        if not field.required and draw(st.booleans()):
            continue
        if field.required and draw(st.integers(0, 40)) == 0:
            continue  # a missing required field: the general decoder refuses it
        kind = field.type.value
        if kind in ("Integer", "Long"):
            value = draw(st.one_of(_digits, _numbers))
        elif kind == "Boolean":
            value = draw(_booleans)
        elif field.key == "properties":
            value = encode_properties(draw(property_maps()))
        else:
            value = draw(texts())
        fields[field.name] = value
    if draw(st.booleans()):
        fields[draw(texts(max_size=4))] = draw(texts())  # a key no table has (ACL signature, region ...)
    return RemotingCommand(code, version=draw(int32s()), opaque=draw(int32s()),
                           flag=draw(st.sampled_from([0, 0, 0, 1, 2])), ext_fields=fields,
                           body=draw(st.binary(max_size=64)) or None)


@EQUALITY
@given(lane_requests())
def test_scan_equals_general_decoder_on_lane_requests(command: RemotingCommand) -> None:
    frame = encode(command)
    pure = SCANNER.scan_pure(frame)
    fast = _scan_compiled(frame)
    assert fast is None or fast == pure
    if pure is not None and frame.isascii() and "\\u" not in json.dumps(command.ext_fields) \
            and all(v.isascii() for v in (command.ext_fields or {}).values()):
        assert fast == pure  # nothing outside the compiled reader's grammar: it must answer


@EQUALITY
@given(frames())
def test_scan_declines_or_agrees_on_any_frame(frame: bytes) -> None:
    fast = _scan_compiled(frame)
    assert fast is None or fast == SCANNER.scan_pure(frame)


@EQUALITY
@given(lane_requests(), st.data())
def test_scan_declines_or_agrees_on_mutated_frames(command: RemotingCommand, data: st.DataObject) -> None:
    frame = bytearray(encode(command))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(frame) - 1))
        frame[position] = data.draw(st.integers(0, 255))
    fast = _scan_compiled(bytes(frame))
    assert fast is None or fast == SCANNER.scan_pure(bytes(frame))


def _json_frame(header: str, body: bytes = b"") -> bytes:
    raw = header.encode("utf-8", "surrogatepass")
    return (len(raw) + 4 + len(body)).to_bytes(4, "big") + len(raw).to_bytes(4, "big") + raw + body


_BASE = ('{"code":310,"extFields":{"a":"pg","b":"T","c":"TBW102","d":"4","e":"0","f":"0","g":"1","h":"0"%s},'
         '"flag":0,"language":"JAVA","opaque":5,"serializeTypeCurrentRPC":"JSON","version":407}')


@pytest.mark.parametrize("extra", [
    '', ',"i":"A\\u0001B\\u0002C\\u0001D"', ',"k":"+5"', ',"k":"\\u0035"', ',"\\u006b":"5"',
    ',"k":"5","k":"6"', ',"j":"1","j":""', ',"m":"TRUE"', ',"m":" true"', ',"i":"\\ud83d\\ude00"',
    ',"i":"\\ud800"', ',"i":"é"',
    ',"d":"99999999999"', ',"e":"-1"', ',"i":"a\\/b\\n"', ',"x":null', ',"i":"\\u00e9"',
])
def test_scan_agrees_on_edge_cases(extra: str) -> None:
    frame = _json_frame(_BASE % extra, b"body")
    fast = _scan_compiled(frame)
    assert fast is None or fast == SCANNER.scan_pure(frame)


def test_scan_answers_a_java_send() -> None:
    frame = _json_frame(_BASE % ',"i":"TAGS\\u0001t\\u0002WAIT\\u0001true"', b"body")
    assert _scan_compiled(frame) == SCANNER.scan_pure(frame) is not None


# ---------------------------------------------------------------- properties

_property_text = st.text(alphabet=st.sampled_from("ab\x01\x02é\U0001f600\ud800 "), max_size=30)


@EQUALITY
@given(st.one_of(_property_text, property_maps().map(encode_properties)))
def test_parse_properties_equal(text: str) -> None:
    assert compiled is not None
    fast = compiled.parse_properties(text)
    pure = parse_properties(text)
    assert fast is None or list(fast.items()) == list(pure.items())
    decided = twin("parse_properties", parse_properties, declines=True)
    assert list(decided(text).items()) == list(pure.items())


_property_names = st.text(alphabet=st.sampled_from("ab\x01é\U0001f600\ud800"), min_size=1, max_size=6)


@EQUALITY
@given(st.dictionaries(_property_names, st.one_of(_property_text, st.none(), st.integers()), max_size=70),
       st.data())
def test_encode_properties_equal(properties: dict[str, Any], data: st.DataObject) -> None:
    """The same text in the map's own order and in a given one (with names the map lacks at times), None
    values skipped; where the twin declines (a value that is not text, a lacking name, a long map) the
    pure function decides, its KeyError included."""
    assert compiled is not None
    order = data.draw(st.none() | st.permutations(list(properties)).flatmap(
        lambda names: st.lists(st.sampled_from([*names, "missing"]) if names else st.just("missing"),
                               max_size=len(names) + 1) | st.just(names)))
    decided = twin("encode_properties", encode_properties, declines=True)
    try:
        expected: object = encode_properties(properties, order)
    except KeyError as error:
        expected = repr(error)
    fast = compiled.encode_properties(properties, order)
    assert fast is None or fast == expected
    if all(isinstance(v, str) or v is None for v in properties.values()) and len(properties) <= 64 \
            and (order is None or set(order) <= set(properties)):
        assert fast == expected
    try:
        answer: object = decided(properties, order)
    except KeyError as error:
        answer = repr(error)
    assert answer == expected


# ---------------------------------------------------------------- records

@st.composite
def plain_record_fields(draw: st.DrawFn, in_range: bool = True) -> tuple[Any, ...]:
    """The fields of ``pack_plain_record``; out of range ones too unless ``in_range``."""
    def number(bounds: tuple[int, int]) -> st.SearchStrategy[int]:
        return st.integers(*bounds) if in_range else st.one_of(
            st.integers(*bounds), st.integers(bounds[0] * 4, bounds[1] * 4))
    born, store = draw(hosts()), draw(hosts())
    born_ip, store_ip = (packed_ip(h.ip) for h in (born, store))
    sys_flag = draw(st.integers(0, 0xFF)) & ~V6
    sys_flag |= (int(MessageSysFlag.BORNHOST_V6) if len(born_ip) == 16 else 0) | (
        int(MessageSysFlag.STOREHOST_V6) if len(store_ip) == 16 else 0)
    if not in_range and draw(st.integers(0, 5)) == 0:
        sys_flag ^= int(MessageSysFlag.BORNHOST_V6)  # a host width the flag does not announce
    topic = draw(texts(min_size=1)).encode()
    if not in_range and draw(st.booleans()):
        topic *= 40  # past the one-byte length of a v1 topic
    properties = encode_properties(draw(property_maps())).encode()
    return (draw(number(INT32)), draw(number(INT32)), draw(number(INT64)), draw(number(INT64)), sys_flag,
            draw(number(INT64)), born_ip, draw(number(INT32)), draw(number(INT64)), store_ip,
            draw(number(INT32)), draw(number(INT32)), draw(st.binary(max_size=200)), topic, properties)


@EQUALITY
@given(plain_record_fields())
def test_pack_plain_record_equal_and_schema(fields: tuple[Any, ...]) -> None:
    assert compiled is not None
    fast = compiled.pack_plain_record(*fields)
    assert fast == _pack_plain_record(*fields)
    parsed = CommitLogRecord.parse(fast)
    assert parsed.total_size == len(fast)
    assert parsed.magic == MESSAGE_MAGIC_V1
    assert (parsed.queue_id, parsed.flag, parsed.queue_offset, parsed.physical_offset, parsed.sys_flag,
            parsed.born_timestamp) == fields[:6]
    assert parsed.body == fields[12]


@EQUALITY
@given(plain_record_fields(in_range=False))
def test_pack_plain_record_refuses_alike(fields: tuple[Any, ...]) -> None:
    decided = twin("pack_plain_record", _pack_plain_record, declines=True)
    try:
        expected: bytes | type[Exception] = _pack_plain_record(*fields)
    except SpecViolation:
        expected = SpecViolation
    try:
        seen: bytes | type[Exception] = decided(*fields)
    except SpecViolation:
        seen = SpecViolation
    assume(expected is SpecViolation or isinstance(expected, bytes))
    assert seen == expected


# ---------------------------------------------------------------- pulls

@st.composite
def pull_inputs(draw: st.DrawFn) -> tuple[Any, ...]:
    """A commitlog of a few small files, consume-queue rows pointing into, across and past them, and
    the batch limits and tag filter of a pull."""
    file_size = draw(st.integers(16, 64))
    count = draw(st.integers(0, 3))
    files = [(index * file_size, draw(st.integers(0, file_size)), draw(st.binary(min_size=file_size,
                                                                              max_size=file_size)))
             for index in range(count)]
    rows = np.array(draw(st.lists(st.tuples(st.integers(-8, file_size * (count + 1)), st.integers(-4, 40),
                                            st.integers(-(1 << 40), 1 << 40)), max_size=40)), dtype=CQ_DTYPE)
    tag_codes = draw(st.none() | st.frozensets(st.integers(-(1 << 31), (1 << 31) - 1) | st.sampled_from(
        [int(code) for code in rows["tags_code"].astype("<i4")] or [0])))
    limits = draw(st.integers(0, 8)), draw(st.integers(0, 200)), draw(st.integers(0, 8))
    return rows, files, file_size, *limits, tag_codes


@EQUALITY
@given(pull_inputs())
@example((np.array([(0, -1, 0)], dtype=CQ_DTYPE), [(0, 0, bytes(16))], 16, 0, 0, 0, None))  # negative size
def test_gather_records_equal(inputs: tuple[Any, ...]) -> None:
    assert compiled is not None
    assert compiled.gather_records(*inputs) == _gather_records(*inputs)


@EQUALITY
@given(st.lists(st.integers(-2, 30), max_size=8), st.binary(max_size=3))
def test_count_records_equal(sizes: list[int], tail: bytes) -> None:
    assert compiled is not None
    body = b"".join(size.to_bytes(4, "big", signed=True) + bytes(max(size - 4, 0)) for size in sizes) + tail
    assert compiled.count_records(body) == _count_records(body)


# ---------------------------------------------------------------- hashes and answers

@EQUALITY
@given(st.text())
@example("\ud800x")
@example("\U0001f600")
def test_java_string_hash_equal(text: str) -> None:
    assert compiled is not None
    assert compiled.java_string_hash(text) == spec_java_string_hash(text) == _java_string_hash(text)


@st.composite
def index_puts(draw: st.DrawFn) -> tuple[bytearray, int, int, list[tuple[Any, ...]]]:
    """A small index file's bytes (header and slots holding values in and out of range, so counts at,
    below and past the capacity), its slot count and capacity (at times past the buffer), and the
    records to index into it: each its keys, commitlog offset and store timestamp."""
    slot_count = draw(st.integers(0, 6))
    capacity = draw(st.integers(0, 6))
    short = draw(st.sampled_from([0, 0, 0, 1, 21]))
    size = max(HEADER_SIZE + slot_count * SLOT_SIZE + capacity * ENTRY_SIZE - short, 0)
    buffer = bytearray(draw(st.binary(min_size=size, max_size=size)))
    header = draw(st.sampled_from(["random", "empty", "counted"]))
    if header != "random" and len(buffer) >= HEADER_SIZE:
        count = 0 if header == "empty" else draw(st.integers(-2, capacity + 1))
        begin = draw(st.sampled_from([0, -5, 1_700_000_000_000]))
        buffer[:HEADER_SIZE] = struct.pack(">qqqqii", begin, begin, 0, 0, 0, count)
    records = [(draw(st.lists(st.sampled_from(["T#k", "T#" + "x" * 40]) | texts(max_size=12), max_size=4)),
                draw(st.integers(*INT64)), draw(st.integers(-1, 2**40) | st.sampled_from(
                    [1_700_000_000_000, 1_700_000_000_999, 1_700_000_001_000, 2**62])))
               for _ in range(draw(st.integers(1, 4)))]
    return buffer, slot_count, capacity, records


@EQUALITY
@given(index_puts())
def test_put_index_keys_equal(puts: tuple[bytearray, int, int, list[tuple[Any, ...]]]) -> None:
    """Same counts returned, same bytes left (entries, slots and header); where the twin declines it
    writes nothing and the pure function decides, as the wrapped twin the store calls does."""
    assert compiled is not None
    buffer, slot_count, capacity, records = puts
    ours, theirs = bytearray(buffer), bytearray(buffer)
    for keys, phy_offset, stamp in records:
        before = bytes(ours)
        answer = compiled.put_index_keys(ours, keys, phy_offset, stamp, slot_count, capacity)
        if answer is None:
            assert ours == before
            ours, theirs = bytearray(buffer), bytearray(buffer)  # the wrapped twin from the start
            break
        assert answer == _put_index_keys(theirs, keys, phy_offset, stamp, slot_count, capacity)
        assert ours == theirs
    else:
        return
    for keys, phy_offset, stamp in records:
        try:
            expected: object = _put_index_keys(theirs, keys, phy_offset, stamp, slot_count, capacity)
        except (struct.error, ZeroDivisionError) as error:
            expected = type(error)
        try:
            answer = put_index_keys(ours, keys, phy_offset, stamp, slot_count, capacity)
        except (struct.error, ZeroDivisionError) as error:
            answer = type(error)
        assert answer == expected
        assert ours == theirs
        if isinstance(expected, type):
            return


def test_put_index_keys_reads_back_as_the_schema_does() -> None:
    """The compiled writes read back through the spec's construct schemas: header, slots and entries."""
    assert compiled is not None
    slot_count, capacity = 4, 8
    buffer = bytearray(HEADER_SIZE + slot_count * SLOT_SIZE + capacity * ENTRY_SIZE)
    assert compiled.put_index_keys(buffer, ["T#a", "T#b"], 100, 5_000, slot_count, capacity) == 2
    assert compiled.put_index_keys(buffer, ["T#a"], 200, 9_999, slot_count, capacity) == 1
    header = IndexHeader.parse(bytes(buffer[:HEADER_SIZE]))
    assert (header.begin_timestamp, header.end_timestamp, header.begin_phy_offset, header.end_phy_offset,
            header.index_count) == (5_000, 9_999, 100, 200, 4)
    entries_at = HEADER_SIZE + slot_count * SLOT_SIZE
    third = IndexEntry.parse(bytes(buffer[entries_at + 3 * ENTRY_SIZE:entries_at + 4 * ENTRY_SIZE]))
    assert (third.phy_offset, third.time_diff, third.prev_index) == (200, 4, 1)


@EQUALITY
@given(st.lists(st.binary(max_size=8), min_size=1, max_size=5), st.data(), int32s())
def test_join_answer_equal(pieces: list[bytes], data: st.DataObject, opaque: int) -> None:
    assert compiled is not None
    values = tuple(data.draw(st.lists(st.one_of(st.sampled_from(["0", "7F00000100002A9F", "a,b", "-1"]),
                                                texts(max_size=6)), max_size=3)))
    order = tuple(data.draw(st.lists(st.integers(0, len(values)), min_size=len(pieces) - 1,
                                     max_size=len(pieces) - 1)))
    body = data.draw(st.lists(st.binary(max_size=8), max_size=4))
    assert compiled.join_answer(tuple(pieces), order, opaque, values) == _join_answer(
        tuple(pieces), order, opaque, values)
    assert compiled.join_answer(tuple(pieces), order, opaque, values, body) == _join_answer(
        tuple(pieces), order, opaque, values, body)


def test_send_fields_round_trip_through_the_scanner() -> None:
    """What the project's own clients send (``encode_header`` of the spec's table) is taken."""
    header = {"producerGroup": "pg", "topic": "T", "defaultTopic": DEFAULT_TOPIC, "defaultTopicQueueNums": 4,
              "queueId": 1, "sysFlag": 0, "bornTimestamp": 1, "flag": 0, "properties": "WAIT\x01true",
              "batch": False}
    fields = encode_header(SEND_MESSAGE_REQUEST_V2, header)
    frame = encode(RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, fields, b"x", opaque=3))
    expected = (int(RequestCode.SEND_MESSAGE_V2), 3, header, b"x")
    assert _scan_compiled(frame) == SCANNER.scan_pure(frame) == expected
