"""The live fuzzer's oracles hold for real targets and still catch broken ones.

A 120 s run against Apache RocketMQ 4.9.8 reported six "timeouts" and two "memory" findings
(``tests/data/fuzz-java-4.9.8``): three streams ended inside a frame whose length word announced more
than was sent — a length-prefixed receiver rightly waits for the rest — and three were complete frames
whose JSON header ends inside an enum-valued string, on which Java's fastjson spins for seconds before
Java closes the connection (a real defect, kept as slow-close regression cases). The memory findings were
a JVM filling its heap inside ``-Xms1g``. Each is pinned here, next to a deliberately broken fake target
(``tests/fuzz_fake_target.py``) showing that a real hang, a connection never closed, and a leak are still
found.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.conformance.oracle import Expect, judge
from rocketmq_spec.conformance.regression import FindingClass, Listener
from rocketmq_spec.fuzz import idle, live, target
from rocketmq_spec.fuzz.cli import build_parser, memory_rule
from rocketmq_spec.fuzz.corpus import load_seeds
from rocketmq_spec.fuzz.live import Batch, FuzzConfig, LiveFuzzer
from rocketmq_spec.fuzz.memory import MemoryRule, MemoryWatch, jvm_heap_bytes, process_cmdline
from rocketmq_spec.fuzz.target import Target
from rocketmq_spec.spec.frame import MAX_LENGTH_VALUE
from tests.fuzz_fake_target import NEVER, Behaviour, FakeTarget
from tests.golden import PROJECT_ROOT

JAVA_RUN = Path(__file__).resolve().parent / "data" / "fuzz-java-4.9.8"
INCOMPLETE = ["79f17f91aa2f", "478093d2cf32", "94259607801c"]
"""Streams that end inside a frame: the length word announces up to 8 MiB, 25 to 62 bytes follow."""
ENUM_CUT = ["13f3601b5269", "d26f3a9b4dc7", "8c622adeffe8"]
"""Complete frames whose JSON header ends inside "language" or "serializeTypeCurrentRPC"."""
MIB = 1 << 20
REAL_HANG_PATIENCE = target.HANG_PATIENCE
JAVA_RSS = [(0.0, 191_586_304), (60.0, 471_724_032), (120.0, 744_779_776)]
"""VmRSS of the 4.9.8 broker (-Xms1g -Xmx1g) at the start and at its two "memory" findings."""


def java_stream(name: str) -> bytes:
    return (JAVA_RUN / f"timeout-{name}.bin").read_bytes()


@pytest.mark.parametrize("name", INCOMPLETE)
def test_a_stream_ending_inside_a_frame_is_owed_nothing_before_the_idle_timeout(name: str) -> None:
    stream = java_stream(name)
    assert judge(stream).expect is Expect.WAIT
    assert judge(stream).reason, "the codec does refuse it, from its first eight bytes"


@pytest.mark.parametrize("name", ENUM_CUT)
def test_a_complete_malformed_frame_must_be_closed(name: str) -> None:
    assert judge(java_stream(name)).expect is Expect.CLOSE


def test_length_words_no_receiver_accepts_are_judged_at_once() -> None:
    assert judge((MAX_LENGTH_VALUE + 1).to_bytes(4, "big") + b"\0" * 8).expect is Expect.CLOSE
    assert judge(b"\xff\xff\xff\xfe" + b"\0" * 8).expect is Expect.CLOSE, "negative as Java's int"
    assert judge(b"\x00\x00\x00\x02\x00").expect is Expect.WAIT, "too short, but two bytes are announced"


def test_one_signature_per_cause() -> None:
    signatures = {judge(java_stream(name)).signature for name in ENUM_CUT[:2]}
    assert len(signatures) == 1, "header cut at different columns is one cause"


def test_a_jvm_filling_its_heap_is_not_a_leak() -> None:
    heap = jvm_heap_bytes(["/usr/bin/java", "-Xms1g", "-Xmx1g", "-cp", "x", "BrokerStartup"])
    assert heap == 1 << 30
    watch = MemoryWatch(MemoryRule(growth_bytes=256 * MIB, warmup_seconds=30, heap_bytes=heap), started=0)
    assert [watch.sample(t, rss) for t, rss in JAVA_RSS] == [None, None, None]
    assert watch.sample(180.0, JAVA_RSS[0][1] + heap + 300 * MIB) is not None, "past the heap: a leak"


def test_without_a_heap_the_same_growth_is_a_finding() -> None:
    watch = MemoryWatch(MemoryRule(growth_bytes=256 * MIB, warmup_seconds=30), started=0)
    notes = [watch.sample(t, rss) for t, rss in JAVA_RSS]
    assert notes[0] is None and all(notes[1:]), "a non-JVM process growing 280 MB at a time is reported"


def test_warm_up_only_raises_the_baseline_and_a_ceiling_is_reported_once() -> None:
    watch = MemoryWatch(MemoryRule(growth_bytes=100, warmup_seconds=10, ceiling_bytes=10_000), started=0)
    assert watch.sample(1, 1_000) is None and watch.sample(5, 5_000) is None
    assert watch.baseline == 5_000
    assert watch.sample(11, 5_050) is None
    assert watch.sample(12, 5_200) is not None
    assert watch.sample(13, 20_000) is not None and watch.sample(14, 20_050) is None


@pytest.mark.parametrize(("cmdline", "heap"), [
    (["java", "-Xms256m", "-Xmx512m", "-XX:MaxDirectMemorySize=512m"], 512 * MIB),
    (["java", "-Xmx1g", "-Xmx2048m"], 2048 * MIB),
    (["/opt/jdk/bin/java", "-XX:MaxHeapSize=268435456"], 268435456),
    (["python3", "-m", "rocketmq_spec.reference_broker.cli"], None),
])
def test_jvm_heap_from_the_command_line(cmdline: list[str], heap: int | None) -> None:
    assert jvm_heap_bytes(cmdline) == heap


# ------------------------------------------------------------------ against broken fake targets

@pytest.fixture
def fast_oracles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds of seconds to minutes for real targets, scaled down for fakes that misbehave on cue."""
    monkeypatch.setattr(live, "SLOW_CLOSE_LIMIT", 6.0)
    monkeypatch.setattr(idle, "IDLE_GRACE", 0.5)
    monkeypatch.setattr(target, "HANG_PATIENCE", 3.0)
    monkeypatch.setattr(target, "PROBE_TIMEOUT", 0.5)
    monkeypatch.setattr(target, "PROBE_INTERVAL", 0.2)


def fuzzer(fake: FakeTarget, out: Path, idle_timeout: float | None = None) -> LiveFuzzer:
    config = FuzzConfig(Target(fake.namesrv, fake.broker), seconds=60, max_frames=1000,
                        idle_timeout=idle_timeout)
    return LiveFuzzer(config, load_seeds(), out)


def one_stream(stream: bytes, listener: Listener = Listener.BROKER) -> Batch:
    return Batch(listener, [[stream]], [], [(0, stream)])


def findings(fuzz: LiveFuzzer) -> dict[str, int]:
    return dict(fuzz.summary.findings)


@pytest.mark.usefixtures("fast_oracles")
def test_a_target_that_never_closes_a_malformed_frame_times_out(tmp_path: Path) -> None:
    with FakeTarget(Behaviour(close_after=NEVER)) as fake:
        fuzz = fuzzer(fake, tmp_path)
        fuzz.run_batch(one_stream(java_stream("13f3601b5269")))
    assert findings(fuzz) == {FindingClass.TIMEOUT.value: 1}
    assert len(list(tmp_path.glob(f"{FindingClass.TIMEOUT.value}-*.json"))) == 1


@pytest.mark.usefixtures("fast_oracles")
def test_a_target_slow_to_close_is_a_slow_close_once_per_cause(tmp_path: Path) -> None:
    with FakeTarget(Behaviour(close_after=3.0)) as fake:
        fuzz = fuzzer(fake, tmp_path)
        for name in ENUM_CUT[:2]:
            fuzz.run_batch(one_stream(java_stream(name), Listener.NAMESRV))
    assert findings(fuzz) == {FindingClass.SLOW_CLOSE.value: 1}
    assert sum(fuzz.summary.duplicates.values()) == 1


@pytest.mark.usefixtures("fast_oracles")
def test_a_prompt_target_gives_no_finding(tmp_path: Path) -> None:
    with FakeTarget(Behaviour()) as fake:
        fuzz = fuzzer(fake, tmp_path)
        for name in [*ENUM_CUT, *INCOMPLETE]:
            fuzz.run_batch(one_stream(java_stream(name)))
    assert findings(fuzz) == {}
    assert fuzz.summary.waiting == len(INCOMPLETE)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@pytest.mark.usefixtures("fast_oracles")
@pytest.mark.parametrize(("target_idle", "found"), [(0.3, {}), (NEVER, {FindingClass.IDLE.value: 1})])
def test_incomplete_frames_are_judged_only_after_the_named_idle_timeout(
        tmp_path: Path, target_idle: float, found: dict[str, int]) -> None:
    with FakeTarget(Behaviour(close_after=NEVER, idle_timeout=target_idle)) as fake:
        unjudged = fuzzer(fake, tmp_path / "no-timeout")
        unjudged.run_batch(one_stream(java_stream(INCOMPLETE[0])))
        assert findings(unjudged) == {} and unjudged.summary.idle_judged == 0
        judged = fuzzer(fake, tmp_path / "timeout", idle_timeout=0.5)
        judged.run_batch(one_stream(java_stream(INCOMPLETE[0])))
        judged.finish()
    assert findings(judged) == found
    assert judged.summary.idle_judged == 1


@pytest.mark.usefixtures("fast_oracles")
def test_a_stall_is_counted_and_a_hang_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two probes go unanswered, the third is answered: a stall, however long the machine took. The
    patience is the real one for the stall (a target that answers again never waits it out) and the scaled
    one for the hang, where it is all the test waits."""
    behaviour = Behaviour(unanswered=2)
    with FakeTarget(behaviour) as fake:
        fuzz = fuzzer(fake, tmp_path)
        with monkeypatch.context() as patience:
            patience.setattr(target, "HANG_PATIENCE", REAL_HANG_PATIENCE)
            fuzz.run_batch(one_stream(java_stream(INCOMPLETE[0])))
        assert findings(fuzz) == {} and len(fuzz.summary.stalls) == 1
        behaviour.unanswered = NEVER
        fuzz.run_batch(one_stream(java_stream(INCOMPLETE[0])))
    assert findings(fuzz) == {FindingClass.HANG.value: 1}
    assert fuzz.summary.stopped == "target hang"


@pytest.fixture
def leaking_process() -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """The fake target in its own process, keeping 8 MiB per connection; ``-Xmx64m`` only shows in its
    command line, where the fuzzer reads a JVM's heap from."""
    process = subprocess.Popen([sys.executable, "-m", "tests.fuzz_fake_target", "--leak-mb", "8", "-Xmx64m"],
                               cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        namesrv, broker = process.stdout.readline().split()
        yield process, namesrv, broker
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize(("heap", "found"), [(0, True), (None, False)], ids=["leak", "inside-heap"])
def test_a_leaking_process_is_found_unless_the_growth_fits_its_heap(
        leaking_process: tuple[subprocess.Popen[str], str, str], tmp_path: Path, heap: int | None,
        found: bool) -> None:
    process, namesrv, broker = leaking_process
    allowance = jvm_heap_bytes(process_cmdline(process.pid)) if heap is None else heap
    assert heap is not None or allowance == 64 * MIB
    rule = MemoryRule(growth_bytes=40 * MIB, warmup_seconds=0, heap_bytes=allowance or 0)
    config = FuzzConfig(Target(namesrv, broker, process.pid), seconds=60, max_frames=1000, memory=rule)
    fuzz = LiveFuzzer(config, load_seeds(), tmp_path)
    for _ in range(4):  # each batch opens a connection, and each probe another: 8 MiB apiece
        fuzz.run_batch(one_stream(java_stream(INCOMPLETE[0])))
    assert (findings(fuzz) == {FindingClass.MEMORY.value: 1}) is found


def test_the_memory_rule_of_the_command_line(leaking_process: tuple[subprocess.Popen[str], str, str]) -> None:
    process, namesrv, broker = leaking_process
    base = ["--namesrv", namesrv, "--broker", broker, "--pid", str(process.pid)]
    assert memory_rule(build_parser().parse_args(base)).heap_bytes == 64 * MIB, "read from the cmdline"
    given = memory_rule(build_parser().parse_args([*base, "--heap-mb", "300", "--rss-ceiling-mb", "900",
                                                   "--rss-growth-mb", "50", "--warmup-seconds", "5"]))
    assert given == MemoryRule(50 * MIB, 5.0, 900 * MIB, 300 * MIB)
