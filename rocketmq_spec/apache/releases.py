"""The Apache RocketMQ releases the project can provision, as a table.

Each row says what the release needs to run (the Maven artifacts of its servers and tools, the oldest
Java it runs on, how it configures logging) and what it announces on the wire (the ``version`` word of
every RemotingCommand it sends), so that adding a release is one row, not a code change.

Whether a release can be provisioned on a given machine is a fact of the Maven repository it reaches,
not of this table: :mod:`rocketmq_spec.apache.maven` reports a release whose jars are not served in one line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.version import MQVersion

GROUP_ID = "org.apache.rocketmq"


class Logging(enum.Enum):
    LOGBACK_CONF = "logback_conf"
    """4.x: the startups read ``$ROCKETMQ_HOME/conf/logback_<role>.xml`` and exit without it."""
    EMBEDDED = "embedded"
    """5.x: rocketmq-logback-classic carries its own configuration, writing below ``${user.home}/logs``."""


@dataclass(frozen=True)
class Release:
    version: str
    mq_version: MQVersion
    """The MQVersion.Version ordinal the release puts in the ``version`` word of its commands."""
    min_java: int
    logging: Logging
    artifacts: tuple[str, ...]
    """The artifacts resolved, with their dependencies, into one class path."""
    java_options: tuple[str, ...] = ()
    subset: str = ""
    """Names a row that resolves only some artifacts of the release (say its config classes, where the
    repository lacks its servers), so that it is cached apart from the whole release."""
    transitive: bool = True
    """False: the artifacts alone, without their dependencies (enough to read their classes)."""

    @property
    def cache_name(self) -> str:
        return f"{self.version}-{self.subset}" if self.subset else self.version

    @property
    def line(self) -> str:
        return self.version.split(".", 1)[0] + ".x"

    @property
    def target_name(self) -> str:
        return f"apache-{self.version}"

    @property
    def has_proxy(self) -> bool:
        """Whether the release ships rocketmq-proxy (5.x), which serves RocketMQ 5's gRPC protocol."""
        return "rocketmq-proxy" in self.artifacts


_JAVA17_OPENS = ("--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                 "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
                 "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED")
"""4.x unmaps its mapped files through ``sun.nio.ch.DirectBuffer`` and ``jdk.internal.ref.Cleaner`` by
reflection (``UtilAll.cleanBuffer``, ``MappedFile.invoke``), which Java 17 refuses unless the packages are
opened; without them deleting a commitlog file fails, and so does the shutdown hook as it deletes the
pre-allocated file, leaving the ``abort`` file of a crash behind a clean stop."""

_FOUR = ("rocketmq-namesrv", "rocketmq-broker", "rocketmq-tools", "rocketmq-client", "rocketmq-acl")
_FIVE = ("rocketmq-namesrv", "rocketmq-broker", "rocketmq-tools", "rocketmq-client", "rocketmq-proxy")

RELEASES: dict[str, Release] = {release.version: release for release in (
    #        version  MQVersion  Java  logging                artifacts
    Release("4.9.7", MQVersion.V4_9_7, 8, Logging.LOGBACK_CONF, _FOUR, _JAVA17_OPENS),
    Release("4.9.8", MQVersion.V4_9_8, 8, Logging.LOGBACK_CONF, _FOUR, _JAVA17_OPENS),
    Release("5.3.3", MQVersion.V5_3_3, 8, Logging.EMBEDDED, _FIVE),
    Release("5.4.0", MQVersion.V5_4_0, 8, Logging.EMBEDDED, _FIVE),
    Release("5.5.0", MQVersion.V5_5_0, 8, Logging.EMBEDDED, _FIVE),
    Release("5.5.1", MQVersion.V5_5_1, 8, Logging.EMBEDDED, _FIVE),
)}


class UnknownRelease(ValueError):
    """A version the table has no row for."""

    def __init__(self, version: str) -> None:
        super().__init__(f"unknown Apache RocketMQ release {version!r} (known: {', '.join(RELEASES)})")
        self.expected = tuple(RELEASES)
        self.seen = version


def release(version: str) -> Release:
    """The row of ``version``; ``apache-5.5.0`` is accepted as well as ``5.5.0``."""
    key = version.removeprefix("apache-")
    try:
        return RELEASES[key]
    except KeyError:
        raise UnknownRelease(version) from None
