"""Starting the target's implementation afresh, for the cases about a broker's life cycle.

A wire case sees one running broker and must leave it running for the others, so what a broker does
across a stop, a crash and a start (the ``abort`` file, timer messages pending at a stop, graceful
shutdown) needs a broker of its own that the case may stop, kill and start again. Only a target the suite
starts itself can give one: the embedded reference broker, a provisioned release of Apache RocketMQ or
rocketmq-rust (``rocketmq_spec.targets``). A broker given by address has no launcher, and those cases are left
out of its run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.apache.servers import LoopbackServers
from rocketmq_spec.targets import parse_target, servers

HEAP_MB = 384
"""A JVM broker's heap: the life-cycle cases store a few messages."""
SEPARATOR = ","


class LauncherError(ValueError):
    """A ``--rmq-launch`` value that names no target or holds a setting without ``=``."""


@dataclass(frozen=True)
class Launcher:
    """The target ``name`` (``embedded``, ``apache-5.5.0``, ``rocketmq-rust-1.0.0``) with the broker.conf
    settings (Java keys) the run's target was started with."""

    name: str
    settings: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, name: str, settings: Mapping[str, object] | None = None) -> Launcher:
        return cls(name, tuple((key, str(value)) for key, value in (settings or {}).items()))

    @classmethod
    def parse(cls, text: str) -> Launcher:
        """``NAME[,KEY=VALUE...]``, as :meth:`__str__` writes it for the pytest command line."""
        name, *pairs = text.split(SEPARATOR)
        parse_target(name)  # an unknown name is refused here, not in every case
        settings = []
        for pair in pairs:
            key, equals, value = pair.partition("=")
            if not equals or not key:
                raise LauncherError(f"--rmq-launch setting {pair!r} is not KEY=VALUE")
            settings.append((key, value))
        return cls(name, tuple(settings))

    def __str__(self) -> str:
        return SEPARATOR.join([self.name, *(f"{key}={value}" for key, value in self.settings)])

    def servers(self, home: Path, **settings: object) -> LoopbackServers:
        """A name server and broker of the target, not started yet, in ``home`` (store included), with the
        run's settings and ``settings`` over them."""
        return servers(self.name, home, broker_config={**dict(self.settings), **settings}, heap_mb=HEAP_MB)
