"""The conformance framework's own parts: reports, profiles, results, the CLI's pytest command line."""

from __future__ import annotations

import argparse
import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rocketmq_spec.apache.servers import StartFailed
from rocketmq_spec.conformance import cli, options, plugin, profile
from rocketmq_spec.conformance.ha_peer import FeedListener
from rocketmq_spec.conformance.recorder import Direction, Exchange, Record
from rocketmq_spec.conformance.report import console, json_files, junit
from rocketmq_spec.conformance.report.matrix import by_area, conforms
from rocketmq_spec.conformance.result import CaseResult, render
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.verdict import SuiteError, Verdict
from rocketmq_spec.conformance.wire import Endpoint, NoResponse


def sample_results() -> list[CaseResult]:
    return [
        CaseResult(case_id=f"{area}::case_{verdict.name.lower()}", area=area, clause_id="RMQ-FRAME-OPAQUE",
                   clause_text="A response carries the opaque of its request.", level="MUST",
                   requirement="opaque echoed", verdict=verdict, message=f"{verdict.value} <message>",
                   expected=1, actual=2, duration=0.25,
                   frames=[{"t": 0.001, "conn": 1, "dir": ">", "len": 4, "hex": "0000000c"}])
        for area in ("framing", "headers") for verdict in Verdict
    ]


def test_matrix_counts_each_verdict_per_area() -> None:
    table = by_area(sample_results())
    assert list(table) == ["framing", "headers", "total"]
    assert all(table["framing"][v] == 1 for v in Verdict)
    assert table["total"][Verdict.FAIL] == 2


@pytest.mark.parametrize(("verdict", "strict", "ok"), [
    (Verdict.PASS, True, True), (Verdict.NON_STRICT, False, True), (Verdict.NON_STRICT, True, False),
    (Verdict.UNSUPPORTED, True, True), (Verdict.FAIL, False, False), (Verdict.CRASH, False, False),
])
def test_conformance_judgement(verdict: Verdict, strict: bool, ok: bool) -> None:
    result = sample_results()[0]
    result.verdict = verdict
    assert conforms([result], strict=strict) is ok


def test_console_summary_lists_failures() -> None:
    text = console.summary(sample_results())
    assert "framing" in text and "total" in text
    assert "FAIL       framing::case_fail" in text
    assert "expected 1, actual 2" in text


def test_json_report_round_trips(tmp_path: Path) -> None:
    """Every case is in the index; a case that did not pass also has its whole record in a file of its
    own, a passing one has none (its observations and frames are left out)."""
    results = sample_results()
    index_path = json_files.write(tmp_path, results, {"title": "t"})
    index = json.loads(index_path.read_text())
    assert index["totals"]["CRASH"] == 2
    assert [entry["case"] for entry in index["cases"]] == [r.case_id for r in results]
    failed = next(entry for entry in index["cases"] if entry["verdict"] == Verdict.FAIL.value)
    restored = CaseResult.from_json(json.loads((tmp_path / failed["file"]).read_text()))
    assert restored.verdict is Verdict.FAIL and restored.frames[0]["hex"] == "0000000c"
    passed = [entry for entry in index["cases"] if entry["verdict"] == Verdict.PASS.value]
    assert passed and not any("file" in entry for entry in passed)
    assert len(list((tmp_path / json_files.CASES_DIR).glob("*.json"))) == len(results) - len(passed)
    _, read = json_files.read(tmp_path)
    assert [(r.case_id, r.verdict, r.requirement) for r in read] == [
        (r.case_id, r.verdict, r.requirement) for r in results]


@pytest.mark.parametrize(("strict", "failures"), [(False, 2), (True, 3)])
def test_junit_maps_verdicts(tmp_path: Path, strict: bool, failures: int) -> None:
    root = ET.parse(junit.write(tmp_path / "j.xml", sample_results(), strict=strict)).getroot()
    suite = root.find("testsuite[@name='framing']")
    assert suite is not None
    assert suite.get("failures") == str(failures)
    assert suite.get("skipped") == "1"
    verdicts = {p.get("value") for p in suite.iter("property") if p.get("name") == "verdict"}
    assert verdicts == {v.value for v in Verdict}


def test_render_makes_values_json_safe() -> None:
    assert render({"b": b"\x01\x02", "s": {3, 1}, "o": Verdict.PASS}) == {"b": "0102", "s": [1, 3],
                                                                         "o": repr(Verdict.PASS)}


def test_exchange_logs_hex_and_events() -> None:
    ticks = iter([0.0, 0.5, 1.0])
    exchange = Exchange(clock=lambda: next(ticks))
    exchange.bytes(1, Direction.SENT, b"\x00\x01")
    exchange.event(1, "closed by peer")
    lines = exchange.text().splitlines()
    assert lines[0].endswith("c1 > 0001")
    assert lines[1].endswith("c1 * closed by peer")
    assert Record.from_json(exchange.records[0].to_json()) == exchange.records[0]


def test_profile_requires_citations(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[[deviation]]\ncase = "headers::*"\nverdict = "NON-STRICT"\nreason = "r"\n')
    with pytest.raises(profile.ProfileError, match="source"):
        profile.load(path)
    path.write_text('[[deviation]]\ncase = "headers::*"\nverdict = "PASS"\nreason = "r"\nsource = "s"\n')
    with pytest.raises(profile.ProfileError, match="cannot be judged"):
        profile.load(path)


def test_shipped_profile_matches_cases() -> None:
    shipped = profile.load(Path("rocketmq-4.9"))
    assert shipped.deviations
    assert shipped.deviation_for("headers::unknown_code[namesrv-unknown-code-json]") is not None
    assert shipped.deviation_for("framing::largest_length_accepted[broker]") is None


@pytest.mark.parametrize(("request_", "announced", "chosen", "how"), [
    (profile.Request(), 407, "rocketmq-4.9", "version 407 (V4_9_7), covered by profile rocketmq-4.9"),
    (profile.Request(), 479, "rocketmq-5", "covered by profile rocketmq-5"),
    (profile.Request(), 513, "rocketmq-5", "covered by profile rocketmq-5"),
    (profile.Request(), 493, "", "which no shipped profile covers"),
    (profile.Request(), None, "", "not asked"),
    (profile.Request(strict=True), 407, "", "--strict"),
    (profile.Request(named="none"), 407, "", "--profile none"),
    (profile.Request(named="rocketmq-5"), 407, "rocketmq-5", "--profile rocketmq-5"),
    (profile.Request(target_name="embedded"), 409, "", "embedded reference broker"),
])
def test_the_profile_follows_the_version_the_target_announces(request_: profile.Request,
                                                              announced: int | None, chosen: str,
                                                              how: str) -> None:
    choice = profile.choose(request_, announced)
    assert choice.profile.file == chosen and how in choice.how


def test_a_deviation_bound_to_some_releases_holds_for_those_only() -> None:
    recreated = "admin::delete_group"  # 5.5.0's lite-group lookup recreates the group; 5.3.3 does not
    assert profile.choose(profile.Request(), 513).profile.deviation_for(recreated) is not None
    assert profile.choose(profile.Request(), 479).profile.deviation_for(recreated) is None


def test_a_deviation_naming_a_release_its_profile_does_not_cover_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('versions = ["4.9.7"]\n[[deviation]]\ncase = "a::b"\nverdict = "NON-STRICT"\n'
                    'reason = "r"\nsource = "s"\nversions = ["5.5.0"]\n')
    with pytest.raises(profile.ProfileError, match="does not cover"):
        profile.load(path)


def test_endpoint_parsing() -> None:
    assert Endpoint.parse("127.0.0.1:9876") == Endpoint("127.0.0.1", 9876)
    assert Endpoint.parse("[::1]:10911") == Endpoint("::1", 10911)
    with pytest.raises(ValueError, match="HOST:PORT"):
        Endpoint.parse("localhost")


def test_cli_builds_pytest_arguments() -> None:
    args = argparse.Namespace(report=Path("r"), profile=None, strict=True, selection="framing", workers=None,
                              verbose=False)
    argv = cli.pytest_args(Target(Endpoint("h", 1), Endpoint("h", 2)), args)
    assert "--rmq-namesrv=h:1" in argv and "--rmq-broker=h:2" in argv and "--rmq-strict" in argv
    assert argv[argv.index("-k") + 1] == "framing"
    assert argv[argv.index("-m") + 1] == "not slow"
    slow_argv = cli.pytest_args(Target(Endpoint("h", 1), Endpoint("h", 2)), args, slow=True)
    assert slow_argv[slow_argv.index("-m") + 1] == "slow or not slow"  # overrides the addopts' "not slow"
    ha_argv = cli.pytest_args(Target(broker=Endpoint("h", 2), sync_master=Endpoint("h", 5),
                                     commitlog_file_size=4096), args)
    assert "--rmq-sync-master=h:5" in ha_argv and "--rmq-commitlog-file-size=4096" in ha_argv
    assert argv[argv.index("-n") + 1] == cli.DEFAULT_WORKERS
    store_argv = cli.pytest_args(Target(store=Path("s")), args)
    assert "-n" not in store_argv and "--rmq-store=s" in store_argv
    assert not any(a.startswith("--rmq-index-sizes") for a in store_argv)
    sized = argparse.Namespace(**vars(args), index_sizes="1000,3000")
    assert "--rmq-index-sizes=1000,3000" in cli.pytest_args(Target(store=Path("s")), sized)
    controller_argv = cli.pytest_args(Target(controller=Endpoint("h", 7), controller_broker=Endpoint("h", 8)),
                                      args)
    assert "--rmq-controller=h:7" in controller_argv and "--rmq-namesrv" not in " ".join(controller_argv)
    assert "--rmq-controller-broker=h:8" in controller_argv
    assert controller_argv[controller_argv.index("-n") + 1] == cli.DEFAULT_WORKERS


def test_index_sizes_option() -> None:
    assert options.parse_index_sizes("1000,3000") == (1000, 3000)
    for bad in ("1000", "1000,3000,1", "a,b", "0,4000", "1000,-1"):
        with pytest.raises(pytest.UsageError, match="index sizes"):
            options.parse_index_sizes(bad)


def _called(error: BaseException, when: str) -> pytest.CallInfo[None]:
    def fail() -> None:
        raise error
    return pytest.CallInfo.from_call(fail, when)  # type: ignore[arg-type]


@pytest.mark.parametrize(("error", "when", "verdict"), [
    (SuiteError("cannot listen at the HA feed 127.0.0.1:1: [Errno 98] Address already in use"), "setup",
     Verdict.ERROR),
    (SuiteError("another case held the HA feed"), "call", Verdict.ERROR),
    (TypeError("a fixture of the suite broke"), "setup", Verdict.ERROR),
    (TypeError("the target's answer lacked a field"), "call", Verdict.FAIL),
    (NoResponse("no response to code 17"), "setup", Verdict.FAIL),
    (StartFailed("broker exited with status 70"), "call", Verdict.ERROR),
])
def test_faults_of_the_suite_are_errors_of_the_run(error: BaseException, when: str, verdict: Verdict) -> None:
    unprofiled = profile.Choice(profile.NO_PROFILE, "none")
    state = plugin.RunState(Target(), unprofiled, strict=False, report_dir=None)
    assert plugin._verdict(state, _called(error, when), plugin.CaseRun())[0] is verdict


def test_cases_playing_a_slaves_master_take_turns_at_its_address() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        feed = Endpoint("127.0.0.1", probe.getsockname()[1])
    first = FeedListener(feed, turn_wait=5)
    try:
        with pytest.raises(SuiteError, match="held the HA feed"):
            FeedListener(feed, turn_wait=0.2)
    finally:
        first.close()
    FeedListener(feed, turn_wait=5).close()  # free again once the first gave it up


def test_a_row_bound_to_a_clause_covers_only_a_verdict_charged_to_it(tmp_path: Path) -> None:
    """rocketmq-rust's lite-pull choice covers the refused runtime update, never the lite pull."""
    rust = profile.load(Path("rocketmq-rust-1.0.0"))
    assert rust.deviation_for("pull::lite_pull_answers_as_pull", "RMQ-ADMIN-UPDATE-CONFIG") is not None
    assert rust.deviation_for("pull::lite_pull_answers_as_pull", "RMQ-BRK-LITE-PULL") is None
    path = tmp_path / "p.toml"
    path.write_text('[[choice]]\ncase = "a::b"\nclause = "RMQ-NO-SUCH"\nreason = "r"\nsource = "s"\n')
    with pytest.raises(profile.ProfileError, match="RMQ-NO-SUCH"):
        profile.load(path)
