"""Releases: the Apache RocketMQ releases the spec covers, and the ranges of them a table row holds for.

A row of a code, header, property or store table carries a ``Releases`` value saying in which releases it
is declared. Two lines of releases run side by side (4.9.x and 5.x), and a row can hold for a range of
one line, a range of the other, or both: ``GET_BROKER_CLUSTER_ACL_CONFIG`` (54) is declared up to 4.9.7,
left out of 4.9.8, declared again by 5.0.0-5.3.2 and removed in 5.3.3. Ranges are compared by the
release's MQVersion ordinal, the number every command carries in its ``version`` word, so a receiver can
place a peer in the table from the first frame it sends.

The evidence column says where the rows were read: ``jar`` rows from the published jars (by reflection
over the classes of rocketmq-common and rocketmq-remoting), ``tag`` rows from the release tag's source.
Where the two disagree the jar wins.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Evidence(enum.Enum):
    JAR = "jar"
    """Constants read off the release's published rocketmq-common / rocketmq-remoting jars."""
    TAG = "tag"
    """Constants read off the release tag's source (rocketmq-all-X.Y.Z)."""


@dataclass(frozen=True)
class Release:
    name: str
    mq_version: int
    """The MQVersion.Version ordinal the release writes in every command's ``version`` word."""
    evidence: Evidence


RELEASES: tuple[Release, ...] = (
    Release("4.9.0", 393, Evidence.TAG),
    Release("4.9.1", 395, Evidence.TAG),
    Release("4.9.2", 397, Evidence.TAG),
    Release("4.9.3", 399, Evidence.TAG),
    Release("4.9.4", 401, Evidence.TAG),
    Release("4.9.5", 403, Evidence.TAG),
    Release("4.9.6", 405, Evidence.TAG),
    Release("4.9.7", 407, Evidence.JAR),
    Release("4.9.8", 409, Evidence.JAR),
    Release("5.0.0", 413, Evidence.TAG),
    Release("5.1.0", 433, Evidence.TAG),
    Release("5.1.1", 435, Evidence.TAG),
    Release("5.1.2", 437, Evidence.TAG),
    Release("5.1.3", 439, Evidence.TAG),
    Release("5.1.4", 441, Evidence.TAG),
    Release("5.2.0", 453, Evidence.TAG),
    Release("5.3.0", 473, Evidence.TAG),
    Release("5.3.1", 475, Evidence.TAG),
    Release("5.3.2", 477, Evidence.TAG),
    Release("5.3.3", 479, Evidence.JAR),
    Release("5.4.0", 493, Evidence.JAR),
    Release("5.5.0", 513, Evidence.JAR),
    Release("5.5.1", 515, Evidence.JAR),
)
"""Every release whose constants the tables were checked against, oldest first."""

LEGACY = "4.9.8"
"""The last 4.x release: the reference broker's 4.x wire mode and the byte baseline of the golden data."""
NEWEST = RELEASES[-1].name
"""The newest release the tables cover."""

_BY_NAME = {release.name: release for release in RELEASES}


class UnknownRelease(KeyError):
    """A release name the table has no row for."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown release {name!r} (known: {', '.join(_BY_NAME)})")
        self.expected = tuple(_BY_NAME)
        self.seen = name


def release(name: str) -> Release:
    try:
        return _BY_NAME[name.removeprefix("apache-")]
    except KeyError:
        raise UnknownRelease(name) from None


def ordinal(name: str) -> int:
    return release(name).mq_version


def release_of_version(mq_version: int) -> Release | None:
    """The newest covered release at or below a ``version`` word (a 5.3.4 peer, 481, reads as 5.3.3);
    None below the oldest covered release."""
    found = None
    for candidate in RELEASES:
        if candidate.mq_version <= mq_version:
            found = candidate
    return found


def is_5x(mq_version: int) -> bool:
    return mq_version >= ordinal("5.0.0")


class Releases:
    """The releases a row holds for: a union of inclusive ``(since, until)`` ranges of release names.

    ``None`` as ``since`` means "from before the oldest covered release", as ``until`` "still declared
    in the newest". Not a dataclass on purpose: the protocol document prints it as one cell.
    """

    __slots__ = ("spans",)

    def __init__(self, *spans: tuple[str | None, str | None]) -> None:
        for since, until in spans:
            for name in (since, until):
                if name is not None:
                    release(name)
        self.spans = spans

    def holds_for_version(self, mq_version: int) -> bool:
        return any((since is None or ordinal(since) <= mq_version)
                   and (until is None or mq_version <= ordinal(until)) for since, until in self.spans)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.holds_for_version(ordinal(name))

    @property
    def since(self) -> str | None:
        """First release of the first range (None: before the covered history)."""
        return self.spans[0][0] if self.spans else None

    @property
    def until(self) -> str | None:
        """Last release of the last range (None: still declared)."""
        return self.spans[-1][1] if self.spans else None

    def names(self, among: Iterable[str] | None = None) -> list[str]:
        """The covered releases (or those of ``among``) the row holds for."""
        return [name for name in (among or _BY_NAME) if name in self]

    def __str__(self) -> str:
        parts = []
        for since, until in self.spans:
            if since is None and until is None:
                parts.append("all")
            elif since is None:
                parts.append(f"up to {until}")
            elif until is None:
                parts.append(f"{since}+")
            else:
                parts.append(since if since == until else f"{since}-{until}")
        return ", ".join(parts) or "none"

    def __repr__(self) -> str:
        return f"Releases{self.spans!r}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Releases) and self.spans == other.spans

    def __hash__(self) -> int:
        return hash(self.spans)


ALL = Releases((None, None))


def since(name: str) -> Releases:
    return Releases((name, None))


def until(name: str) -> Releases:
    return Releases((None, name))


def between(first: str, last: str) -> Releases:
    return Releases((first, last))
