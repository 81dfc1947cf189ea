"""``benchmarks.failover`` publishes only from a quiet machine and a full run (no brokers started here)."""

from __future__ import annotations

from benchmarks.failover import CYCLES, ControllerRun, Cycle, problems, report
from benchmarks.machine import QUIET_LOAD_PER_CORE, QUIET_OTHERS_PER_CORE, cores


def _run(others: float) -> ControllerRun:
    return ControllerRun("reference", [Cycle(0.2 + i, 0.15 + i, 0.3 + i, 0.1, others) for i in range(CYCLES)])


def test_a_quiet_full_run_may_be_published() -> None:
    quiet_others = QUIET_OTHERS_PER_CORE * cores() / 2
    assert problems([_run(quiet_others)], QUIET_LOAD_PER_CORE * cores() / 2, CYCLES) == []


def test_load_other_processes_and_short_runs_are_refused() -> None:
    busy = QUIET_OTHERS_PER_CORE * cores()
    found = problems([_run(busy)], QUIET_LOAD_PER_CORE * cores(), CYCLES - 1)
    assert len(found) == 2 + CYCLES
    assert found[0].startswith(f"{CYCLES - 1} cycles") and found[1].startswith("load average")


def test_the_table_shows_medians_and_every_cycle() -> None:
    text = report([_run(0.0)], "python -m benchmarks.failover", "2026-11-29 10:00", 0.3)
    median = sorted(0.2 + i for i in range(CYCLES))[CYCLES // 2]
    assert f"| reference | {CYCLES} | {median:.3f} s (load 0.10" in text
    assert "| 0.050 s | " in text  # elected less closed, the controller's own share
    assert text.count(" (0.10, 0.00)") == CYCLES  # each cycle with its load and the others' cores
