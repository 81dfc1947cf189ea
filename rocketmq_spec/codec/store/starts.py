"""Where consecutive CommitLog records begin, found by reading two integers per record.

Table readers gather a batch's fields column-wise (:mod:`rocketmq_spec.codec.store.columns`) but first need
the batch's record starts, and records are self-delimiting: the only way to the next record is the TOTALSIZE
of this one. :meth:`rocketmq_spec.codec.store.commitlog.CommitLog.scan` unpacks every fixed field of each
record on the way, several microseconds a record in Python; the walk here reads only TOTALSIZE and MAGICCODE
per record and then makes scan's remaining checks (fixed fields within TOTALSIZE, PHYSICALOFFSET equal to the
record's position) for the whole batch with numpy. It never raises: it stops before the first record that scan
would refuse, or that is not a message (a BLANK marker, unwritten zeros), and the caller's record decoder
reads on from there and reports exactly what it finds. ``tests/test_store_starts.py`` holds the starts equal
to scan's, broken stores included. """

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import NamedTuple

import numpy as np

from rocketmq_spec.codec.fast_store import BORNHOST_V6, RECORD_PREFIX, STOREHOST_V6, ReadableBuffer
from rocketmq_spec.codec.hotpath import compiled
from rocketmq_spec.spec.commitlog import (
    FIXED_PART_V4,
    IPV4_HOST_SIZE,
    IPV6_HOST_SIZE,
    MAGIC_POSITION,
    MESSAGE_MAGICS,
    PHYSICAL_OFFSET_POSITION,
    SYS_FLAG_POSITION,
)

BODY_POSITION_V4 = FIXED_PART_V4 + 4
"""Bytes up to and including the body length when both hosts are IPv4: the shortest a record can be."""
_V6_EXTRA = IPV6_HOST_SIZE - IPV4_HOST_SIZE
_MAGICS = frozenset(MESSAGE_MAGICS)


class Starts(NamedTuple):
    starts: np.ndarray
    """Positions in the buffer of the records found, int64, in order."""
    resume: int
    """Position after the last record found: where a further walk (or the record decoder) goes on."""


def _ints(buf: np.ndarray, at: np.ndarray, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    return buf[at[:, None] + np.arange(width)].view(dtype).reshape(-1).astype(np.int64)


def accepted(view: ReadableBuffer, starts: np.ndarray, *, base: int) -> np.ndarray:
    """Which of ``starts`` (any positions in the buffer of a CommitLog file that begins at commitlog
    offset ``base``) hold a message record the record walk accepts: a message magic, TOTALSIZE within
    the buffer, fixed fields within TOTALSIZE, PHYSICALOFFSET equal to the record's offset."""
    starts = np.asarray(starts, dtype=np.int64)
    buf = np.frombuffer(view, dtype=np.uint8)
    inside = (starts >= 0) & (starts <= len(buf) - BODY_POSITION_V4)
    at = np.where(inside, starts, 0)
    total = _ints(buf, at, ">i4")
    magic = _ints(buf, at + MAGIC_POSITION, ">u4")
    sys_flag = _ints(buf, at + SYS_FLAG_POSITION, ">i4")
    body_position = (BODY_POSITION_V4 + _V6_EXTRA * ((sys_flag & BORNHOST_V6) != 0)
                     + _V6_EXTRA * ((sys_flag & STOREHOST_V6) != 0))
    physical = _ints(buf, at + PHYSICAL_OFFSET_POSITION, ">i8")
    return (inside & np.isin(magic, list(_MAGICS)) & (body_position <= total) & (total <= len(buf) - at)
            & (physical == base + at))


def _message_starts(view: ReadableBuffer, pos: int, stop: int, *, base: int, limit: int) -> Starts:
    """Starts of at most ``limit`` consecutive message records from ``pos`` that begin before ``stop``,
    in a buffer holding one CommitLog file whose first byte is commitlog offset ``base``."""
    unpack = RECORD_PREFIX.unpack_from
    size = len(view)
    found: list[int] = []
    at = pos
    while at < stop and len(found) < limit and size - at >= BODY_POSITION_V4:
        total_size, magic = unpack(view, at)
        if magic not in _MAGICS or total_size < BODY_POSITION_V4 or total_size > size - at:
            break
        found.append(at)
        at += total_size
    starts = np.asarray(found, dtype=np.int64)
    refused = np.flatnonzero(~accepted(view, starts, base=base))
    if len(refused):
        first = int(refused[0])
        return Starts(starts[:first], int(starts[first]))
    return Starts(starts, at)


_LAYOUT = (tuple(MESSAGE_MAGICS), MAGIC_POSITION, SYS_FLAG_POSITION, PHYSICAL_OFFSET_POSITION,
           BODY_POSITION_V4, _V6_EXTRA)
"""The spec's record layout, as the compiled walk takes it."""


def compiled_walk(module: ModuleType) -> Callable[..., Starts]:
    """:func:`_message_starts` run by the compiled twin in ``module`` (the extension), which declines
    (and leaves to the pure walk) only a negative ``pos``."""
    def walk(view: ReadableBuffer, pos: int, stop: int, *, base: int, limit: int) -> Starts:
        walked = module.message_starts(view, pos, stop, base, limit, _LAYOUT)
        if walked is None:
            return _message_starts(view, pos, stop, base=base, limit=limit)
        starts, resume = walked
        return Starts(np.frombuffer(starts, dtype=np.int64), resume)
    return walk


message_starts = (compiled_walk(compiled) if compiled is not None and hasattr(compiled, "message_starts")
                  else _message_starts)
"""The walk (:func:`_message_starts`), compiled where the extension is built
(:mod:`rocketmq_spec.codec.hotpath`): one struct unpack per record was some 40% of the Python CPU of a
``local[1]`` scan."""
