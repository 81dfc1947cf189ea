"""The two-int record walk (``rocketmq_spec.codec.store.starts``) finds exactly the records the codec's walk
accepts, and stops where that walk would refuse or end, on generated files with broken records and every kind
of end: the pure walk, and its compiled twin where the extension is built (equal to each other too)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.hotpath import load_compiled
from rocketmq_spec.codec.store.record import PREFIX_SIZE, read_prefix, unpack_bounded_fixed
from rocketmq_spec.codec.store.starts import Starts, _message_starts, accepted, compiled_walk
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.commitlog import records
from rocketmq_spec.spec.commitlog import BLANK_MAGIC, MESSAGE_MAGICS, PHYSICAL_OFFSET_POSITION
from rocketmq_spec.spec.errors import StoreError

BASE = 1 << 30
COMPILED = load_compiled()
WALKS = [pytest.param(_message_starts, id="pure"),
         pytest.param(compiled_walk(COMPILED) if COMPILED else None, id="compiled", marks=pytest.mark.skipif(
             COMPILED is None, reason="rocketmq_spec.codec._hotpath is not built (no C compiler)"))]
Walk = Callable[..., Starts]

ENDS = st.sampled_from(["zeros", "blank", "garbage", "none"])
DAMAGE = st.sampled_from(["none", "physical_offset", "total_size_small", "total_size_large", "magic"])


def reference_starts(buffer: bytes, base: int) -> list[int]:
    """What ``CommitLog._file_walk`` yields before it stops or raises."""
    found, pos = [], 0
    while len(buffer) - pos >= PREFIX_SIZE:
        total_size, magic = read_prefix(buffer, pos)
        if magic == BLANK_MAGIC or (total_size == 0 and magic == 0) or magic not in MESSAGE_MAGICS:
            break
        try:
            fixed = unpack_bounded_fixed(buffer, pos, base + pos)
        except StoreError:
            break
        if fixed.physical_offset != base + pos:
            break
        found.append(pos)
        pos += total_size
    return found


@st.composite
def files(draw: st.DrawFn) -> bytes:
    parts: list[bytes] = []
    at = 0
    for record in draw(st.lists(records(), min_size=0, max_size=6)):
        raw = bytearray(record.encode())
        raw[PHYSICAL_OFFSET_POSITION:PHYSICAL_OFFSET_POSITION + 8] = (BASE + at).to_bytes(8, "big")
        parts.append(bytes(raw))
        at += len(raw)
    if parts:
        victim = draw(st.integers(0, len(parts) - 1))
        raw = bytearray(parts[victim])
        damage = draw(DAMAGE)
        if damage == "physical_offset":
            raw[PHYSICAL_OFFSET_POSITION + 7] ^= 1
        elif damage == "total_size_small":
            raw[0:4] = draw(st.integers(-5, 95)).to_bytes(4, "big", signed=True)
        elif damage == "total_size_large":
            raw[0:4] = (len(raw) + draw(st.integers(1, 1 << 20))).to_bytes(4, "big", signed=True)
        elif damage == "magic":
            raw[4] ^= 0x40
        parts[victim] = bytes(raw)
    end = draw(ENDS)
    tail = {"zeros": bytes(64), "blank": (72).to_bytes(4, "big") + BLANK_MAGIC.to_bytes(4, "big") + bytes(64),
            "garbage": draw(st.binary(min_size=0, max_size=120)), "none": b""}[end]
    return b"".join(parts) + tail


@pytest.mark.parametrize("walk", WALKS)
@fuzz_settings()
@given(buffer=files(), limit=st.integers(1, 8), stop_short=st.integers(0, 200))
def test_two_int_walk_equals_the_record_walk(walk: Walk, buffer: bytes, limit: int, stop_short: int) -> None:
    expected = reference_starts(buffer, BASE)
    walked: list[int] = []
    pos = 0
    while True:
        found = walk(buffer, pos, len(buffer), base=BASE, limit=limit)
        walked += found.starts.tolist()
        if len(found.starts) < limit:
            break
        pos = found.resume
    assert walked == expected
    assert accepted(buffer, np.array(expected, dtype=np.int64), base=BASE).all()
    stop = max(len(buffer) - stop_short, 0)
    pure = _message_starts(buffer, 0, stop, base=BASE, limit=limit)
    found = walk(buffer, 0, stop, base=BASE, limit=limit)
    assert (found.starts.tolist(), found.resume) == (pure.starts.tolist(), pure.resume)


def test_accepted_refuses_positions_outside_the_buffer_or_inside_records() -> None:
    buffer = bytes(200)
    assert not accepted(buffer, np.array([-8, 0, 150, 500]), base=0).any()
