"""``rmq-conformance client``: the driver runner, the command's refusals, and every case seen to fail
against a test client that breaks its clause (tests/broken_client) and pass against one that does not."""

from __future__ import annotations

import dataclasses
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.conformance.clients import cli, driver
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.cli import main, run_suite
from rocketmq_spec.conformance.clients.judge import JudgingServer
from rocketmq_spec.conformance.clients.recording import requests
from rocketmq_spec.conformance.clients.runs import Runs
from rocketmq_spec.conformance.verdict import Verdict
from rocketmq_spec.spec.codes import ResponseCode

BROKEN_CLIENT = [sys.executable, str(Path(__file__).with_name("broken_client"))]

BREAKS = {
    "frames::frame[produce]": "bad-frame",
    "frames::frame[consume]": "bad-frame",
    "frames::language": "bad-language",
    "frames::version": "zero-version",
    "frames::serialize_type": "serialize-mismatch",
    "frames::flag": "response-bit",
    "frames::opaque": "reuse-opaque",
    "frames::header_required[produce]": "missing-field",
    "frames::header_required[consume]": "missing-field",
    "frames::send_code": "send-v1",
    "frames::acl_sign": "bad-signature",
    "session::route_first": "no-route-first",
    "session::route_poll": "no-route-poll",
    "session::heartbeat_content[producer]": "no-heartbeat-after-send",
    "session::heartbeat_content[consumer]": "bad-heartbeat",
    "session::heartbeat_start": "skip-heartbeat",
    "session::heartbeat_period": "heartbeat-once",
    "session::client_id": "bad-client-id",
    "session::unregister[producer]": "skip-unregister",
    "session::unregister[consumer]": "skip-unregister",
    "session::unregister_last": "late-request",
    "producer::uniq_key": "bad-uniq",
    "producer::uniq_time": "uniq-time",
    "producer::properties": "bad-props",
    "producer::body": "corrupt-body",
    "producer::batch": "batch-no-uniq",
    "producer::compress[large]": "no-compress",
    "producer::compress[small]": "compress-small",
    "producer::born_timestamp": "born-skew",
    "producer::default_topic": "bad-default-topic",
    "producer::queue": "bad-queue",
    "producer::oneway": "oneway-no-bit",
    "producer::txn_half": "txn-no-flag",
    "producer::txn_end": "txn-no-end",
    "producer::txn_check": "no-check-answer",
    "grpc::metadata[producer]": "no-client-id",
    "grpc::metadata[consumer]": "no-client-id",
    "grpc::settings_first[producer]": "settings-late",
    "grpc::settings_first[consumer]": "settings-late",
    "grpc::heartbeat[producer]": "no-heartbeat-after-send",
    "grpc::heartbeat[consumer]": "no-heartbeat",
    "grpc::ack_handle": "bad-handle",
    "grpc::termination[producer]": "no-termination",
    "grpc::termination[consumer]": "no-termination",
    "grpc::fifo_send": "fifo-no-group",
    "grpc::fifo_consume": "fifo-ack-reverse",
    "grpc::change_handle[nack]": "change-negative",
    "grpc::change_handle[extend]": "ack-stale-handle",
    "grpc::txn_send": "txn-wrong-id",
    "grpc::txn_recover": "recover-as-client",
    "reactions::send_retry": "no-retry",
    "reactions::send_retry_bound": "retry-forever",
    "reactions::send_no_retry": "retry-on-illegal",
    "reactions::slow_answer": "impatient",
    "reactions::reconnect": "no-reconnect",
    "reactions::topic_not_exist": "no-tbw102",
    "reactions::send_busy": "retry-on-busy",
    "reactions::go_away": "go-away-same-connection",
    "consumer::pull_queue": "bad-pull-queue",
    "consumer::pull_next": "pull-repeat",
    "consumer::pull_suspend": "no-suspend",
    "consumer::offset_moved": "ignore-moved",
    "consumer::delivery": "corrupt-delivery",
    "consumer::query_offset": "skip-query-offset",
    "consumer::consume_from_where": "from-where-bad",
    "consumer::offset_commit": "no-commit",
    "consumer::offset_period": "commit-only-shutdown",
    "consumer::offset_shutdown": "no-final-commit",
}
"""Each case and the break of the test client that must make it fail."""


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _exited(pid: int) -> bool:
    """The process has exited (a zombie waiting for init to reap it counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _gone(pid: int, bound_s: float = 30.0) -> bool:
    """The process exits once SIGKILLed: the signal is delivered when the kernel next schedules it, which on
    a loaded machine is after ``killpg`` has returned, so wait for it (a bound only a kill that never came
    reaches)."""
    end = time.monotonic() + bound_s
    while not _exited(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


HANGS_WITH_A_CHILD = (
    "#!/bin/sh\nsleep 600 &\necho \"$!\" > \"$0.child\"\n{ready}exec sleep 600\n"
)
"""A driver that starts a child of its own, then never exits (and, without ``ready``, never says a word)."""


@pytest.mark.parametrize("ready", ["", "echo '{\"event\":\"ready\"}'\n"], ids=["silent", "ready"])
def test_a_hanging_driver_is_killed_with_its_children_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ready: str
) -> None:
    monkeypatch.setattr(driver, "GRACE_S", 0.5)
    script = _executable(tmp_path / "hang", HANGS_WITH_A_CHILD.format(ready=ready))
    result = driver.run([str(script)], "produce", {}, 0.5)
    assert result.hung and result.failed is not None and "killed" in result.failed
    assert [e.kind for e in result.events] == (["ready"] if ready else [])
    assert _gone(int((tmp_path / "hang.child").read_text()))


def test_unsupported_and_failed_drivers_say_why(tmp_path: Path) -> None:
    unsupported = _executable(
        tmp_path / "u", '#!/bin/sh\necho \'{"event":"unsupported","reason":"no batch"}\'\nexit 3\n'
    )
    result = driver.run([str(unsupported)], "produce-batch", {}, 5)
    assert result.unsupported == "no batch" and result.failed is None
    failing = _executable(tmp_path / "f", "#!/bin/sh\necho 'boom' >&2\nexit 7\n")
    result = driver.run([str(failing)], "produce", {}, 5)
    assert result.unsupported is None and result.failed == "the driver exited with status 7: boom"


def test_a_driver_that_is_not_executable_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "driver.sh"
    plain.write_text("#!/bin/sh\n")
    assert main(["--driver", str(plain)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not executable" in err
    assert main(["--driver", "no-such-client-1.0"]) == 2


def test_a_driver_that_exits_at_once_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _executable(tmp_path / "driver", "#!/bin/sh\necho 'cannot load the client' >&2\nexit 1\n")
    assert main(["--driver", str(broken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "status 1: cannot load the client" in err


@pytest.mark.parametrize("ready", ["", "echo '{\"event\":\"ready\"}'\n"], ids=["silent", "ready"])
def test_a_driver_that_hangs_is_one_line_and_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ready: str
) -> None:
    monkeypatch.setattr(driver, "GRACE_S", 0.5)
    monkeypatch.setattr(cli, "PROBE", dataclasses.replace(cli.PROBE, timeout_s=0.5))
    script = _executable(tmp_path / "driver", HANGS_WITH_A_CHILD.format(ready=ready))
    assert main(["--driver", str(script)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "hangs" in err and "killed with its process group" in err
    assert _gone(int((tmp_path / "driver.child").read_text()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgingServer]:
    with JudgingServer(tmp_path_factory.mktemp("judging")) as started:
        yield started


def test_scenarios_side_by_side_keep_their_own_frames_and_scripts(server: JudgingServer) -> None:
    runs = Runs(server, BROKEN_CLIENT, jobs=2)
    runs.start([sc.SEND_ERROR_ONCE, sc.PRODUCE_ONEWAY])
    refused, oneway = runs.run(sc.SEND_ERROR_ONCE), runs.run(sc.PRODUCE_ONEWAY)
    runs.finish()
    assert refused.broker_addr != oneway.broker_addr
    for result, other in ((refused, oneway), (oneway, refused)):
        assert requests(result.frames, *sc.SENDS)
        assert not [f for f in result.frames if other.topic in str(f.command.ext_fields)]
    assert [f.command.code for f in refused.frames if f.scripted] == [ResponseCode.SYSTEM_ERROR]
    assert not [f for f in oneway.frames if f.scripted]


def _verdicts(server: JudgingServer, tmp_path: Path, breaks: str, selection: str) -> dict[str, Verdict]:
    runs = Runs(server, BROKEN_CLIENT, {"RMQ_BREAK": breaks})
    _, suite = run_suite(server, runs, "broken-client", selection=selection, report=tmp_path / "report")
    return suite.verdicts()


def _selection(case_ids: list[str]) -> str:
    names = {f"test_{cid.split('::', 1)[1].split('[', 1)[0]}" for cid in case_ids}
    return " or ".join(sorted(names))


@pytest.mark.slow
def test_the_test_client_without_breaks_passes_every_case(server: JudgingServer, tmp_path: Path) -> None:
    verdicts = _verdicts(server, tmp_path, "", _selection(list(BREAKS)))
    assert set(verdicts) == set(BREAKS)
    assert {cid: v for cid, v in verdicts.items() if v is not Verdict.PASS} == {}
    assert (tmp_path / "report" / "index.html").is_file() and (tmp_path / "report" / "junit.xml").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("flag", sorted(set(BREAKS.values())))
def test_each_break_fails_its_cases(server: JudgingServer, tmp_path: Path, flag: str) -> None:
    cases = [cid for cid, f in BREAKS.items() if f == flag]
    verdicts = _verdicts(server, tmp_path, flag, _selection(cases))
    judged = {cid: verdicts.get(cid) for cid in cases}
    assert all(v in (Verdict.FAIL, Verdict.NON_STRICT) for v in judged.values()), judged


@pytest.mark.slow
def test_a_resend_under_a_new_uniq_key_is_still_a_resend(server: JudgingServer, tmp_path: Path) -> None:
    """The C++ clients set a new UNIQ_KEY per attempt: their resend on the connection told to go away is
    found as such (a run of one message), not passed over for its key and judged by its outcome alone."""
    runs = Runs(server, BROKEN_CLIENT, {"RMQ_BREAK": "go-away-same-connection,uniq-per-attempt"})
    _, suite = run_suite(server, runs, "broken-client", selection="test_go_away", report=tmp_path / "report")
    [result] = suite.results
    assert result.verdict is Verdict.NON_STRICT, result.message
    assert "resends on the connection told to go away" in result.message


@pytest.mark.slow
def test_a_lower_case_counter_in_the_uniq_key_fails_every_run(server: JudgingServer, tmp_path: Path) -> None:
    """A key whose time field holds no letter (the break writes it in decimal digits) shows lower case only
    in its counter; the case's run sends enough messages that the counter always reaches a letter."""
    runs = Runs(server, BROKEN_CLIENT, {"RMQ_BREAK": "lower-counter"})
    _, suite = run_suite(server, runs, "broken-client", selection="test_uniq_key", report=tmp_path / "report")
    [result] = suite.results
    assert result.verdict is Verdict.FAIL, result.message
