"""The benchmarks' own machinery: the in-process hot-path harness runs its requests, the side-by-side
table judges the targets, and the side-by-side command refuses a target it does not know before any work."""

from __future__ import annotations

import pytest

from benchmarks import hot_path, java_compare
from benchmarks.java_compare import Phase, TargetRun, table
from rocketmq_spec.reference_broker import event_loop


@pytest.mark.parametrize("pulls", [False, True])
def test_hot_path_measures_answered_requests(pulls: bool) -> None:
    assert event_loop.run(hot_path.measure(hot_path.CONNECTIONS * 2, pulls), None) > 0


def _run(name: str, scale: float, p99_ms: float) -> TargetRun:
    run = TargetRun(name, startup_s=2.0 * scale, rss_mib=100 * scale, rss_loaded_mib=150 * scale)
    for mode in ("send", "pull"):
        for threads in java_compare.THREADS:
            run.phases[f"{mode}-{threads}"] = Phase(mode, threads, 1000, int(1000 * scale), seconds=1.0,
                                                   p50_ms=1.0, p99_ms=p99_ms, failed=0, cpu_us=50.0)
    return run


def test_table_gives_each_target_a_column_and_the_reference_its_ratios() -> None:
    text = table([_run("embedded", 0.9, 5.0), _run("apache-4.9.7", 1.0, 2.0), _run("apache-5.5.0", 2.0, 1.0)],
                 (1.0, 2.0, 3.0))
    lines = text.splitlines()
    assert lines[0] == ("| measure | embedded | apache-4.9.7 | apache-5.5.0 | embedded / apache-4.9.7 "
                        "| embedded / apache-5.5.0 |")
    send_4 = next(line for line in lines if line.startswith("| send msg/s, 4 threads"))
    assert "0.90x ✓" in send_4 and "0.45x ✗" in send_4
    p99_4 = next(line for line in lines if line.startswith("| send p99 ms, 4 threads"))
    assert "2.50x ✗" in p99_4 and "5.00x ✗" in p99_4
    assert "Load average before the run: 1.00 2.00 3.00" in text


def test_unknown_target_is_refused_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert java_compare.main(["--targets", "embedded", "nonsense-1.0"]) == 2
    assert "nonsense-1.0" in capsys.readouterr().err
