"""Properties of whole small store directories written through the codec: the readers give back what was
written, corrupted files raise only typed errors, and ``rmq-conformance store`` passes on intact ones."""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.fuzz.mutators import bit_flip
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.store import StorePlan, WrittenStore, store_files, store_plans, write_store
from rocketmq_spec.spec.errors import RocketMQSpecError
from tests import process_tree

CONFORMANCE_TIMEOUT = 300
"""Seconds for one ``rmq-conformance store`` run: far above its usual few seconds, only a hang bound."""
STORE_EXAMPLES = 25
"""Each example writes a whole directory and reads every file back."""


def _read_everything(store: StoreDirectory) -> None:
    """Every reader over every file: what a store tool does when it opens a directory."""
    records = list(store.messages())
    for record in records:
        store.read(record.physical_offset)
        for key in [*record.keys, record.uniq_key or ""]:
            store.lookup_key(record.topic, key)
    for topic, queue_id in store.queues():
        queue = store.queue(topic, queue_id)
        for n in range(queue.min_offset, queue.max_offset):
            queue.entry(n)
    store.checkpoint()
    store.topics()
    store.consumer_offsets()


def _check_read_back(store: StoreDirectory, written: WrittenStore) -> None:
    assert list(store.messages()) == written.records
    assert [store.read(r.physical_offset) for r in written.records] == written.records
    assert store.queues() == sorted(written.queues)
    for (topic, queue_id), entries in written.queues.items():
        queue = store.queue(topic, queue_id)
        first = written.queue_firsts[(topic, queue_id)]
        assert queue.first_offset == first
        assert [queue.entry(n) for n in range(first, queue.max_offset)] == entries
        assert queue.min_offset == min(r.queue_offset for r in written.records
                                       if (r.topic, r.queue_id) == (topic, queue_id))
    for record in written.records:
        for key in [*record.keys, record.uniq_key or ""]:
            assert record in store.lookup_key(record.topic, key)
    assert store.checkpoint() == written.checkpoint
    assert set(store.topics()) == {topic for topic, _ in written.queues}
    assert store.consumer_offsets() == written.consumer_offsets


@fuzz_settings(max_examples=STORE_EXAMPLES)
@given(store_plans())
def test_store_directory_reads_back_what_was_written(plan: StorePlan) -> None:
    with tempfile.TemporaryDirectory() as work:
        written = write_store(Path(work) / "store", plan)
        with StoreDirectory(Path(work) / "store") as store:
            _check_read_back(store, written)


@fuzz_settings(max_examples=STORE_EXAMPLES)
@given(store_plans(), st.data(), st.randoms(use_true_random=False))
def test_corrupted_store_files_raise_only_typed_errors(plan: StorePlan, data: st.DataObject,
                                                       rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "store"
        write_store(root, plan)
        victim = data.draw(st.sampled_from(store_files(root)))
        content = victim.read_bytes()
        if data.draw(st.booleans()) or not content:
            victim.write_bytes(content[:data.draw(st.integers(0, max(len(content) - 1, 0)))])
        else:
            victim.write_bytes(bit_flip(rng, content))
        try:
            with StoreDirectory(root) as store:
                _read_everything(store)
        except RocketMQSpecError:
            pass


@fuzz_settings(max_examples=2)
@given(store_plans(conformant=True))
def test_conformance_passes_on_written_stores(plan: StorePlan) -> None:
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "store"
        written = write_store(root, plan)
        with StoreDirectory(root) as store:
            _check_read_back(store, written)
        report = Path(work) / "report"
        done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                                 "store", str(root), "--report",
                                 str(report)], capture_output=True, text=True, timeout=CONFORMANCE_TIMEOUT,
                                check=False)
        totals = json.loads((report / "index.json").read_text())["totals"]
        assert (done.returncode, totals.get("FAIL", 0), totals.get("CRASH", 0)) == (0, 0, 0), done.stdout

