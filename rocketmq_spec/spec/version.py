"""MQVersion ordinals: which release a RemotingCommand's ``version`` word names.

The word is the release's position in Java's ``MQVersion.Version`` enum, and servers change behaviour at
a few of them. Listed are the ordinals the reference implementations act on and those of the releases
the project runs as targets (whose answers carry them); each is the enum position of the named release in
Java's ``MQVersion`` (the enum only grows at its end, so a position never changes meaning).
"""

from __future__ import annotations

import enum

from rocketmq_spec.spec.clauses import Level, clause

_MQ_VERSION = "common/src/main/java/org/apache/rocketmq/common/MQVersion.java"


class MQVersion(enum.IntEnum):
    V3_0_7_SNAPSHOT = 28
    """Oldest client a broker sends RESET_CONSUMER_CLIENT_OFFSET to."""
    V3_1_8_SNAPSHOT = 62
    """Oldest client a broker forwards GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY to."""
    V3_4_9 = 121
    """From it on a send to a retry topic and CONSUMER_SEND_MSG_BACK honour the request's
    maxReconsumeTimes instead of the group's retryMaxTimes."""
    V4_9_4 = 401
    """From it on the name server writes route data as standard JSON (quoted map keys)."""
    V4_9_7 = 407
    V4_9_8 = 409
    """The release whose behaviour the reference broker reproduces; it announces this version."""
    V5_3_1_SNAPSHOT = 474
    """Announced by rocketmq-rust 1.0.0 (its rocketmq-model ``CURRENT_VERSION``); no Apache release is."""
    V5_3_3 = 479
    V5_4_0 = 493
    V5_5_0 = 513
    V5_5_1 = 515


def release_name(ordinal: int) -> str | None:
    """``"4.9.7"`` for 407: the release an ordinal names, when it is one listed here and not a snapshot."""
    try:
        name = MQVersion(ordinal).name
    except ValueError:
        return None
    return None if name.endswith("SNAPSHOT") else name.removeprefix("V").replace("_", ".")


CURRENT_VERSION = MQVersion.V4_9_8

VERSION_ORDINAL = clause(
    "RMQ-HDR-VERSION-ORDINAL", Level.MUST,
    "The version field carries the ordinal of MQVersion.Version: 121 is V3_4_9, 401 is V4_9_4, 409 is "
    "V4_9_8; receivers compare ordinals to pick version-dependent behaviour.",
    source=_MQ_VERSION)
