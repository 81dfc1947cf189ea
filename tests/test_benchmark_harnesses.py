"""The benchmarks' own machinery: the in-process hot-path harness runs its requests; the matrix reads
``Bench``'s lines into phases, takes medians and spreads of per-second samples, judges a run quiet or not,
refuses to publish what is not, and refuses a target it does not know before any work."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks import builds, hot_path, java_compare, matrix
from benchmarks.ci_check import EXPECTED, verdict
from benchmarks.common import process_table
from benchmarks.java_compare import FULL, QUICK, Phase, TargetRun, _PhaseReader
from benchmarks.machine import Reading, ReapedChildren
from benchmarks.matrix import BEGIN, END, MatrixRun, comparison, problems, write_section
from benchmarks.startup import answers
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.spec.codes import ResponseCode


@pytest.mark.parametrize("pulls", [False, True])
def test_hot_path_measures_answered_requests(pulls: bool) -> None:
    assert event_loop.run(hot_path.measure(hot_path.CONNECTIONS * 2, pulls), None) > 0


def _phase(mode: str, threads: int, samples: tuple[int, ...], others: float = 0.0) -> Phase:
    return Phase(mode, threads, samples, p50_ms=1.0, p99_ms=2.0, failed=0,
                 broker_cpu_s=float(sum(samples)) / 1e4, client_cpu_s=float(sum(samples)) / 2e4,
                 load_before=0.1, load_during=2.0,
                 others_warmup=others, others_during=others)


def _run(name: str, scale: float, others: float = 0.0) -> TargetRun:
    run = TargetRun(name, start_s=2.0 * scale, memory_mib=100 * scale, memory_loaded_mib=150 * scale)
    for mode in java_compare.MODES:
        for threads in java_compare.THREADS:
            phase = _phase(mode, threads, tuple(int(1000 * scale) + n for n in range(30)), others)
            run.phases[phase.key] = phase
    return run


def test_rate_is_the_median_of_per_second_samples_with_its_spread() -> None:
    phase = _phase("send", 4, (10, 100, 101, 102, 103, 104, 105, 106, 107, 5000))
    assert phase.rate == 103.5
    low, high = phase.spread
    assert 10 < low < 101 and 107 < high < 5000
    assert phase.cpu_us == pytest.approx(1e6 / 1e4)
    assert phase.client_cpu_us == pytest.approx(1e6 / 2e4)


def test_quiet_means_few_cores_used_by_others(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(java_compare, "cores", lambda: 2)
    assert _phase("send", 1, (1,), others=0.19).quiet
    assert not _phase("send", 1, (1,), others=0.2).quiet


def test_others_cores_leave_out_the_benchmark_and_the_kernel_threads() -> None:
    before = Reading(at=10.0, load_1min=1.0, busy_s=100.0, own_s=0.0, kernel_s=0.0, broker_s=0.0,
                     client_s=0.0)
    after = Reading(at=20.0, load_1min=2.0, busy_s=120.0, own_s=15.0, kernel_s=1.0, broker_s=8.0,
                    client_s=5.0)
    assert after.others_cores(before) == pytest.approx(0.4)


BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
"""A child that uses about 0.3 CPU-seconds, then exits."""


def test_a_reaped_child_s_unsampled_cpu_is_counted() -> None:
    """A child sampled part way through its life, then reaped: what it used after that sample is found
    (the whole of its CPU, as ``wait4`` reports it, less what the sample already held)."""
    reaped = ReapedChildren()
    reaped.add(process_table())
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()\n" + BURN],
                             stdin=subprocess.PIPE)
    sampled = process_table()
    reaped.add(sampled)
    assert child.stdin is not None
    child.stdin.close()
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    reaped.add(process_table())
    unsampled = usage.ru_utime + usage.ru_stime - sampled[child.pid][1] / os.sysconf("SC_CLK_TCK")
    assert unsampled > 0.25
    assert reaped.seconds == pytest.approx(unsampled, abs=0.02)


class _Watch:
    """A machine watch whose readings count up: each one second later, the broker one CPU-second busier."""

    def __init__(self) -> None:
        self.count = 0

    def read(self) -> Reading:
        self.count += 1
        return Reading(at=float(self.count), load_1min=0.5 * self.count, busy_s=2.0 * self.count,
                       own_s=1.5 * self.count, kernel_s=0.0, broker_s=float(self.count),
                       client_s=0.5 * self.count)


def test_bench_lines_become_a_phase_over_the_counted_seconds() -> None:
    reader = _PhaseReader(_Watch())  # type: ignore[arg-type]
    lines = ["warmup mode=send threads=4", "some client log line", "measure mode=send threads=4",
             *(f"sample mode=send threads=4 second={n} ops={n} messages={100 * n}" for n in (1, 2, 3)),
             "phase mode=send threads=4 ops=6 messages=600 seconds=3.0 p50_ms=0.5 p99_ms=1.5 failed=0"]
    phases = [phase for line in lines if (phase := reader.feed(line)) is not None]
    assert len(phases) == 1
    phase = phases[0]
    assert (phase.key, phase.samples, phase.rate, phase.p99_ms) == ("send-4", (100, 200, 300), 200.0, 1.5)
    assert phase.broker_cpu_s == 3.0  # readings 2 (measure) to 5 (third sample)
    assert phase.client_cpu_s == 1.5
    assert (phase.load_before, phase.load_during) == (0.5, 2.5)
    assert phase.others_during == pytest.approx(0.5)


def _matrix(timing: java_compare.Timing = FULL, load: float = 0.1, others: float = 0.0) -> MatrixRun:
    run = MatrixRun("python -m benchmarks.matrix", "abc", timing, java_compare.THREADS, "2026-11-29 07:20",
                    "07:40", load, [_run("embedded", 1.0, others), _run("apache-4.9.7", 2.0)])
    return run


def test_a_quiet_full_run_may_be_published_and_others_may_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(java_compare, "cores", lambda: 2)
    monkeypatch.setattr(matrix, "cores", lambda: 2)
    assert problems(_matrix()) == []
    assert "--quick" in problems(_matrix(QUICK))[0]
    assert "load average 1.50 before the run" in problems(_matrix(load=1.5))[0]
    assert any("embedded send-1: other processes used 0.50 cores" in p for p in problems(_matrix(others=0.5)))


def test_comparison_gives_each_target_a_column_and_the_reference_its_ratios() -> None:
    lines = comparison(_matrix().runs, java_compare.THREADS).splitlines()
    assert lines[0] == "| measure | embedded | apache-4.9.7 | embedded / apache-4.9.7 |"
    send_64 = next(line for line in lines if line.startswith("| send msg/s, 64 threads"))
    assert send_64.endswith("| 0.50x |")


def test_publish_refuses_quick_and_not_quiet_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as refused:
        matrix.main(["--quick", "--publish", "--targets", "embedded"])
    assert refused.value.code == 2
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"before\n{BEGIN}\nold\n{END}\nafter\n")
    monkeypatch.setattr(matrix, "DOC", doc)
    monkeypatch.setattr(matrix, "run_matrix", lambda *args: _matrix(load=99.0))
    assert matrix.main(["--publish", "--targets", "embedded"]) == matrix.NOT_QUIET
    assert "old" in doc.read_text()


def test_the_json_holds_the_samples_and_each_phase_s_figures() -> None:
    written = json.loads(matrix.payload(_matrix()))
    assert len(written["runs"][0]["phases"]["send-4"]["samples"]) == 30
    assert written["figures"]["apache-4.9.7"]["pull-64"]["rate"] == 2014.5


def test_write_section_replaces_what_lies_between_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"before\n{BEGIN}\nold\n{END}\nafter\n")
    write_section(doc, "new")
    assert doc.read_text() == f"before\n{BEGIN}\nnew\n{END}\nafter\n"


def test_unknown_target_is_refused_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert matrix.main(["--targets", "embedded", "nonsense-1.0"]) == 2
    assert "nonsense-1.0" in capsys.readouterr().err


def test_start_probe_needs_a_whole_answer() -> None:
    answer = encode(RemotingCommand(ResponseCode.SUCCESS, opaque=0, flag=1))
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def serve(reply: bytes) -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(reply)

        for reply, expected in ((answer, True), (answer[:-1], False)):
            thread = threading.Thread(target=serve, args=(reply,))
            thread.start()
            assert answers(f"127.0.0.1:{port}") is expected
            thread.join()


@pytest.mark.parametrize("change, passed", [(1.0, True), (1.9, True), (1 / 1.9, True), (2.0, False),
                                            (0.5, False), (3.0, False)])
def test_ci_check_fails_only_on_a_change_of_about_2x(change: float, passed: bool) -> None:
    name, recorded = next(iter(EXPECTED.items()))
    assert verdict(name, recorded * change).passed is passed


def test_builds_summary_gives_medians_over_rounds_and_ratios_to_the_first_build(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("benchmarks.java_compare.cores", lambda: 2)
    base = [_phase("send", 16, (1000,) * 5), _phase("send", 16, (3000,) * 5), _phase("send", 16, (2000,) * 5)]
    changed = [_phase("send", 16, (3000,) * 5), _phase("send", 16, (2500,) * 5, others=1.0)]
    lines = builds.summary({"send-16": {"main": base, "perf": changed}}, ["main", "perf"])
    assert lines == ["send-16: main 2,000/s (1.00x), p99 2.00 ms, 100.0 us/msg; "
                     "perf 2,750/s (1.38x), p99 2.00 ms, 100.0 us/msg  [not quiet: indicative only]"]


def test_builds_refuses_a_checkout_without_the_package(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        builds.main(["--build", f"main={tmp_path}", "--build", f"perf={tmp_path}"])
