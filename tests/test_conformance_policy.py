"""The verdict policy: levels, informative remarks, steps charged to their own clause, declared choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.conformance import plugin, profile
from rocketmq_spec.conformance.case import CaseSpec, declare
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.policy import decide
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.verdict import Basis, Failure, Verdict

MUST_CASE = declare("RMQ-BRK-LITE-PULL", "a MUST case")
SHOULD_CASE = declare("RMQ-BRK-PULL-REMARK", "a SHOULD case")


def _verdict_of(check: Check, error: BaseException | None = None) -> tuple[Verdict, str]:
    def run() -> None:
        if error is not None:
            raise error
    unprofiled = profile.Choice(profile.NO_PROFILE, "none")
    state = plugin.RunState(Target(), unprofiled, strict=False, report_dir=None)
    verdict, message, *_ = plugin._verdict(state, pytest.CallInfo.from_call(run, "call"),
                                           plugin.CaseRun(check=check))
    return verdict, message


def test_a_remark_of_other_words_is_info_not_fail() -> None:
    check = Check()
    check.equal("code", 3, 3)
    check.remark("remark", " request type 29999 not supported", "Protocol request is unsupported")
    verdict, message = _verdict_of(check)
    assert verdict is Verdict.INFO and "remark" in message
    assert decide(MUST_CASE, profile.NO_PROFILE, "a::b", verdict, message).basis is Basis.INFO


def test_a_matching_remark_passes_and_a_failure_beside_a_remark_still_fails() -> None:
    check = Check()
    check.remark("remark", "FOUND", "FOUND")
    assert _verdict_of(check)[0] is Verdict.PASS
    check.remark("remark", "FOUND", "found")
    with pytest.raises(Failure) as raised:
        check.equal("code", 0, 1)
    assert _verdict_of(check, raised.value)[0] is Verdict.FAIL


@pytest.mark.parametrize(("spec", "verdict", "basis"), [
    (MUST_CASE, Verdict.FAIL, Basis.MUST),
    (SHOULD_CASE, Verdict.NON_STRICT, Basis.SHOULD),
])
def test_a_failure_is_lowered_by_the_clause_level(spec: CaseSpec, verdict: Verdict, basis: Basis) -> None:
    decided = decide(spec, profile.NO_PROFILE, "a::b", Verdict.FAIL, "code")
    assert (decided.verdict, decided.basis) == (verdict, basis)


def test_a_failing_step_is_charged_to_its_own_clause() -> None:
    decided = decide(MUST_CASE, profile.NO_PROFILE, "pull::lite", Verdict.FAIL, "switching off",
                     charged="RMQ-ADMIN-UPDATE-CONFIG")
    assert decided.clause.id == "RMQ-ADMIN-UPDATE-CONFIG" and decided.case_clause == "RMQ-BRK-LITE-PULL"
    assert "RMQ-BRK-LITE-PULL was not judged" in decided.message


def test_a_declared_choice_is_shown_apart_from_deviations(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[[deviation]]\ncase = "a::dev"\nverdict = "NON-STRICT"\nreason = "r"\nsource = "s"\n'
                    '[[choice]]\ncase = "a::chosen*"\nreason = "opt-in by design"\nsource = "docs"\n')
    loaded = profile.load(path)
    chosen = decide(MUST_CASE, loaded, "a::chosen[x]", Verdict.FAIL, "closed")
    deviated = decide(MUST_CASE, loaded, "a::dev", Verdict.FAIL, "closed")
    assert (chosen.verdict, chosen.basis) == (Verdict.NON_STRICT, Basis.CHOICE)
    assert chosen.deviation.startswith("declared choice: opt-in by design")
    assert (deviated.verdict, deviated.basis) == (Verdict.NON_STRICT, Basis.DEVIATION)
    assert decide(MUST_CASE, loaded, "a::other", Verdict.FAIL, "x").basis is Basis.MUST


def test_every_shipped_profile_loads() -> None:
    assert all(p.name for p in profile.shipped())
