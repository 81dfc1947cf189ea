"""Requests of ``apache.rocketmq.v2.MessagingService`` drawn from the spec's tables, well-formed or not.

``request(rpc)`` builds the RPC's request message field by field from ``rocketmq_spec.spec.grpc_*``: every
field the table declares may be set, to boundary values (empty, blank and control-character text, Java's
integer limits, unknown enum numbers, out-of-range timestamps and durations, long and empty bytes) or to
ordinary ones, nested messages a few levels deep, repeated fields up to a few entries, oneofs to one member.
``malformed(rpc)`` then damages the encoding (cut short, bytes flipped, a field tag that lies about its wire
type or length), which a server must refuse without harm. """

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from hypothesis import strategies as st

from rocketmq_spec.codec.grpc.protowire import varint
from rocketmq_spec.codec.grpc.v2 import definition_pb2, service_pb2
from rocketmq_spec.fuzz.strategies.primitives import INT32, INT64
from rocketmq_spec.spec.grpc_definition import DEFINITION_MESSAGES
from rocketmq_spec.spec.grpc_rpcs import RPCS, Rpc
from rocketmq_spec.spec.grpc_schema import Label, ProtoField, ProtoMessage
from rocketmq_spec.spec.grpc_service import SERVICE_MESSAGES
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, RETRY_PREFIX, SYSTEM_TOPIC_PREFIX

MAX_DEPTH = 3
"""Nesting of generated messages (Message in SendMessageRequest in ...): deeper adds nothing new."""
MAX_REPEATED = 3
LONG_TEXT = 70_000
"""Longer than every size a proxy checks (a 64-byte message group, 16 KiB of properties)."""
LARGE_BODY = 4 * 1024 * 1024 + 1
"""One byte over the 4 MiB a proxy accepts."""

_MESSAGES: dict[str, ProtoMessage] = {m.name: m for m in (*DEFINITION_MESSAGES, *SERVICE_MESSAGES)}

_TEXT = st.one_of(
    st.sampled_from(["", " ", "\t", "a|b", "\x00", "\x7f", RETRY_PREFIX + "x", DEFAULT_TOPIC,
                     SYSTEM_TOPIC_PREFIX + "x", "*", "||", "ÿ" * 64, "0102FC00000001", "1 2 3 4 5 6 7 8 9"]),
    st.text(max_size=24),
    st.just("x" * LONG_TEXT),
)
_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": _TEXT,
    "int32": st.one_of(st.sampled_from([0, -1, 1, *INT32]), st.integers(*INT32)),
    "int64": st.one_of(st.sampled_from([0, -1, 1, *INT64]), st.integers(*INT64)),
    "bool": st.booleans(),
    "float": st.floats(width=32),
    "bytes": st.one_of(st.binary(max_size=64), st.sampled_from([b"", b"\x00" * 1024]),
                       st.just(b"x" * LARGE_BODY)),
}
_SECONDS = st.one_of(st.sampled_from([0, -1, 1, 10, 3600, 315_576_000_000, -315_576_000_000, *INT64]),
                     st.integers(-(10 ** 12), 10 ** 12))
_WELL_KNOWN: dict[str, st.SearchStrategy[dict[str, int]]] = {
    "google.protobuf.Timestamp": st.fixed_dictionaries({"seconds": _SECONDS,
                                                        "nanos": st.integers(*INT32)}),
    "google.protobuf.Duration": st.fixed_dictionaries({"seconds": _SECONDS,
                                                       "nanos": st.integers(*INT32)}),
}


def _value(field: ProtoField, depth: int) -> st.SearchStrategy[Any]:
    if field.type in _SCALARS:
        return _SCALARS[field.type]
    if field.type in _WELL_KNOWN:
        return _WELL_KNOWN[field.type]
    if field.type.startswith("map<"):
        return st.dictionaries(_TEXT, _TEXT, max_size=MAX_REPEATED)
    if field.type in _MESSAGES:
        return values(_MESSAGES[field.type], depth + 1)
    return st.one_of(st.sampled_from([0, 1, 2, 99]), st.integers(*INT32))  # an enum: unknown numbers too


@st.composite
def values(draw: st.DrawFn, message: ProtoMessage, depth: int = 0) -> dict[str, Any]:
    """Field name → value for ``message``; beyond MAX_DEPTH nested messages stay empty."""
    if depth > MAX_DEPTH:
        return {}
    chosen: dict[str, Any] = {}
    oneofs: set[str] = set()
    for field in message.fields:
        if (field.oneof and field.oneof in oneofs) or not draw(st.booleans()):
            continue
        if field.oneof:
            oneofs.add(field.oneof)
        value = _value(field, depth)
        chosen[field.name] = draw(st.lists(value, max_size=MAX_REPEATED) if field.label is Label.REPEATED
                                  else value)
    return chosen


def _fill(target: Message, message: ProtoMessage, chosen: dict[str, Any]) -> None:
    fields = {f.name: f for f in message.fields}
    for name, value in chosen.items():
        field = fields[name]
        nested = _MESSAGES.get(field.type)
        if field.type.startswith("map<"):
            getattr(target, name).update(value)
        elif field.label is Label.REPEATED:
            for item in value:
                if nested is not None:
                    _fill(getattr(target, name).add(), nested, item)
                elif field.type in _WELL_KNOWN:
                    _time(getattr(target, name).add(), item)
                else:
                    getattr(target, name).append(item)
        elif nested is not None:
            _fill(getattr(target, name), nested, value)
            getattr(target, name).SetInParent()
        elif field.type in _WELL_KNOWN:
            _time(getattr(target, name), value)
        else:
            setattr(target, name, value)


def _time(target: Message, value: dict[str, int]) -> None:
    """A Timestamp or Duration, its seconds and nanos as drawn (out of range included)."""
    target.seconds = value["seconds"]
    target.nanos = value["nanos"]


def message_class(name: str) -> type[Message]:
    return getattr(service_pb2, name, None) or getattr(definition_pb2, name)


def build(name: str, chosen: dict[str, Any]) -> Message:
    """The generated message ``name`` with ``chosen`` values set."""
    message = message_class(name)()
    _fill(message, _MESSAGES[name], chosen)
    return message


def request(rpc: Rpc) -> st.SearchStrategy[bytes]:
    """A well-formed request of ``rpc`` (its encoding), values from the boundary sets above."""
    return values(_MESSAGES[rpc.request]).map(lambda chosen: build(rpc.request, chosen).SerializeToString())


@st.composite
def _damaged(draw: st.DrawFn, encoded: bytes) -> bytes:
    kind = draw(st.sampled_from(["truncate", "flip", "lying-tag", "garbage"]))
    if kind == "truncate" and encoded:
        return encoded[:draw(st.integers(0, len(encoded) - 1))]
    if kind == "flip" and encoded:
        at = draw(st.integers(0, len(encoded) - 1))
        return encoded[:at] + bytes([encoded[at] ^ draw(st.integers(1, 255))]) + encoded[at + 1:]
    if kind == "lying-tag":
        field, wire_type = draw(st.integers(1, 30)), draw(st.integers(0, 7))
        length = draw(st.sampled_from([0x7F, 0xFFFFFFFF]))
        return encoded + bytes([field << 3 | wire_type]) + varint(length)
    return draw(st.binary(min_size=1, max_size=64))


def malformed(rpc: Rpc) -> st.SearchStrategy[bytes]:
    """A damaged encoding of a request of ``rpc``."""
    return request(rpc).flatmap(_damaged)


def any_call(rpcs: tuple[Rpc, ...] = RPCS) -> st.SearchStrategy[tuple[Rpc, bytes]]:
    """An RPC and a request for it, well-formed (two in three) or damaged."""
    return st.sampled_from(rpcs).flatmap(lambda rpc: st.tuples(st.just(rpc), st.one_of(
        request(rpc), request(rpc), malformed(rpc))))
