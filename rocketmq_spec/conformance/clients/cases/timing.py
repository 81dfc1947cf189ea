"""Judging a periodic task from the times its requests arrived."""

from __future__ import annotations

import itertools

from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients.judge import ScenarioRun
from rocketmq_spec.conformance.clients.recording import Frame
from rocketmq_spec.spec.client import PERIOD_SLACK_MS, ClientDefault


def check_period(check: Check, result: ScenarioRun, frames: list[Frame], default: ClientDefault) -> None:
    """Each gap between the requests, and from the last one to the end of the client's idle time (its
    ``done`` event), stays within the period plus slack."""
    bound = (default.value + PERIOD_SLACK_MS) / 1000
    end = result.driver.first("done")
    times = [f.at for f in frames] + ([end.at] if end is not None else [])
    check.that(
        f"requests of the {default.name} task",
        len(frames) >= 2,
        expected=f"at least 2 in a run of {result.scenario.idle_s:g} s",
        actual=len(frames),
    )
    gaps = [round(b - a, 1) for a, b in itertools.pairwise(times)]
    check.that(
        f"gaps between them (s), bound {bound:g}",
        all(g <= bound for g in gaps),
        expected=f"<= {bound:g}",
        actual=gaps,
    )
