"""The two command bodies only the name server reads or writes: RegisterBrokerBody and TopicRouteData.

RegisterBrokerBody comes in two forms (``compressed`` header): fastjson JSON, or a zlib stream of
length-prefixed pieces that Java brokers send when ``compressedRegister`` is on. TopicRouteData is
written in fastjson's default form (unquoted integer map keys) for old clients and as standard JSON with
sorted keys (``MapSortField``) for clients that can only read that.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codec import fastjson
from spec.errors import BodyError

MAX_REGISTER_BODY_INFLATED = 64 * 1024 * 1024
"""Bound on an inflated compressed registration (a broker with ~100k topics): a zlib bomb in a 16 MiB
frame could otherwise expand without limit."""

_TOPIC_CONFIG_WORDS = ("topicName", "readQueueNums", "writeQueueNums", "perm", "topicFilterType")
"""``TopicConfig.encode()``: five space-separated words (5.x appends attributes, ignored here)."""


@dataclass(frozen=True)
class Registration:
    data_version: dict[str, Any] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    filter_servers: list[str] = field(default_factory=list)


def decode_register_broker_body(body: bytes, *, compressed: bool) -> Registration:
    """An absent body registers nothing, as Java's empty wrapper (data version 0) does."""
    if not body:
        return Registration()
    if compressed:
        return _decode_compressed(body)
    data = fastjson.loads(body)
    wrapper = data.get("topicConfigSerializeWrapper") or {}
    return Registration(dict(wrapper.get("dataVersion") or {}), dict(wrapper.get("topicConfigTable") or {}),
                        list(data.get("filterServerList") or []))


def _decode_compressed(body: bytes) -> Registration:
    inflater = zlib.decompressobj()
    try:
        plain = inflater.decompress(body, MAX_REGISTER_BODY_INFLATED)
    except zlib.error as exc:
        raise BodyError("compressed REGISTER_BROKER body is not a zlib stream", expected="zlib",
                        seen=str(exc)) from None
    if inflater.unconsumed_tail:
        raise BodyError("compressed REGISTER_BROKER body inflates beyond the limit",
                        expected=f"<= {MAX_REGISTER_BODY_INFLATED} bytes", seen="more")
    offset = 0

    def take(n: int) -> bytes:
        nonlocal offset
        if n < 0 or offset + n > len(plain):
            raise BodyError("compressed REGISTER_BROKER body truncated", expected=n,
                            seen=len(plain) - offset, offset=offset)
        piece = plain[offset:offset + n]
        offset += n
        return piece

    def text() -> str:
        (length,) = struct.unpack(">i", take(4))
        return take(length).decode("utf-8")

    data_version = fastjson.loads(text())
    (count,) = struct.unpack(">i", take(4))
    topics: dict[str, dict[str, Any]] = {}
    for _ in range(count):
        words = text().split(" ")
        config: dict[str, Any] = dict(zip(_TOPIC_CONFIG_WORDS, words, strict=False))
        for name in ("readQueueNums", "writeQueueNums", "perm"):
            config[name] = int(config[name])
        topics[config["topicName"]] = config
    return Registration(dict(data_version), topics, list(fastjson.loads(text()) or []))


def _standard(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _standard(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list):
        return [_standard(v) for v in value]
    return value


def route_data_json(route: Mapping[str, Any], *, standard: bool) -> bytes:
    """TopicRouteData bytes: fastjson's default form, or quoted keys in sorted order when ``standard``."""
    return fastjson.dumps(_standard(route) if standard else route).encode("utf-8")
