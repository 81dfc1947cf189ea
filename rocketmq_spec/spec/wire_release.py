"""Which Apache RocketMQ release a process answers as, where releases differ on the wire.

The differences are data of the spec: the ``version`` word every command carries
(``rocketmq_spec.spec.releases``) and the request codes the release declares (``rocketmq_spec.spec.codes``): a
code the release does not declare gets REQUEST_CODE_NOT_SUPPORTED even when the reference broker has a handler
for it (POP in 4.9.8 mode, ACL 1.0's 50-54 in 5.x mode). Behaviour that depends on the release beyond that is
read from the same row. It lives in the spec because both sides read it: the reference broker answers as a
row, and the suite (``rmq-conformance --wire-release``) chooses the row the embedded broker is started with.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rocketmq_spec.spec.codes import request_codes_of
from rocketmq_spec.spec.releases import LEGACY, is_5x, ordinal

DEFAULT_RELEASE = "5.5.0"
"""The newest 5.x release that can be run here beside the reference broker (5.5.1's servers are not served
by Maven Central, so nothing 5.5.1 does on the wire could be checked; its jars show two more admin codes)."""
SUPPORTED_RELEASES = ("5.5.0", "5.3.3", LEGACY)
"""Releases the reference broker can answer as: each is checked against the Apache release of that name
(4.9.8 through its golden data and 4.9.7, the nearest runnable 4.x release)."""


@dataclass(frozen=True)
class WireRelease:
    name: str

    def __post_init__(self) -> None:
        if self.name not in SUPPORTED_RELEASES:
            known = ", ".join(SUPPORTED_RELEASES)
            raise ValueError(f"unsupported wire release {self.name!r} (one of {known})")

    @property
    def version(self) -> int:
        """The MQVersion ordinal written in every command."""
        return ordinal(self.name)

    @property
    def version_name(self) -> str:
        """``MQVersion.getVersionDesc``: ``V5_5_0``."""
        return "V" + self.name.replace(".", "_")

    @property
    def is_5x(self) -> bool:
        return is_5x(self.version)

    @cached_property
    def request_codes(self) -> frozenset[int]:
        return request_codes_of(self.name)

    def serves(self, code: int) -> bool:
        """Whether the release declares the request code."""
        return code in self.request_codes


def wire_release(name: str | None) -> WireRelease:
    return WireRelease(name or DEFAULT_RELEASE)
