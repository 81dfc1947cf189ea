"""The live fuzzer and the kept regression cases against the embedded reference broker."""

from __future__ import annotations

import random
import socket
from pathlib import Path

import pytest

from rocketmq_spec.conformance.oracle import Expect, expectation
from rocketmq_spec.conformance.regression import (
    ConnectionCase,
    FindingClass,
    Listener,
    RegressionCase,
    load_cases,
)
from rocketmq_spec.fuzz.corpus import load_seeds
from rocketmq_spec.fuzz.live import FuzzConfig, LiveFuzzer, plan_batch
from rocketmq_spec.fuzz.mutators import MUTATORS
from rocketmq_spec.fuzz.replay import replay
from rocketmq_spec.fuzz.target import Health, Target
from rocketmq_spec.fuzz.wire import parse_loopback
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.errors import SpecViolation

SEEDS = load_seeds()
BRIEF_RUN_FRAMES = 96
"""Frames of the in-suite run: six batches, enough to see every mutator reach both listeners' code."""


@pytest.fixture
def target(rocketmq_broker: SyncEmbeddedRocketMQ) -> Target:
    return Target(rocketmq_broker.namesrv_addr, rocketmq_broker.broker_addr)


def test_a_brief_run_finds_nothing_and_counts_its_frames(target: Target, tmp_path: Path) -> None:
    config = FuzzConfig(target, seconds=600, max_frames=BRIEF_RUN_FRAMES, batch_size=16, seed=11)
    out = tmp_path / "findings"
    summary = LiveFuzzer(config, SEEDS, out).run()
    assert summary.stopped == "frame limit"
    assert summary.frames_sent == BRIEF_RUN_FRAMES
    assert dict(summary.findings) == {}
    assert not out.exists()


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case.id)
def test_kept_regression_cases_hold(target: Target, case: RegressionCase) -> None:
    assert replay(case, target) == []


def test_replay_reports_a_target_that_does_not_answer() -> None:
    """A listener nobody serves is a crash: replay must say so instead of passing."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        addr = f"127.0.0.1:{unused.getsockname()[1]}"
    case = RegressionCase(FindingClass.CRASH, Listener.BROKER, [])
    assert replay(case, Target(addr, addr)) == ["broker crash after the case"]
    assert Target(addr, addr).health(Listener.NAMESRV) is Health.CRASH


def test_case_files_round_trip(tmp_path: Path) -> None:
    frame = SEEDS[0].data
    case = RegressionCase(FindingClass.TIMEOUT, Listener.NAMESRV, [ConnectionCase([frame[:9], b"\xff" * 8])],
                          ["truncate"], "note", seed=3, batch=4)
    path = case.save(tmp_path)
    (loaded,) = load_cases(path)
    assert loaded.to_json() == case.to_json()
    assert (tmp_path / f"{case.id}.c0.bin").read_bytes() == frame[:9] + b"\xff" * 8


def test_expectation_follows_the_codec() -> None:
    frame = SEEDS[0].data
    assert expectation(frame) is Expect.ANY
    assert expectation(frame[:-1]) is Expect.ANY
    assert expectation(b"\xff\xff\xff\xff") is Expect.CLOSE


def test_batches_keep_every_frame_in_order_per_connection() -> None:
    rng = random.Random(5)
    seeds = {seed.code: [seed.data] for seed in SEEDS if seed.listener is Listener.BROKER}
    for _ in range(20):
        batch = plan_batch(rng, seeds, Listener.BROKER, 8)
        assert sum(map(len, batch.connections)) == 8
        assert set(batch.mutations) <= set(MUTATORS)
        for index, frames in enumerate(batch.connections):
            assert b"".join(piece for i, piece in batch.pieces if i == index) == b"".join(frames)


@pytest.mark.parametrize("addr", ["10.0.0.1:9876", "example.invalid:1", "127.0.0.1"])
def test_only_loopback_targets_are_accepted(addr: str) -> None:
    with pytest.raises((SpecViolation, OSError)):
        parse_loopback(addr)
