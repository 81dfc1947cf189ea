"""The verdict policy: what a case's observation becomes once its clause's level and the target's profile
have been read (``docs/conformance.md#verdict-policy``).

Every verdict other than PASS rests on one row of the policy, named by :class:`Basis` in every report:

- MUST: a MUST clause not met is a FAIL;
- SHOULD: a SHOULD or MAY clause not met, or a leniency the spec allows, is NON-STRICT;
- deviation: a cited row of the target's profile (the implementation reads the protocol otherwise, shown
  by its source) gives the row's verdict;
- choice: a row the target's makers declared deliberate, with their reason, gives NON-STRICT unless the
  row says otherwise, and is shown apart from defects;
- INFO: an INFO clause, or an observation no Java client acts on (a remark's text), is reported only;
- absent: the target lacks the feature (it answered so when asked) and the case is UNSUPPORTED;
- suite: the suite could not judge (ERROR).

A case that needs a step of another clause first (a runtime configuration update before the behaviour it
judges) charges a failure of that step to the step's clause, never to its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.conformance import profile as profiles
from rocketmq_spec.conformance.case import CaseSpec
from rocketmq_spec.conformance.verdict import Basis, Verdict
from rocketmq_spec.spec.clauses import Clause, Level
from rocketmq_spec.spec.clauses import get as get_clause

LEVEL_VERDICT = {Level.SHOULD: Verdict.NON_STRICT, Level.MAY: Verdict.NON_STRICT, Level.INFO: Verdict.INFO}
"""What a FAIL becomes at a level other than MUST (the verdict policy)."""


@dataclass(frozen=True)
class Decision:
    """A case's verdict after the verdict policy: the clause it is charged to, the level that clause has,
    and the policy row (:class:`Basis`) it rests on."""

    verdict: Verdict
    message: str
    clause: Clause
    level: Level
    basis: Basis | None
    deviation: str = ""
    case_clause: str = ""


def decide(spec: CaseSpec, profile: profiles.Profile, cid: str, verdict: Verdict, message: str,
           charged: str = "") -> Decision:
    """Apply the verdict policy to what a case raised: charge a step's failure to the step's clause, lower a
    FAIL by that clause's level, then let the target's profile (a cited deviation or a declared choice)
    say what a FAIL or NON-STRICT of this case becomes."""
    clause, level, case_clause = spec.clause, spec.level, ""
    if charged and charged != spec.clause.id:
        clause, case_clause = get_clause(charged), spec.clause.id
        level = clause.level
        message = f"{message} (a step the case needed, charged to {clause.id}; {case_clause} was not judged)"
    if verdict is Verdict.FAIL and level is not Level.MUST:
        verdict, message = LEVEL_VERDICT[level], f"{level.value} not met: {message}"
    known = profile.deviation_for(cid, clause.id) if verdict in (Verdict.FAIL, Verdict.NON_STRICT) else None
    if known is not None:
        return Decision(known.verdict, message, clause, level, known.kind, known.citation(), case_clause)
    return Decision(verdict, message, clause, level, Basis.of(verdict), "", case_clause)
