"""A case's script: which of the client's requests the relay answers itself, holds back or cuts off.

Rules match a request by code (and optionally the server it went to and a field of its header); the
first rule with uses left wins. A rule lets ``skip`` matching requests through before it acts, and acts
on ``times`` of them (``None``: on all), so "refuse the first send with SYSTEM_ERROR" and "drop the
connection on the second pull" are one row each.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.clients.recording import Role

TOPIC_PLACEHOLDER = "{topic}"


class Action(enum.Enum):
    ANSWER = "answer"
    """Answer with ``code`` (and ``ext_fields``/``remark``) instead of the server."""
    DELAY = "delay"
    """Pass the request on after ``delay_s`` seconds."""
    DROP = "drop"
    """Close the client's connection instead of passing the request on."""


@dataclass(frozen=True)
class Rule:
    code: int
    action: Action
    answer_code: int = 0
    ext_fields: Mapping[str, str] = field(default_factory=dict)
    remark: str | None = None
    delay_s: float = 0.0
    role: Role | None = None
    where: Mapping[str, str] = field(default_factory=dict)
    """extFields the request must carry, with these values, to match."""
    skip: int = 0
    times: int | None = 1

    def bound(self, topic: str) -> Rule:
        """The rule for a run on ``topic``: ``{topic}`` in a ``where`` value stands for it."""
        return replace(self, where={k: v.replace(TOPIC_PLACEHOLDER, topic) for k, v in self.where.items()})

    def matches(self, role: Role, command: RemotingCommand) -> bool:
        fields = command.ext_fields or {}
        return (
            command.code == self.code
            and (self.role is None or self.role is role)
            and all(fields.get(k) == v for k, v in self.where.items())
        )


def answer(
    code: int,
    answer_code: int,
    *,
    ext_fields: Mapping[str, str] | None = None,
    remark: str | None = None,
    role: Role | None = None,
    skip: int = 0,
    times: int | None = 1,
    where: Mapping[str, str] | None = None,
) -> Rule:
    return Rule(
        code,
        Action.ANSWER,
        answer_code,
        dict(ext_fields or {}),
        remark,
        role=role,
        skip=skip,
        times=times,
        where=dict(where or {}),
    )


def delay(
    code: int, seconds: float, *, role: Role | None = None, skip: int = 0, times: int | None = 1
) -> Rule:
    return Rule(code, Action.DELAY, delay_s=seconds, role=role, skip=skip, times=times)


def drop(code: int, *, role: Role | None = None, skip: int = 0, times: int | None = 1) -> Rule:
    return Rule(code, Action.DROP, role=role, skip=skip, times=times)


class Script:
    """The rules of one scenario, with how often each matched; shared by the relay's connections."""

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules
        self._seen = [0] * len(rules)
        self._lock = threading.Lock()

    def decide(self, role: Role, command: RemotingCommand) -> Rule | None:
        """The rule that acts on this request, counting it as used; None passes the request on."""
        with self._lock:
            for index, rule in enumerate(self.rules):
                if not rule.matches(role, command):
                    continue
                self._seen[index] += 1
                ordinal = self._seen[index] - rule.skip
                if ordinal >= 1 and (rule.times is None or ordinal <= rule.times):
                    return rule
        return None
