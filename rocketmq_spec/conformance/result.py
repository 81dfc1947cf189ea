"""The record of one executed case, as the reports and the pytest-xdist controller see it.

Results cross the process boundary between xdist workers and the controller inside a report's
``user_properties``, so the record is plain JSON; values of observations are rendered to text there.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from rocketmq_spec.conformance.recorder import Record
from rocketmq_spec.conformance.verdict import Verdict

USER_PROPERTY = "rmq_conformance_result"


def render(value: Any) -> Any:
    """A JSON-safe form of an observed value: bytes as hex, unknown objects as their repr."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, list | tuple):
        return [render(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((render(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): render(v) for k, v in value.items()}
    return repr(value)


@dataclass
class CaseResult:
    case_id: str
    area: str
    clause_id: str
    clause_text: str
    level: str
    requirement: str
    verdict: Verdict
    message: str = ""
    expected: Any = None
    actual: Any = None
    duration: float = 0.0
    java_note: str = ""
    deviation: str = ""
    """The target profile's citation when a known deviation changed the verdict."""
    basis: str = ""
    """The verdict policy's row the verdict rests on (a :class:`rocketmq_spec.conformance.verdict.Basis`
    value; empty for PASS)."""
    case_clause: str = ""
    """The case's own clause when the verdict was charged to another one (the clause of a step it needed)."""
    observations: list[dict[str, Any]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        data["expected"] = render(self.expected)
        data["actual"] = render(self.actual)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseResult:
        return cls(**{**data, "verdict": Verdict(data["verdict"])})

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    def expected_and_seen(self) -> tuple[Any, Any]:
        """What the case expected and what the target did. A verdict whose cause carried neither (a
        timeout, a closed connection, an error of the run) gets the last observation that did not hold,
        else the case's requirement against its message, so a report never shows a failure without them."""
        if self.expected is not None or self.actual is not None or self.verdict is Verdict.PASS:
            return self.expected, self.actual
        failed = [o for o in self.observations
                  if not o["ok"] and not o.get("tolerated") and not o.get("info")]
        if failed:
            return failed[-1]["expected"], failed[-1]["actual"]
        if self.verdict in (Verdict.INFO, Verdict.NON_STRICT) and self.observations:
            return None, None  # the observations say it
        return self.requirement, self.message

    def hex_log(self) -> str:
        return "\n".join(Record.from_json(f).line() for f in self.frames)
