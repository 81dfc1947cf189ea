"""Reproducers and findings: a recorded case replayed against the reference broker, and one Markdown
report per distinct finding of a results directory."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.store.record import HostPort, make_record
from rocketmq_spec.conformance import findings, reproduce
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.report import json_files
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Basis, Verdict
from rocketmq_spec.conformance.wire import Connection, Endpoint
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests.messaging_support import with_broker

UNKNOWN_CODE = 29999
CASE = "headers::unknown_code[broker-unknown-code-json]"


def result(case: str, verdict: Verdict, basis: Basis | None, *, clause: str = "RMQ-CODE-NOT-SUPPORTED",
           message: str = "response code", actual: str = "1 unsupported", deviation: str = "",
           frames: list[dict[str, object]] | None = None) -> CaseResult:
    return CaseResult(case_id=case, area=case.split("::")[0], clause_id=clause, clause_text="text",
                      level="MUST",
                      requirement="An unknown request code is answered 3 REQUEST_CODE_NOT_SUPPORTED.",
                      verdict=verdict, message=message, expected=3, actual=actual, deviation=deviation,
                      basis=basis.value if basis else "", frames=frames or [])


def write_results(directory: Path, results: list[CaseResult], meta: dict[str, object]) -> None:
    json_files.write(directory, results, meta)


def record_exchange(broker: Endpoint) -> Exchange:
    """What a case sends and reads: an unknown code, then GET_MAX_OFFSET, on one connection."""
    exchange = Exchange()
    connection = Connection(broker, exchange)
    try:
        connection.call(UNKNOWN_CODE)
        connection.call(RequestCode.GET_MAX_OFFSET, {"topic": DEFAULT_TOPIC, "queueId": "0"})
    finally:
        connection.close()
    return exchange


def replay(tmp_path: Path, edit: Callable[[list[dict[str, object]]], None] = lambda frames: None, *,
           with_namesrv: bool = False) -> tuple[int, str]:
    """Record the exchange against a fresh reference broker, ``edit`` its frames (as if the recorded run had
    seen other answers), write the FAIL that holds them and replay it: ``reproduce``'s status and text."""
    results = tmp_path / "results"

    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> tuple[int, str]:
        def blocking() -> tuple[int, str]:
            broker = Endpoint.parse(mq.broker_addr)
            frames = [r.to_json() for r in record_exchange(broker).records]
            edit(frames)
            meta: dict[str, object] = {"broker": str(broker)}
            args = [CASE, "--results", str(results), "--broker", str(broker)]
            if with_namesrv:
                meta.update(target="embedded", namesrv=mq.namesrv_addr)
                args += ["--namesrv", mq.namesrv_addr]
            write_results(results, [result(CASE, Verdict.FAIL, Basis.MUST, frames=frames)], meta)
            out = io.StringIO()
            return reproduce.main(args, out), out.getvalue()
        return await asyncio.to_thread(blocking)

    return asyncio.run(with_broker(tmp_path / "store", scenario))


def test_a_recorded_case_is_replayed_against_the_reference_broker(tmp_path: Path) -> None:
    status, text = replay(tmp_path, with_namesrv=True)
    assert status == 0
    assert "connect to the broker" in text
    assert f'request (JSON) {{"code":{UNKNOWN_CODE},' in text  # the header as sent
    assert "2 of 2 recorded answers given again" in text and "differs" not in text
    assert "expected:    3" in text and "seen:        1 unsupported" in text


def test_a_replay_shows_answers_that_differ_from_the_record(tmp_path: Path) -> None:
    def other_code(frames: list[dict[str, object]]) -> None:
        answer = next(f for f in frames if f["dir"] == "<")
        answer["hex"] = str(answer["hex"]).replace(b'"code":3'.hex(), b'"code":4'.hex())

    _, text = replay(tmp_path, other_code)
    assert "1 of 2 recorded answers given again" in text and "<-- differs" in text


def test_a_replay_waits_for_a_request_the_record_has_no_answer_to(tmp_path: Path) -> None:
    def no_last_answer(frames: list[dict[str, object]]) -> None:
        # the run that was recorded got no answer to GET_MAX_OFFSET
        del frames[max(i for i, f in enumerate(frames) if f["dir"] == "<")]

    _, text = replay(tmp_path, no_last_answer)
    assert "1 of 1 recorded answers given again" in text
    assert "c1 < recorded: no answer to opaque 2" in text and "c1 <      now: answer (JSON) code 0" in text


def test_one_report_per_distinct_finding(tmp_path: Path) -> None:
    frames = [{"t": 0.0, "conn": 1, "dir": "*", "len": 0, "hex": "connected to 127.0.0.1:10911"},
              {"t": 0.001, "conn": 1, "dir": ">", "len": 4, "hex": "0000000c"}]
    write_results(tmp_path / "run", [
        result("headers::unknown_code[a_0123456789ab]", Verdict.FAIL, Basis.MUST, frames=frames,
               actual="1 unsupported code topic_0123456789ab"),
        result("headers::unknown_code[b]", Verdict.FAIL, Basis.MUST,
               actual="1 unsupported code topic_ba9876543210"),
        result("pull::other", Verdict.FAIL, Basis.MUST, clause="RMQ-BRK-PULL-REMARK", message="pull code",
               actual="20"),
        result("headers::profiled", Verdict.NON_STRICT, Basis.DEVIATION, deviation="cited (Source.rs)"),
        result("headers::chosen", Verdict.NON_STRICT, Basis.CHOICE, deviation="declared choice: r (s)"),
        result("headers::remark", Verdict.INFO, Basis.INFO),
        result("headers::absent", Verdict.UNSUPPORTED, Basis.ABSENT),
    ], {"target": "some-broker", "announced_version": 474})
    out = io.StringIO()
    args = [str(tmp_path / "run"), "--target-name", "some-broker", "--out", str(tmp_path / "f")]
    assert findings.main(args, out) == 0
    assert "wrote 2 finding(s)" in out.getvalue()
    reports = sorted((tmp_path / "f").glob("0*.md"))
    first = reports[0].read_text()
    assert first.startswith("# some-broker: An unknown request code is answered 3 REQUEST_CODE_NOT_SUPPORTED")
    assert "RMQ-CODE-NOT-SUPPORTED (MUST)" in first and "verdict policy's MUST row" in first
    assert "`headers::unknown_code[a_0123456789ab]`, `headers::unknown_code[b]`" in first
    assert "NettyRemotingAbstract.java" in first  # the clause's Java source
    assert "c1 > 0000000c" in first  # the frames in hex
    assert "rmq-conformance reproduce 'headers::unknown_code[a_0123456789ab]'" in first
    assert "--target some-broker" in first
    assert "rmq-conformance --target some-broker -k test_unknown_code -v" in first  # the case run again
    assert "profiled" not in first and "chosen" not in (tmp_path / "f" / "README.md").read_text()


def test_a_replayed_body_is_shown_as_records_or_text() -> None:
    host = HostPort("127.0.0.1", 10911)
    records = b"".join(make_record(topic="T", body=b"b", properties={"DELAY": str(i)}, queue_id=0,
                                   queue_offset=i, physical_offset=0, born_timestamp=1, born_host=host,
                                   store_timestamp=1, store_host=host).encode() for i in range(2))
    pulled = reproduce._body(RemotingCommand(0, body=records))
    assert pulled == 'T queue 0 offset 0 {"DELAY": "0"} | T queue 0 offset 1 {"DELAY": "1"}'
    assert reproduce._body(RemotingCommand(0, body=b'{"table":{}}')) == '{"table":{}}'
    assert reproduce._body(RemotingCommand(0, body=b"x\x00\xff")) == "3 bytes, not text: 7800ff"
    assert "language COBOL" in reproduce._summary(RemotingCommand(106, language="COBOL"))
    long = reproduce._body(RemotingCommand(0, body=b"k=v\n" * 200))
    assert long.startswith("k=v\n") and long.endswith("... (800 characters)")


def test_a_step_charged_to_a_clause_joins_that_clause_s_finding(tmp_path: Path) -> None:
    """Cases whose registration step failed are one finding with the case that judges registration."""
    sent = encode(RemotingCommand(103, opaque=1))
    frames = [{"t": 0.0, "conn": 1, "dir": "*", "len": 0, "hex": "connected to 127.0.0.1:9876"},
              {"t": 0.001, "conn": 1, "dir": ">", "len": len(sent), "hex": sent.hex()}]
    charged = replace(result("namesrv::route_shape", Verdict.FAIL, Basis.MUST, clause="RMQ-NS-REGISTER",
                             actual="29 Request body is invalid", frames=frames),
                      case_clause="RMQ-NS-ROUTE-SHAPE", requirement="The route has its shape.")
    own = result("namesrv::registration_routes_topic", Verdict.FAIL, Basis.MUST, clause="RMQ-NS-REGISTER",
                 actual="29 Request body is invalid", frames=frames)
    write_results(tmp_path / "run", [charged, own], {"target": "t"})
    findings.write(tmp_path / "run", "t", tmp_path / "f")
    reports = sorted((tmp_path / "f").glob("0*.md"))
    assert len(reports) == 1
    text = reports[0].read_text()
    assert "`namesrv::route_shape`" in text and "(`namesrv::registration_routes_topic`, decoded" in text
    assert "The route has its shape" not in text  # the charged case's own requirement was not judged
    assert 'c1 > request (JSON) {"code":103,' in text  # the exchange decoded beside the hex
    assert findings._printable("a\x7f\\u007f") == "a<U+007F>\\u007f"  # raw apart from an escape
