"""``rmq-conformance report-findings``: one Markdown report per distinct finding of a run, ready to file.

A finding is what a target's makers can act on: a verdict resting on the MUST or SHOULD row of the verdict
policy (FAIL, CRASH, NON-STRICT of a SHOULD clause), never a cited deviation, a declared choice, an INFO
or an UNSUPPORTED. Cases failing for one cause (seventeen name server cases refused at the same
registration) are one finding: cases group by their message and what the target did, with the run's
unique names and ports taken out (by message and clause where the directory keeps only its index). Each
report holds the title, the clause with its level and policy row, what Apache RocketMQ does with the Java
source the clause cites, what the target did, the case's frames in hex and the command that replays them
(``rmq-conformance reproduce``).

    rmq-conformance report-findings RESULTS_DIR --target-name NAME --out DIR
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rocketmq_spec.conformance.recorder import Record
from rocketmq_spec.conformance.reproduce import decoded
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Basis, Verdict
from rocketmq_spec.spec.clauses import get as get_clause
from rocketmq_spec.spec.cli import BadInput, Parser, require_file

FINDING_BASES = frozenset({Basis.MUST.value, Basis.SHOULD.value})
"""The policy rows a finding rests on."""
FRAME_LINES = 80
"""Hex log lines a report shows: a case's first exchanges hold the finding; the reproducer sends all."""
TITLE_LENGTH = 100
_UNIQUE = re.compile(r"_[0-9a-f]{12}")
_ADDRESS = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3}):\d+")


def _normal(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _ADDRESS.sub(r"\1:PORT", _UNIQUE.sub("_*", text))


@dataclass
class Finding:
    cases: list[dict[str, Any]]
    """Index entries of the cases, the first one shown."""
    results: list[CaseResult | None]
    """Each case's full record where the directory holds it."""

    @property
    def shown(self) -> CaseResult | None:
        """The case a report shows: one judged on its own clause (not through a step it needed) with
        frames, else any with frames, else any."""
        held = [r for r in self.results if r is not None]
        return next((r for r in held if r.frames and not r.case_clause), None) \
            or next((r for r in held if r.frames), None) or next(iter(held), None)


def _is_finding(entry: dict[str, Any]) -> bool:
    basis = entry.get("basis")
    if basis:
        return basis in FINDING_BASES
    # a report written before verdicts named their policy row
    verdict = entry["verdict"]
    return verdict in (Verdict.FAIL.value, Verdict.CRASH.value) or (
        verdict == Verdict.NON_STRICT.value and not entry.get("deviation"))


def collect(results_dir: Path) -> tuple[dict[str, Any], list[Finding]]:
    """The run's meta and its findings, in case order of their first case."""
    index = json.loads(require_file(results_dir / "index.json", "report index").read_text(encoding="utf-8"))
    groups: dict[tuple[str, str], Finding] = {}
    for entry in index["cases"]:
        if not _is_finding(entry):
            continue
        path = results_dir / entry.get("file", "")
        result = CaseResult.from_json(json.loads(path.read_text(encoding="utf-8"))) \
            if entry.get("file") and path.is_file() else None
        # one cause is one clause and one answer, whichever case met it (cases whose step was charged to
        # that clause among them); without the case's record its message has to tell causes apart
        seen = _normal(result.expected_and_seen()[1] if result is not None else entry.get("message", ""))
        finding = groups.setdefault((entry["clause"], seen), Finding([], []))
        finding.cases.append(entry)
        finding.results.append(result)
    meta = {key: value for key, value in index.items() if key != "cases"}
    return meta, list(groups.values())


def _printable(line: str) -> str:
    """``line`` with each character that does not print written ``<U+XXXX>``: a finding about escapes
    holds them raw, and a report is read as text (a JSON escape the target wrote stays ``\\uXXXX``)."""
    return "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in line)


def _headline(text: str) -> str:
    """The first sentence or clause of ``text``, short enough for an issue title."""
    head = re.split(r"(?<=[.;:])\s", text.strip(), maxsplit=1)[0].rstrip(".;:")
    return head if len(head) <= TITLE_LENGTH else head[:TITLE_LENGTH - 1].rstrip() + "…"


def _function(case_id: str) -> str:
    """The case's test function, as ``rmq-conformance -k`` selects it (every row of a table)."""
    return "test_" + case_id.split("::", 1)[-1].split("[", 1)[0]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def render(finding: Finding, target: str, results_dir: Path, meta: dict[str, Any]) -> tuple[str, str]:
    """(title, Markdown) of one finding."""
    first = finding.cases[0]
    shown = finding.shown
    clause_ids = sorted({entry["clause"] for entry in finding.cases})
    try:
        clause = get_clause(first["clause"])
        clause_text, source = clause.text, clause.source
    except KeyError:
        clause_text, source = shown.clause_text if shown else "", ""
    # a step charged to this clause: the case's own requirement was not judged, the clause's text is
    own = shown is not None and not shown.case_clause
    requirement = shown.requirement if shown and own else clause_text
    what = requirement if shown else f"{first.get('message', '')} ({first['clause']})"
    title = f"{target}: {_headline(what)}"
    announced = meta.get("announced_version")
    lines = [f"# {title}", "",
             f"- Target: {target}" + (f" (answers with version word {announced})" if announced else ""),
             f"- Clause: {', '.join(clause_ids)} ({first['level']}): {clause_text}",
             f"- Verdict: {first['verdict']}, on the verdict policy's {first.get('basis') or 'MUST'} row",
             f"- Cases ({len(finding.cases)}): " + ", ".join(f"`{e['case']}`" for e in finding.cases), "",
             "## What Apache RocketMQ does", "", requirement, ""]
    if source:
        lines += [f"Java source: `{source}` (Apache RocketMQ).", ""]
    if shown is not None and shown.java_note:
        lines += [f"Note: {shown.java_note}", ""]
    stopped = shown.message if shown else first.get("message", "")
    lines += [f"## What {target} did", "", f"The case stopped at: {stopped}", ""]
    if shown is not None:
        expected, seen = shown.expected_and_seen()
        lines += [f"- expected: `{_normal(expected)}`", f"- seen: `{_normal(seen)}`", ""]
        if shown.frames:
            records = [Record.from_json(f) for f in shown.frames]
            kept = records[:FRAME_LINES]
            lines += [f"## Exchange (`{shown.case_id}`, decoded; `>` sent, `<` received, `*` connection)", "",
                      "```", *decoded(kept), "```", "",
                      "## Frames (the same chunks in hex)", "", "```", *(r.line() for r in kept), "```", ""]
            if len(records) > len(kept):
                lines += [f"({len(records) - len(kept)} more chunks in the case's JSON.)", ""]
    else:
        lines += ["The results directory keeps no frames of these cases (its index only).", ""]
    case_id = shown.case_id if shown else first["case"]
    lines += ["## Reproduce", "", "```",
              f"rmq-conformance reproduce '{case_id}' --results {results_dir} --target {target}",
              "```", "",
              "(`--namesrv HOST:PORT --broker HOST:PORT` instead of `--target` for a build already running.) "
              "The replay sends the recorded bytes as they were; where a request carries what an earlier "
              "answer gave (a commit-log offset, a receipt handle) the case itself is run again instead, "
              "with fresh values:", "",
              "```", f"rmq-conformance --target {target} -k {_function(case_id)} -v", "```", ""]
    return title, "\n".join(_printable(line) for line in lines)


def write(results_dir: Path, target: str, out: Path) -> list[Path]:
    meta, findings = collect(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    written, listing = [], [f"# Findings of {target}", "",
                            f"From `{results_dir}`: {len(findings)} finding(s).", ""]
    for number, finding in enumerate(findings, 1):
        title, text = render(finding, target, results_dir, meta)
        shown = finding.shown
        path = out / f"{number:02d}-{_slug(shown.case_id if shown else finding.cases[0]['case'])}.md"
        path.write_text(text, encoding="utf-8")
        written.append(path)
        listing.append(f"{number}. [{title}]({path.name}) ({len(finding.cases)} case(s))")
    (out / "README.md").write_text("\n".join(listing) + "\n", encoding="utf-8")
    return written


def parser() -> argparse.ArgumentParser:
    made = Parser(prog="rmq-conformance report-findings", description=__doc__.splitlines()[0])
    made.add_argument("results", type=Path, metavar="RESULTS_DIR", help="a report directory (index.json)")
    made.add_argument("--target-name", required=True, metavar="NAME",
                      help="the target, as the reports name it")
    made.add_argument("--out", type=Path, required=True, metavar="DIR", help="where the reports are written")
    return made


def main(argv: Sequence[str], out: TextIO) -> int:
    args = parser().parse_args(argv)
    try:
        written = write(args.results, args.target_name, args.out)
    except (KeyError, ValueError) as exc:
        raise BadInput(f"cannot read the report in {args.results}: {exc}") from None
    print(f"wrote {len(written)} finding(s) to {args.out}", file=out)
    return 0
