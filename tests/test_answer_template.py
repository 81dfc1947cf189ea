"""The send path's shortcuts held to the general paths they stand in for.

``rocketmq_spec.codec.answer_template`` joins a send answer's JSON header from pieces instead of encoding it;
its frame must be the bytes :func:`rocketmq_spec.codec.command.encode` writes for the same command, for every
opaque, value and broker setting, and it must decline values it cannot write. The store hands the dispatch the
property map it already holds instead of parsing the stored string again; that map must be what the parse
gives. """

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketmq_spec.codec.answer_template import JsonAnswerTemplate
from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.store import InnerMessage, MessageStore
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.frame import Flag, SerializeType
from rocketmq_spec.spec.properties import encode_properties, parse_properties
from tests.test_fastjson import _ESCAPE_PRONE
from tests.test_store_engine_helpers import tiny_config

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
PLAIN = st.text(st.sampled_from("0123456789ABCDEFabcdef,-"), max_size=40)
SLOTS = ("msgId", "queueId", "queueOffset")


def _general(code: int, ext: dict[str, str], opaque: int, values: tuple[str, ...], version: int) -> bytes:
    fields = {**ext, **dict(zip(SLOTS, values, strict=True))}
    return encode(RemotingCommand(code, version=version, opaque=opaque, flag=Flag.RESPONSE,
                                  ext_fields=fields))


@given(code=st.sampled_from([int(c) for c in ResponseCode]) | INT32, version=INT32, opaque=INT32,
       region=_ESCAPE_PRONE, trace=st.sampled_from(["true", "false"]),
       values=st.tuples(PLAIN, st.integers(-1, 1 << 20).map(str), st.integers(0, 1 << 62).map(str)))
def test_template_frame_equals_the_general_encoding(code: int, version: int, opaque: int, region: str,
                                                      trace: str, values: tuple[str, str, str]) -> None:
    ext = {"msgId": "", "queueId": "", "queueOffset": "", "MSG_REGION": region, "TRACE_ON": trace}
    try:
        template = JsonAnswerTemplate(code, ext, SLOTS, version=version)
    except ValueError:
        return  # a setting holding a marker: the broker then encodes every answer the general way
    frame = template.frame(opaque, values)
    assert frame == _general(code, ext, opaque, values, version)
    command = template.command(opaque, values)
    assert command is not None and decode(frame) == RemotingCommand(
        command.code, command.language, command.version, command.opaque, command.flag, command.remark,
        command.ext_fields, command.body, command.serialize_type)


@given(value=_ESCAPE_PRONE)
def test_template_declines_values_json_would_escape_or_quote(value: str) -> None:
    template = JsonAnswerTemplate(0, {"msgId": "", "queueId": "", "queueOffset": ""}, SLOTS, version=1)
    frame = template.frame(7, (value, "1", "2"))
    if frame is not None:
        assert frame == _general(0, {}, 7, (value, "1", "2"), 1)
        assert all(ch.isascii() and (ch.isalnum() or ch in ",-") for ch in value)


def test_template_refuses_a_setting_that_holds_a_marker() -> None:
    ext = {"msgId": "", "queueId": "", "queueOffset": "", "MSG_REGION": "1987654321"}
    try:
        JsonAnswerTemplate(0, ext, SLOTS, version=1)
    except ValueError as exc:
        assert "not unique" in str(exc)
    else:
        raise AssertionError("a marker inside a fixed value must be refused")


def test_encoded_command_is_written_as_its_frame() -> None:
    template = JsonAnswerTemplate(0, {"msgId": "", "queueId": "", "queueOffset": ""}, SLOTS, version=1)
    command = template.command(5, ("AB", "1", "2"))
    assert command is not None and command.serialize_type is SerializeType.JSON
    assert encode(command) == template.frame(5, ("AB", "1", "2"))


PROPERTY_TEXT = st.dictionaries(_ESCAPE_PRONE, _ESCAPE_PRONE, max_size=6).map(encode_properties) | st.lists(
    st.sampled_from(["\x01", "\x02", "a", "TAGS", "KEYS", "WAIT", "true", " "]), max_size=12).map("".join)


@settings(max_examples=40, deadline=None)
@given(text=PROPERTY_TEXT, cluster=st.sampled_from(["DefaultCluster", "", "a\x01b", "c\x02"]),
       delay=st.sampled_from([None, "1", "x"]), wait=st.sampled_from([None, "true", "false"]))
def test_dispatch_map_is_the_parse_of_the_stored_string(tmp_path_factory: pytest.TempPathFactory, text: str,
                                                        cluster: str, delay: str | None,
                                                        wait: str | None) -> None:
    for name, value in (("DELAY", delay), ("WAIT", wait)):
        if value is not None:
            text = f"{text}\x02{name}\x01{value}"
    root: Path = tmp_path_factory.mktemp("store")
    with MessageStore(tiny_config(root, cluster_name=cluster)) as store, \
            mock.patch.object(store, "_dispatch", wraps=store._dispatch) as dispatch:
        message = InnerMessage.from_wire(topic="T", queue_id=0, body=b"b", properties=text,
                                         born_timestamp=1, born_host=HostPort("127.0.0.1", 1))
        if not store.put_message(message).ok:
            return
        (record,) = [call.args[0] for call in dispatch.call_args_list]
        assert record.properties == parse_properties(record.properties_text)
