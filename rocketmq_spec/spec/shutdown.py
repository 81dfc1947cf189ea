"""Graceful shutdown: GO_AWAY, how a 5.x server sends new clients elsewhere before it closes.

A server stopping with ``enableShutdownGracefully`` (a NettyServerConfig key, default false) first keeps
serving for ``shutdownWaitTimeSeconds`` (default 30) while it answers every request of a client newer
than a threshold release with GO_AWAY instead of processing it: such a client moves its traffic to
another broker or proxy at once, while older clients, which do not know the code, are still served until
the connection closes. The threshold is data by release: 5.2.0 introduced the behaviour for clients newer
than 5.1.4, 5.3.2 raised it to clients newer than 5.3.1.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import Releases, ordinal, since

_ABSTRACT = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java"
_SERVER = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingServer.java"

GO_AWAY_REMARK = "please go away"
SHUTDOWN_WAIT_SECONDS = 30
"""``shutdownWaitTimeSeconds``' default."""

RMQ_SRV_GO_AWAY = clause(
    "RMQ-SRV-GO-AWAY", Level.MUST,
    "A server shutting down with enableShutdownGracefully keeps its connections for shutdownWaitTimeSeconds "
    "and answers each request whose version is newer than its release's threshold with 1500 GO_AWAY "
    "\"please go away\" (nothing to a oneway request), before any processor, ACL or flow control sees it; "
    "requests of older clients are processed as before.",
    source=f"{_ABSTRACT} (processRequestCommand); {_SERVER} (shutdown)",
)


@dataclass(frozen=True)
class GoAwayThreshold:
    releases: Releases
    """Server releases that answer GO_AWAY while shutting down gracefully."""
    newer_than: str
    """Clients whose ``version`` word is above this release's are told to go away."""


GO_AWAY_THRESHOLDS: tuple[GoAwayThreshold, ...] = (
    GoAwayThreshold(Releases(("5.2.0", "5.3.1")), "5.1.4"),
    GoAwayThreshold(since("5.3.2"), "5.3.1"),
)


def go_away_newer_than(server_version: int) -> int | None:
    """The version word above which a server of ``server_version`` answers GO_AWAY while it shuts down
    gracefully; None for a release without graceful shutdown (it closes at once, whatever its config)."""
    for row in GO_AWAY_THRESHOLDS:
        if row.releases.holds_for_version(server_version):
            return ordinal(row.newer_than)
    return None
