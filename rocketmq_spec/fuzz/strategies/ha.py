"""The HA stream in both directions: slave offset reports and master transfer blocks.

Well-formed streams are what a conforming peer sends (reports of any offset; blocks contiguous from a
start, heartbeats among them); broken ones each break one rule a Java peer closes the connection for
(a gap, a negative size or offset). Streams come with cut points so that properties can feed them in
arbitrary chunks, as TCP delivers them.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from rocketmq_spec.codec.ha import BlockReceived, encode_block, encode_report
from rocketmq_spec.fuzz.strategies.primitives import INT32, INT64

OFFSETS = st.integers(0, INT64[1])
"""Any CommitLog offset a report may carry (the master judges it against its own end)."""


def reports() -> st.SearchStrategy[list[int]]:
    return st.lists(OFFSETS, max_size=8)


def report_stream() -> st.SearchStrategy[bytes]:
    return reports().map(lambda offsets: b"".join(map(encode_report, offsets)))


@st.composite
def blocks(draw: st.DrawFn, max_blocks: int = 6, max_body: int = 256) -> list[BlockReceived]:
    """Contiguous blocks from a start offset, heartbeats (empty bodies) included."""
    offset = draw(st.integers(0, 1 << 40))
    result = []
    for body in draw(st.lists(st.binary(max_size=max_body), max_size=max_blocks)):
        result.append(BlockReceived(offset, body))
        offset += len(body)
    return result


def block_stream() -> st.SearchStrategy[tuple[list[BlockReceived], bytes]]:
    return blocks().map(lambda bs: (bs, b"".join(encode_block(b.offset, b.data) for b in bs)))


@st.composite
def broken_block_stream(draw: st.DrawFn) -> tuple[int, int, bytes]:
    """Blocks from a start the slave expects, ``n`` good ones then one breaking a rule: (start, n, stream)."""
    good = draw(blocks(max_blocks=3))
    start = good[0].offset if good else draw(st.integers(0, 1 << 40))
    end = good[-1].end if good else start
    prefix = b"".join(encode_block(b.offset, b.data) for b in good)
    kind = draw(st.sampled_from(["gap", "negative size", "negative offset"]))
    if kind == "gap":
        shift = draw(st.integers(1, 1 << 20))
        bad = encode_block(end - shift if end >= shift and draw(st.booleans()) else end + shift, b"x")
    elif kind == "negative size":
        size = draw(st.integers(INT32[0], -1))
        bad = end.to_bytes(8, "big", signed=True) + size.to_bytes(4, "big", signed=True)
    else:
        bad = draw(st.integers(INT64[0], -1)).to_bytes(8, "big", signed=True) + bytes(4)
    return start, len(good), prefix + bad


def cuts() -> st.SearchStrategy[list[int]]:
    """Where a stream is cut into the chunks a decoder is fed."""
    return st.lists(st.integers(0, 1 << 16), max_size=12)


def chunked(data: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(marks)]
