"""What a broker in controller mode keeps about itself: the broker id its controller granted, and how
often it talks to the controller.

A broker asks the controller for an id once (CONTROLLER_GET_NEXT_BROKER_ID, then
CONTROLLER_APPLY_BROKER_ID, ``rocketmq_spec.spec.controller``) and keeps it in ``brokerIdentity`` under
its store root, so a restart registers under the same id. The file is one line
``<clusterName>#<brokerName>#<brokerId>``; ``brokerIdentity-temp`` holds the id being applied for with
its check code (``...#<registerCheckCode>``) until the controller grants it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.ha_autoswitch import AUTOSWITCH_RELEASES
from rocketmq_spec.spec.releases import Releases

_AUTO = "store/src/main/java/org/apache/rocketmq/store/ha/autoswitch/"
_REPLICAS = "broker/src/main/java/org/apache/rocketmq/broker/controller/ReplicasManager.java"
_BROKER_CONFIG = "common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java"

BROKER_IDENTITY_FILE = "brokerIdentity"
"""Under storePathRootDir (MessageStoreConfig.getStorePathBrokerIdentity:863)."""
TEMP_SUFFIX = "-temp"
"""The id being applied for (ReplicasManager.java:119)."""
IDENTITY_SEPARATOR = "#"
"""Between the fields (BrokerMetadata.encodeToStr:48, TempBrokerMetadata.encodeToStr)."""


@dataclass(frozen=True)
class ControllerModeSetting:
    key: str
    default_ms: int
    meaning: str
    source: str
    releases: Releases = AUTOSWITCH_RELEASES


CONTROLLER_MODE_SETTINGS: tuple[ControllerModeSetting, ...] = (
    ControllerModeSetting("brokerHeartbeatInterval", 1000, "BROKER_HEARTBEAT to the controller",
                          _BROKER_CONFIG + ":198"),
    ControllerModeSetting("controllerHeartBeatTimeoutMills", 10_000,
                          "sent as heartbeatTimeoutMills: how long one heartbeat keeps the broker alive",
                          _BROKER_CONFIG + ":378"),
    ControllerModeSetting("syncBrokerMetadataPeriod", 5000,
                          "CONTROLLER_GET_REPLICA_INFO: a newer master epoch changes the broker's role",
                          _BROKER_CONFIG + ":372"),
    ControllerModeSetting("checkSyncStateSetPeriod", 5000,
                          "a master's check of its SyncStateSet, reported when it changed",
                          _BROKER_CONFIG + ":374"),
)
CONTROLLER_MODE_DEFAULTS = {s.key: s.default_ms for s in CONTROLLER_MODE_SETTINGS}

RMQ_BROKER_IDENTITY = clause(
    "RMQ-BROKER-IDENTITY", Level.MUST,
    "A broker in controller mode keeps the id its controller granted in <storePathRootDir>/brokerIdentity "
    "(clusterName#brokerName#brokerId) and registers under it after a restart without applying again; a "
    "file naming another cluster or broker-set stops the registration.",
    source=_REPLICAS + " (register:445, confirmNowRegisteringState:581, checkMetadataValid:606); "
    + _AUTO + "BrokerMetadata.java (encodeToStr:46)")
RMQ_BROKER_ROLE = clause(
    "RMQ-BROKER-ROLE", Level.MUST,
    "A broker in controller mode takes its role from the controller's answers (REGISTER_BROKER, "
    "ELECT_MASTER, GET_REPLICA_INFO every syncBrokerMetadataPeriod): only a master epoch greater than the "
    "one it acts on changes it; it becomes master when the master id is its own, else the slave of the "
    "address named; with no master it asks for an election.",
    source=_REPLICAS + " (changeBrokerRole:229, changeToMaster:240, changeToSlave:286, "
    "schedulingSyncBrokerMetadata:641, brokerElect:357)")
