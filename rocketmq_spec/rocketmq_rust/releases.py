"""The rocketmq-rust releases the project can install, as a table.

rocketmq-rust (github.com/mxsm/rocketmq-rust) publishes its name server and broker as crates on
crates.io, each carrying its binary (``rocketmq-namesrv`` → ``rocketmq-namesrv-rust``, ``rocketmq-broker``
→ ``rocketmq-broker-rust``), so ``cargo install`` of an exact version builds them from the published
sources and their ``Cargo.lock``. Each row also records what the release announces on the wire (the
``version`` word of its commands, an MQVersion ordinal) and the commit its crates were packaged from (the
``.cargo_vcs_info.json`` inside them), so a report can name exactly what was tested.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Binary:
    crate: str
    name: str
    """The ``[[bin]]`` the crate carries."""


@dataclass(frozen=True)
class Release:
    version: str
    mq_version: int
    """``CURRENT_VERSION`` of its rocketmq-model crate, as an MQVersion ordinal."""
    commit: str
    namesrv: Binary
    broker: Binary

    @property
    def target_name(self) -> str:
        return f"rocketmq-rust-{self.version}"

    @property
    def has_proxy(self) -> bool:
        """Whether it serves RocketMQ 5's gRPC protocol: its broker binary does not (remoting only)."""
        return False

    @property
    def binaries(self) -> tuple[Binary, Binary]:
        return self.namesrv, self.broker


NAMESRV = "rocketmq-namesrv"
BROKER = "rocketmq-broker"

RELEASES: dict[str, Release] = {row.version: row for row in (
    #        version  MQVersion (V5_3_1_SNAPSHOT)  commit of the published crates
    Release("1.0.0", 474, "02f1a19a132ed42873ecb60a3de2f92120776245",
            Binary(NAMESRV, "rocketmq-namesrv-rust"), Binary(BROKER, "rocketmq-broker-rust")),
)}


class UnknownRelease(ValueError):
    """A version the table has no row for."""

    def __init__(self, version: str) -> None:
        super().__init__(f"unknown rocketmq-rust release {version!r} (known: {', '.join(RELEASES)})")
        self.expected = tuple(RELEASES)
        self.seen = version


def release(version: str) -> Release:
    """The row of ``version``; ``rocketmq-rust-1.0.0`` is accepted as well as ``1.0.0``."""
    try:
        return RELEASES[version.removeprefix("rocketmq-rust-")]
    except KeyError:
        raise UnknownRelease(version) from None
