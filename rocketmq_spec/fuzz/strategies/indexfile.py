"""Small IndexFiles: few slots, few entries, colliding keys and long chains, built through the codec.

Java's ``String.hashCode`` gives "Aa" and "BB" the same hash, so keys made of those blocks collide
outright, and with a handful of slots unrelated keys share slots too: every lookup walks a chain that
mixes its own key with others. Store times only move forward, as a broker's do, which is what lets a
lookup stop at the first entry older than its range.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from rocketmq_spec.codec.store.indexfile import IndexFile
from rocketmq_spec.fuzz.strategies.primitives import names
from rocketmq_spec.spec.indexfile import index_key

MAX_SLOTS = 8
MAX_PUTS = 24
COLLIDING_BLOCKS = ("Aa", "BB")
"""Two strings of equal Java hash: any sequence of them hashes like any other of the same length."""
FIRST_STORE_TIME = (1, 1 << 41)
"""Store times in ms: positive (a zero begin time switches time differences off) and below year 2039."""
MAX_STEP_MS = 5_000


@dataclass(frozen=True)
class Put:
    key: str
    """``topic#key`` as the broker indexes it."""
    phy_offset: int
    store_timestamp: int


@dataclass(frozen=True)
class IndexPlan:
    slot_count: int
    capacity: int
    """Entry capacity (``maxIndexNum``); entry 0 is never used, so ``capacity - 1`` puts fit."""
    puts: tuple[Put, ...]

    @property
    def accepted(self) -> tuple[Put, ...]:
        """The puts that fit before the file is full (RMQ-IDX-FULL)."""
        return self.puts[:max(self.capacity - 1, 0)]


def colliding_keys() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(COLLIDING_BLOCKS), min_size=1, max_size=3).map("".join)


def index_keys() -> st.SearchStrategy[str]:
    return st.builds(index_key, names(max_size=4), st.one_of(colliding_keys(), names(max_size=6)))


@st.composite
def index_plans(draw: st.DrawFn, *, default_ratio: bool | None = None) -> IndexPlan:
    """A few puts from a small key pool into a file of a few slots.

    ``default_ratio`` forces (True) or forbids (False) Java's 1:4 slot-to-entry ratio, which is what lets a
    reader infer the counts from the file size; None draws either.
    """
    slot_count = draw(st.integers(1, MAX_SLOTS))
    ratio = draw(st.booleans()) if default_ratio is None else default_ratio
    capacity = 4 * slot_count if ratio else draw(st.integers(1, MAX_PUTS + 2).filter(
        lambda n: n != 4 * slot_count))
    pool = draw(st.lists(index_keys(), min_size=1, max_size=6, unique=True))
    count = draw(st.integers(0, MAX_PUTS))
    time = draw(st.integers(*FIRST_STORE_TIME))
    offset = draw(st.integers(0, 1 << 40))
    puts = []
    for _ in range(count):
        puts.append(Put(draw(st.sampled_from(pool)), offset, time))
        offset += draw(st.integers(0, 4096))
        time += draw(st.integers(0, MAX_STEP_MS))
    return IndexPlan(slot_count, capacity, tuple(puts))


def write_index(path: Path, plan: IndexPlan) -> list[bool]:
    """Create the file and put every key of ``plan`` through the codec; what each put returned."""
    with IndexFile.create(path, slot_count=plan.slot_count, index_count=plan.capacity) as index:
        results = [index.put(put.key, put.phy_offset, put.store_timestamp) for put in plan.puts]
        index.flush()
    return results
