"""``rmq-conformance reproduce CASE``: send a target exactly the bytes a case sent, and show what it answers.

A report keeps every chunk a case wrote and read, per connection, with the address each connection went to
(``rocketmq_spec.conformance.recorder``). Replaying those bytes needs no suite code of the case: whoever
files a finding upstream can show it with one command against any build of the target, and whoever fixes
it can see the answer change. Each recorded connection is opened to the same role (name server, broker, the
broker's HA port) of the target given, the chunks are sent in their order with their gaps (capped), and
every answer the record holds is printed beside the one the target gives now, and a request the record
holds no answer to is waited for at the end (a target that never answers shows it again); the case's own
expected and seen close the output.

    rmq-conformance reproduce CASE --results DIR (--target NAME | --namesrv H:P --broker H:P)

``CASE`` is a case id (``headers::unknown_code[broker-unknown-code-json]``) or the path of its JSON file;
``--results`` is a report directory (``docs/results/<target>`` holds the non-PASS cases of each committed
run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from rocketmq_spec.codec.command import DEFAULT_LANGUAGE, RemotingCommand, decode_payload, json_header_text
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.codec.store.record import decode_records
from rocketmq_spec.conformance.recorder import Direction, Exchange, Record
from rocketmq_spec.conformance.report.json_files import CASES_DIR, file_stem
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict
from rocketmq_spec.conformance.wire import Connection, ConnectionLost, Endpoint
from rocketmq_spec.spec.cli import BadInput, Parser
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE
from rocketmq_spec.spec.ha import HA_PORT_OFFSET

ANSWER_WAIT = 10.0
"""Seconds the replay waits for each answer the record holds."""
CLOSE_WAIT = 3.0
"""Seconds the replay waits for a close the record holds."""
MAX_GAP = 5.0
"""The longest pause kept between two recorded sends: a case that waited for a timer of the target waits
again, a case that waited long for nothing does not make the replay as long."""
BODY_SHOWN = 600
"""Characters of a body the replay prints (each request's, each live answer's): enough to show a finding
that lies in a body (a 4.x registration, a key missing from a table, a property missing from a delivered
message), not pages of it."""
CONNECTED = "connected to "


@dataclass
class Recorded:
    """A case as a report keeps it: its result and the addresses its run's target had."""

    result: CaseResult
    roles: dict[str, str]
    """Recorded address -> role (``namesrv``, ``broker``, ``ha``)."""


def load(case: str, results: Path) -> Recorded:
    """The case's JSON from ``results`` (by id) or the file named, with the roles of its run's addresses."""
    path = Path(case)
    if not path.is_file():
        path = results / CASES_DIR / f"{file_stem(case)}.json"
    if not path.is_file():
        raise BadInput(f"no recorded case {case!r} in {results / CASES_DIR} (reports keep the frames of "
                       f"every case; committed results keep those of non-PASS cases)")
    result = CaseResult.from_json(json.loads(path.read_text(encoding="utf-8")))
    index = path.parent.parent / "index.json"
    meta = json.loads(index.read_text(encoding="utf-8")) if index.is_file() else {}
    roles: dict[str, str] = {}
    for role in ("namesrv", "broker"):
        if meta.get(role):
            roles[meta[role]] = role
    if meta.get("broker"):
        broker = Endpoint.parse(meta["broker"])
        roles[str(Endpoint(broker.host, broker.port + HA_PORT_OFFSET))] = "ha"
    return Recorded(result, roles)


def _summary(command: RemotingCommand) -> str:
    kind = f"{'answer' if command.is_response else 'request'} ({command.serialize_type.name})"
    if not command.is_response and command.language != DEFAULT_LANGUAGE:  # a request's may be the finding
        kind += f" language {command.language}"
    remark = f" remark {command.remark!r}" if command.remark else ""
    fields = f" {json.dumps(command.ext_fields, ensure_ascii=False)}" if command.ext_fields else ""
    body = f" body {len(command.body)} B" if command.body else ""
    return f"{kind} code {command.code} opaque {command.opaque}{remark}{fields}{body}"


def _sent(frame: FrameReceived) -> str:
    """A request as sent: a JSON header verbatim (a key left out or an unknown value is often the
    finding), a ROCKETMQ one decoded."""
    header = json_header_text(frame.frame)
    if header is None:
        return _summary(frame.command)
    return f"request (JSON) {header}" + (f" body {len(frame.command.body)} B" if frame.command.body else "")


def _body(command: RemotingCommand) -> str:
    """A body as the finding needs it read: a message body (PULL, POP, QUERY) as its records'
    topic, queue offset and properties, any other body as text; cut to :data:`BODY_SHOWN` characters."""
    try:
        records = decode_records(command.body)
    except RocketMQSpecError:  # not a message body: JSON, properties text, or bytes (a zlib body)
        text = _text_or_hex(command.body or b"")
    else:
        text = " | ".join(f"{r.topic} queue {r.queue_id} offset {r.queue_offset} {json.dumps(r.properties)}"
                          for r in records)
    return text if len(text) <= BODY_SHOWN else f"{text[:BODY_SHOWN]}... ({len(text)} characters)"


def decoded(records: Sequence[Record]) -> list[str]:
    """A case's recorded chunks read as frames, in order: each connection's events, each request as sent
    (``_sent``), each answer or broker-sent request, and every body, as a report shows them beside the
    hex."""
    decoders: dict[tuple[int, Direction], FrameDecoder] = {}
    lines: list[str] = []
    for record in sorted(records, key=lambda r: r.at):
        number, mark = record.connection, record.direction.value
        if record.direction is Direction.EVENT:
            lines.append(f"c{number} * {record.hex}")
            continue
        data = bytes.fromhex(record.hex)
        decoder = decoders.setdefault((number, record.direction), FrameDecoder())
        if record.length * 2 != len(record.hex):  # cut short in the record: its header only
            decoders[number, record.direction] = FrameDecoder()
            lines.append(f"c{number} {mark} {_summary(_cut_answer(data))} (body cut in the record)")
            continue
        for event in decoder.receive_data(data):
            if isinstance(event, FrameReceived):
                sent = record.direction is Direction.SENT
                lines.append(f"c{number} {mark} {_sent(event) if sent else _summary(event.command)}")
                if event.command.body:
                    lines.append(f"c{number} {mark}     body: {_body(event.command)}")
            elif isinstance(event, FrameRejected):  # a framing case's bytes (a PROXY preamble, a bad length)
                lines.append(f"c{number} {mark} not a frame: {event.error}")
    return lines


def _text_or_hex(data: bytes) -> str:
    """``data`` as text when it is UTF-8 without control characters (line breaks and tabs aside), else
    as hex: a report and a terminal show it as it is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\n\r\t" for c in text):
        return text
    return f"{len(data)} bytes, not text: {data.hex()}"


def _key(answer: RemotingCommand) -> tuple[object, ...]:
    """What makes two answers the same for the replay: code, remark and serialization (opaques match by
    construction; bodies and extFields carry the run's own offsets, times and addresses)."""
    return answer.code, answer.remark, answer.serialize_type


def _cut_answer(data: bytes) -> RemotingCommand:
    """The header of a frame the record keeps only the start of (its body cut short)."""
    try:
        return decode_payload(data[LENGTH_FIELD_SIZE:])
    except RocketMQSpecError as exc:
        raise BadInput(f"a recorded answer cut short cannot be read: {exc}") from None


def _frames(decoder: FrameDecoder, data: bytes) -> list[RemotingCommand]:
    return [e.command for e in decoder.receive_data(data) if isinstance(e, FrameReceived)]


@dataclass
class _Line:
    """One recorded connection during the replay."""

    live: Connection | None
    sent: FrameDecoder = field(default_factory=FrameDecoder)
    recorded: FrameDecoder = field(default_factory=FrameDecoder)
    unanswered: list[int] = field(default_factory=list)
    """Opaques of the requests sent whose answer the record does not hold (yet)."""


@dataclass
class Replay:
    """Replays one case's records against ``endpoints`` (role -> where that role answers now)."""

    recorded: Recorded
    endpoints: dict[str, Endpoint]
    out: TextIO
    answers: int = 0
    same: int = 0
    lines: dict[int, _Line] = field(default_factory=dict)

    def run(self) -> None:
        records = sorted((Record.from_json(f) for f in self.recorded.result.frames), key=lambda r: r.at)
        exchange = Exchange()
        started, last = time.monotonic(), records[0].at if records else 0.0
        try:
            for record in records:
                if record.direction is Direction.SENT:
                    time.sleep(min(max(record.at - last, 0.0), MAX_GAP))
                    last = record.at
                self._step(record, exchange)
            for number, line in self.lines.items():
                self._wait_unanswered(number, line)
        finally:
            for line in self.lines.values():
                if line.live is not None:
                    line.live.close()
        self._print(f"replayed in {time.monotonic() - started:.1f} s: {self.same} of {self.answers} recorded "
                    "answers given again")

    def _print(self, text: str) -> None:
        print(text, file=self.out)

    def _step(self, record: Record, exchange: Exchange) -> None:
        number = record.connection
        if record.direction is Direction.EVENT:
            self._event(number, record.hex, exchange)
            return
        line = self.lines.setdefault(number, _Line(None))
        data = bytes.fromhex(record.hex)
        whole = record.length * 2 == len(record.hex)
        if record.direction is Direction.SENT:
            if not whole:
                raise BadInput(f"c{number}: the record keeps {len(data)} of the {record.length} bytes of a "
                               "chunk the case sent; it cannot be replayed exactly")
            for event in line.sent.receive_data(data):
                if isinstance(event, FrameReceived):
                    if not (event.command.is_response or event.command.is_oneway):
                        line.unanswered.append(event.command.opaque)
                    self._print(f"c{number} > {_sent(event)}")
                    if event.command.body:
                        self._print(f"c{number} >     body: {_body(event.command)}")
            if line.live is not None:
                line.live.send_bytes(data)
            return
        if whole:
            answers = _frames(line.recorded, data)
        else:  # an answer cut short in the record (a large body): its header is kept, the next frames anew
            answers, line.recorded = [_cut_answer(data)], FrameDecoder()
        for then in answers:
            with contextlib.suppress(ValueError):
                line.unanswered.remove(then.opaque)
        if line.live is None:  # a connection to the suite's own peer: shown as recorded
            for then in answers:
                self._print(f"c{number} < recorded: {_summary(then)}")
            return
        for then in answers:
            now = self._answer(line)
            self.answers += 1
            same = now is not None and _key(now) == _key(then)
            self.same += same
            self._print(f"c{number} < recorded: {_summary(then)}")
            self._print(f"c{number} <      now: {_summary(now) if now else 'nothing'}"
                        f"{'' if same else '   <-- differs'}")
            if now is not None and now.body:
                self._print(f"c{number} <     body: {_body(now)}")

    def _wait_unanswered(self, number: int, line: _Line) -> None:
        """A request the recorded run got no answer to (the finding may be that silence): wait for the
        target's answer now, so a replay shows the silence again, or that it is gone."""
        if line.live is None:
            return
        for opaque in line.unanswered:
            now = self._answer(line)
            shown = _summary(now) if now else f"nothing (no answer within {ANSWER_WAIT} s, or closed)"
            self._print(f"c{number} < recorded: no answer to opaque {opaque}")
            self._print(f"c{number} <      now: {shown}")

    def _answer(self, line: _Line) -> RemotingCommand | None:
        assert line.live is not None, "only connections replayed wait for answers"
        with contextlib.suppress(ConnectionLost):
            return line.live.next_command(ANSWER_WAIT)
        return None

    def _event(self, number: int, text: str, exchange: Exchange) -> None:
        if text.startswith(CONNECTED):
            address = text.removeprefix(CONNECTED)
            role = self.recorded.roles.get(address)
            endpoint = self.endpoints.get(role) if role else None
            if endpoint is None:
                self._print(f"c{number} * {text}: not a role of the target given (the suite's own peer); "
                            "its bytes are shown, not sent")
                self.lines[number] = _Line(None)
                return
            self._print(f"c{number} * connect to the {role} at {endpoint} (recorded: {address})")
            self.lines[number] = _Line(Connection(endpoint, exchange))
        elif text == "closed by peer":
            line = self.lines.get(number)
            closed = line is not None and line.live is not None and line.live.wait_closed(CLOSE_WAIT)
            self._print(f"c{number} * recorded: closed by the target; now: "
                        f"{'closed' if closed else f'still open after {CLOSE_WAIT} s'}")
        else:
            self._print(f"c{number} * recorded: {text}")


def expectation(result: CaseResult) -> list[str]:
    """What the case expected beside what the target did in the recorded run."""
    expected, seen = result.expected_and_seen()
    lines = [f"case {result.case_id} ({result.clause_id}, {result.level}): recorded verdict "
             f"{result.verdict.value}{f' ({result.basis})' if result.basis else ''}",
             f"  requirement: {result.requirement}"]
    if result.verdict is not Verdict.PASS:
        lines += [f"  message:     {result.message}", f"  expected:    {_text(expected)}",
                  f"  seen:        {_text(seen)}"]
    return lines


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parser() -> argparse.ArgumentParser:
    made = Parser(prog="rmq-conformance reproduce", description=__doc__.splitlines()[0],
                  formatter_class=argparse.RawDescriptionHelpFormatter)
    made.add_argument("case", metavar="CASE", help="a case id or the path of its JSON file")
    made.add_argument("--results", type=Path, metavar="DIR",
                      help="the report directory holding it (default: docs/results/<--target>)")
    made.add_argument("--target", metavar="NAME", help="a target the command starts and stops")
    made.add_argument("--namesrv", type=Endpoint.parse, metavar="HOST:PORT", help="a running name server")
    made.add_argument("--broker", type=Endpoint.parse, metavar="HOST:PORT", help="a running broker")
    return made


@contextlib.contextmanager
def _endpoints(args: argparse.Namespace) -> Iterator[dict[str, Endpoint]]:
    if args.target and (args.namesrv or args.broker):
        raise BadInput("give --target or --namesrv/--broker, not both")
    if not args.target:
        if not (args.namesrv or args.broker):
            raise BadInput("give --target NAME or --namesrv/--broker HOST:PORT")
        yield _roles(args.namesrv, args.broker)
        return
    from rocketmq_spec.conformance.embedded import PROVISIONED_SETTINGS
    from rocketmq_spec.targets import started

    with tempfile.TemporaryDirectory(prefix="rmq-reproduce-") as work, \
            started(args.target, Path(work), broker_config=PROVISIONED_SETTINGS) as running:
        yield _roles(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr))


def _roles(namesrv: Endpoint | None, broker: Endpoint | None) -> dict[str, Endpoint]:
    roles = {"namesrv": namesrv, "broker": broker,
             "ha": Endpoint(broker.host, broker.port + HA_PORT_OFFSET) if broker else None}
    return {role: endpoint for role, endpoint in roles.items() if endpoint is not None}


def main(argv: Sequence[str], out: TextIO) -> int:
    args = parser().parse_args(argv)
    results = args.results
    if results is None:
        if not args.target:
            raise BadInput("--results DIR is needed when the target is given by address")
        from rocketmq_spec.conformance.results import RESULTS_DIR

        results = RESULTS_DIR / args.target
    recorded = load(args.case, results)
    with _endpoints(args) as endpoints:
        Replay(recorded, endpoints, out).run()
    print("\n".join(expectation(recorded.result)), file=out)
    return 0
