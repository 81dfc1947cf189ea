"""What the controller decides: broker ids, liveness, elections, SyncStateSet changes and their refusals.

A broker-set's state at the controller is its brokers (id → address, and the check code each id was
applied with), the master's id, the master epoch and the SyncStateSet with its epoch. A broker is *alive*
while its last BROKER_HEARTBEAT is younger than the timeout that heartbeat named. An election picks a
master from the alive members of the SyncStateSet (and, only with ``enableElectUncleanMaster=true``, from
any alive broker of the set); a new master gets ``masterEpoch + 1``, a SyncStateSet of itself alone and
``syncStateSetEpoch + 1``. A master shrinks and grows the set as its slaves fall behind and catch up
(``rocketmq_spec.spec.ha_autoswitch``) and reports each change with both epochs; the controller refuses a
report carrying an epoch it no longer holds, which is how a deposed master is fenced off.

The response codes are those of 5.1.1 and later (2010-2016 were renumbered then, see
``rocketmq_spec.spec.codes``); ``CONTROLLER_ANSWERS`` says which request gets which code and when.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import BROKER_ID_RELEASES, CONTROLLER_RELEASES, DLEDGER, MANAGER, PROCESSOR
from rocketmq_spec.spec.releases import Releases

_ELECT = "controller/src/main/java/org/apache/rocketmq/controller/elect/impl/DefaultElectPolicy.java"
_HEARTBEAT = ("controller/src/main/java/org/apache/rocketmq/controller/impl/heartbeat/"
              "DefaultBrokerHeartbeatManager.java")
_CONFIG = "common/src/main/java/org/apache/rocketmq/common/ControllerConfig.java"
_NAMESRV = "namesrv/src/main/java/org/apache/rocketmq/namesrv/NamesrvStartup.java"

FIRST_BROKER_ID = 1
"""``MixAll.FIRST_BROKER_CONTROLLER_ID`` (MixAll.java:98): the id of a broker-set's first broker."""
DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000
"""``BrokerHeartbeatManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME`` (BrokerHeartbeatManager.java:29)."""
HEARTBEAT_SCAN_INTERVAL_MS = 5_000
"""``ControllerConfig.scanNotActiveBrokerInterval`` (ControllerConfig.java:36): how often the controller
forgets the brokers whose heartbeat ran out (DefaultBrokerHeartbeatManager.scanNotActiveBroker:74)."""
FIRST_HEARTBEAT_SCAN_MS = 2_000
"""The first of those scans runs this long after the controller starts (DefaultBrokerHeartbeatManager:59)."""
NO_ELECTOR = -1
"""The brokerId of an election the controller starts itself when a master stops heartbeating."""
NOT_LEADER_REMARK = "The controller is not in leader state"
"""Remark of 2007 CONTROLLER_NOT_LEADER (DLedgerController.EventScheduler.appendEvent:405)."""
HEARTBEAT_REMARK = "Heart beat success"
"""Remark of a BROKER_HEARTBEAT's SUCCESS (ControllerRequestProcessor.handleBrokerHeartbeat:215)."""
NO_BROKER_ID_REMARK = "Heart beat with empty brokerId"
"""Remark of a BROKER_HEARTBEAT without brokerId (ControllerRequestProcessor.handleBrokerHeartbeat:211)."""
METADATA_NOT_EXIST_REMARK = "Broker metadata is not existed"
"""Remark of an unknown set in GET_REPLICA_INFO and ALTER_SYNC_STATE_SET (ReplicasInfoManager:118,383)."""
CHECK_CODE_SEPARATOR = ";"
"""registerCheckCode is ``ip:port;timestamp`` (ReplicasManager.createTempMetadataFile)."""


@dataclass(frozen=True)
class ControllerSetting:
    key: str
    default: str
    meaning: str
    source: str
    releases: Releases = CONTROLLER_RELEASES


CONTROLLER_SETTINGS: tuple[ControllerSetting, ...] = (
    ControllerSetting("enableControllerInNamesrv", "false", "a name server also runs a controller "
        "(NamesrvConfig)",
                      _NAMESRV + ":74,107"),
    ControllerSetting("controllerType", "DLedger", "DLedger or jRaft", _CONFIG + ":31"),
    ControllerSetting("controllerDLegerGroup", "(none)", "the DLedger group of the controllers",
                      _CONFIG + ":48"),
    ControllerSetting("controllerDLegerPeers", "(none)",
                      "id-ip:port;... of every controller; the controller serves requests on its own port",
                      _CONFIG + ":49"),
    ControllerSetting("controllerDLegerSelfId", "(none)", "this controller's id among the peers",
                      _CONFIG + ":50"),
    ControllerSetting("controllerStorePath", "(empty)", "where the DLedger log is kept",
                      _CONFIG + ":52"),
    ControllerSetting("enableElectUncleanMaster", "false",
                      "elect a broker outside the SyncStateSet when no member is alive (data may be lost)",
                      _CONFIG + ":63"),
    ControllerSetting("notifyBrokerRoleChanged", "true", "tell the set's brokers of a new master (code 1008)",
                      _CONFIG + ":73"),
    ControllerSetting("scanInactiveMasterInterval", "5000",
                      "ms between the leader's checks for a dead master, which trigger an election",
                      _CONFIG + ":78"),
    ControllerSetting("scanNotActiveBrokerInterval", "5000",
                      "ms between the scans that forget brokers whose heartbeat ran out and close their "
                      "connections; a name server with the controller inside reads it for both",
                      _CONFIG + ":36"),
    ControllerSetting("configBlackList", "configBlackList;configStorePath",
                      "keys UPDATE_CONTROLLER_CONFIG refuses (rocketmqHome always added)", _CONFIG + ":101"),
)
"""``ControllerConfig`` settings, read from the name server's (or controller's) configuration file."""
CONFIG_BLACK_LIST = ("configBlackList", "configStorePath", "rocketmqHome")
"""Keys UPDATE_CONTROLLER_CONFIG always refuses (ControllerRequestProcessor.initConfigBlackList:86)."""


@dataclass(frozen=True)
class ControllerAnswer:
    request: RequestCode | None
    """None: every request the controller's event scheduler takes."""
    code: ResponseCode
    when: str
    source: str
    releases: Releases = BROKER_ID_RELEASES


_C, _R = RequestCode, ResponseCode
_M = "ReplicasInfoManager."
CONTROLLER_ANSWERS: tuple[ControllerAnswer, ...] = (
    ControllerAnswer(None, _R.CONTROLLER_NOT_LEADER,
                     "any request the scheduler takes while this controller does not lead (also reads)",
                     "DLedgerController.EventScheduler.appendEvent:403"),
    ControllerAnswer(_C.CONTROLLER_APPLY_BROKER_ID, _R.CONTROLLER_BROKER_ID_INVALID,
                     "unknown set and an id other than 1, or an id already held under another check code",
                     f"{_M}applyBrokerId:320,330"),
    ControllerAnswer(_C.CONTROLLER_REGISTER_BROKER, _R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                     "unknown broker-set, or an id never applied for in it", f"{_M}registerBroker:343,349"),
    ControllerAnswer(_C.BROKER_HEARTBEAT, _R.CONTROLLER_INVALID_REQUEST, "no brokerId (remark "
                     "\"Heart beat with empty brokerId\")",
                     "ControllerRequestProcessor.handleBrokerHeartbeat:211"),
    ControllerAnswer(_C.CONTROLLER_ELECT_MASTER, _R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                     "unknown broker-set", f"{_M}electMaster:201"),
    ControllerAnswer(_C.CONTROLLER_ELECT_MASTER, _R.CONTROLLER_MASTER_STILL_EXIST,
                     "the policy keeps the current master: header and SyncStateSet body name it",
                     f"{_M}electMaster:236"),
    ControllerAnswer(_C.CONTROLLER_ELECT_MASTER, _R.CONTROLLER_ELECT_MASTER_FAILED,
                     "no candidate, asked by a broker", f"{_M}electMaster:272"),
    ControllerAnswer(_C.CONTROLLER_ELECT_MASTER, _R.CONTROLLER_MASTER_NOT_AVAILABLE,
                     "no candidate, asked with brokerId -1: the master is cleared", f"{_M}electMaster:270"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED,
                     "unknown set, a set equal to the current one, or one without the master",
                     f"{_M}alterSyncStateSet:118,130,180"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_INVALID_MASTER,
                     "masterBrokerId is not the controller's master", f"{_M}alterSyncStateSet:139"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_FENCED_MASTER_EPOCH,
                     "masterEpoch is not the controller's", f"{_M}alterSyncStateSet:148"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH,
                     "the body's syncStateSetEpoch is not the controller's", f"{_M}alterSyncStateSet:157"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_INVALID_REPLICAS,
                     "a member never applied for an id in the set", f"{_M}alterSyncStateSet:166"),
    ControllerAnswer(_C.CONTROLLER_ALTER_SYNC_STATE_SET, _R.CONTROLLER_BROKER_NOT_ALIVE,
                     "a member is not alive", f"{_M}alterSyncStateSet:172"),
    ControllerAnswer(_C.CONTROLLER_GET_REPLICA_INFO, _R.CONTROLLER_BROKER_METADATA_NOT_EXIST,
                     "unknown broker-set (remark \"Broker metadata is not existed\")",
                                          f"{_M}getReplicaInfo:383"),
    ControllerAnswer(_C.CLEAN_BROKER_DATA, _R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                     "a broker to clean is alive (without isCleanLivingBroker), an id list that is not "
                     "numbers, "
                     "or an unknown set", f"{_M}cleanBrokerData:439,447,453,464"),
    ControllerAnswer(_C.UPDATE_CONTROLLER_CONFIG, _R.NO_PERMISSION,
                     "a key of the black list (remark \"Can not update config in black list.\")",
                     "ControllerRequestProcessor.handleUpdateControllerConfig:294"),
)
"""Refusals by request (the order the Java checks them in, for one request); every other outcome of these
requests is 0 SUCCESS. Code numbers are those of ``rocketmq_spec.spec.codes`` for 5.1.1+."""

_STARTUP = "NamesrvStartup.createControllerManager:191; ControllerManager.registerProcessor:249"
RMQ_CTL_PORT = clause(
    "RMQ-CTL-PORT", Level.MUST,
    "A controller serves the controller requests on the port of its own entry in controllerDLegerPeers "
    "(inside a name server too, beside the name server's port), in RemotingCommand frames; any other code is "
    "answered 3 REQUEST_CODE_NOT_SUPPORTED.",
    source=f"{_NAMESRV}; {_STARTUP}; {PROCESSOR} (handleRequest:159)")
RMQ_CTL_METADATA = clause(
    "RMQ-CTL-METADATA", Level.MUST,
    "CONTROLLER_GET_METADATA_INFO answers SUCCESS with the DLedger group, the leader's id and address, "
    "isLeader and the peers (id:ip:port; each); a lone controller leads once elected.",
    source=DLEDGER + " (getControllerMetadata:248)")
RMQ_CTL_NOT_LEADER = clause(
    "RMQ-CTL-NOT-LEADER", Level.MUST,
    "A controller that does not lead answers every request its event scheduler takes (ids, registration, "
    "elections, SyncStateSet, replica info) 2007 CONTROLLER_NOT_LEADER.",
    source=DLEDGER + " (EventScheduler.appendEvent:403)")
RMQ_CTL_NEXT_ID = clause(
    "RMQ-CTL-NEXT-ID", Level.MUST,
    "CONTROLLER_GET_NEXT_BROKER_ID answers nextBrokerId 1 for a broker-set the controller does not know, "
    "else one more than the largest id applied for in it; it reserves nothing.",
    source=MANAGER + " (getNextBrokerId:290); BrokerReplicaInfo.getNextAssignBrokerId")
RMQ_CTL_APPLY_ID = clause(
    "RMQ-CTL-APPLY-ID", Level.MUST,
    "CONTROLLER_APPLY_BROKER_ID grants an unknown set only id 1, and a known set an id nobody holds or the "
    "id this check code already holds; any other id is 2014 CONTROLLER_BROKER_ID_INVALID. The first grant "
    "creates the set with no master and an empty SyncStateSet of epoch 0.",
    source=MANAGER + " (applyBrokerId:305, handleApplyBrokerId:522)")
RMQ_CTL_REGISTER = clause(
    "RMQ-CTL-REGISTER", Level.MUST,
    "CONTROLLER_REGISTER_BROKER of a granted id answers SUCCESS with the SyncStateSet body, and names the "
    "master (id, address, both epochs) only while one exists and is alive; an unknown set or id is 2010 "
    "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED. A new brokerAddress replaces the recorded one.",
    source=MANAGER + " (registerBroker:334)")
RMQ_CTL_HEARTBEAT = clause(
    "RMQ-CTL-HEARTBEAT", Level.MUST,
    "BROKER_HEARTBEAT with a brokerId answers SUCCESS (\"Heart beat success\") and keeps the broker alive "
    "for heartbeatTimeoutMills (10 s when absent); without brokerId it is 2005 CONTROLLER_INVALID_REQUEST. "
    "A broker is tied to the connection of its first heartbeat: once its heartbeat has run out, the "
    "controller's next scan (every scanNotActiveBrokerInterval, 5 s) forgets it and closes that connection.",
    source=PROCESSOR + " (handleBrokerHeartbeat:208); " + _HEARTBEAT + " (scanNotActiveBroker:74, "
    "onBrokerHeartbeat:110, isBrokerActive:169)")
RMQ_CTL_ELECT_FIRST = clause(
    "RMQ-CTL-ELECT-FIRST", Level.MUST,
    "The first election of a broker-set that never had a master elects the broker asking, alive or not: "
    "masterEpoch and syncStateSetEpoch become 1 and the SyncStateSet is that broker alone; the body also "
    "lists every broker of the set (brokerMemberGroup).",
    source=MANAGER + " (electMaster:212, 241-262)")
RMQ_CTL_ELECT_WHO = clause(
    "RMQ-CTL-ELECT-WHO", Level.MUST,
    "Later elections choose among the alive members of the SyncStateSet: the current master if alive (and "
    "not designated away), a designated broker only if it qualifies, else the highest (epoch, maxOffset) of "
    "their heartbeats, then the lowest electionPriority. Brokers outside the set are candidates only with "
    "enableElectUncleanMaster=true (false by default).",
    source=_ELECT + " (elect:73, tryElect:91, comparator:39); " + MANAGER + " (electMaster:209)")
RMQ_CTL_ELECT_STILL = clause(
    "RMQ-CTL-ELECT-STILL", Level.MUST,
    "An election that keeps the current master answers 2011 CONTROLLER_MASTER_STILL_EXIST with the master's "
    "id, address and unchanged epochs in the header and the SyncStateSet in the body.",
    source=MANAGER + " (electMaster:225-237)")
RMQ_CTL_ELECT_NONE = clause(
    "RMQ-CTL-ELECT-NONE", Level.MUST,
    "An election with no candidate answers 2012 CONTROLLER_ELECT_MASTER_FAILED to a broker; asked with "
    "brokerId -1 (the controller's own re-election) it clears the master and answers 2004 "
    "CONTROLLER_MASTER_NOT_AVAILABLE. An unknown set is 2010 CONTROLLER_BROKER_NEED_TO_BE_REGISTERED.",
    source=MANAGER + " (electMaster:199-201, 264-275)")
RMQ_CTL_REELECT = clause(
    "RMQ-CTL-REELECT", Level.MUST,
    "The leading controller checks every scanInactiveMasterInterval (5 s) for sets whose master is no longer "
    "alive while another broker is, and elects for them as brokerId -1.",
    source=DLEDGER + " (scanInactiveMasterAndTriggerReelect:277); "
    + MANAGER + " (scanNeedReelectBrokerSets:468)")
RMQ_CTL_ALTER = clause(
    "RMQ-CTL-ALTER", Level.MUST,
    "CONTROLLER_ALTER_SYNC_STATE_SET from the current master with the current master epoch and the current "
    "syncStateSetEpoch in its body replaces the set by the body's, if every member was granted an id, is "
    "alive and the set holds the master; it answers newSyncStateSetEpoch = epoch + 1 and the new set as "
    "body.",
    source=MANAGER + " (alterSyncStateSet:110-191)")
RMQ_CTL_FENCED = clause(
    "RMQ-CTL-FENCED", Level.MUST,
    "A SyncStateSet change naming another master is 2002 CONTROLLER_INVALID_MASTER; one with a stale or "
    "future master epoch is 2000 CONTROLLER_FENCED_MASTER_EPOCH; one whose body's syncStateSetEpoch is not "
    "the current one is 2001 CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, checked in that order, and nothing "
    "changes (newSyncStateSetEpoch 0).",
    source=MANAGER + " (alterSyncStateSet:134-159)")
RMQ_CTL_ALTER_REFUSED = clause(
    "RMQ-CTL-ALTER-REFUSED", Level.MUST,
    "A SyncStateSet change for an unknown set, equal to the current set, or without the master is 2013 "
    "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED; a member never granted an id 2003 CONTROLLER_INVALID_REPLICAS, "
    "a member not alive 2006 CONTROLLER_BROKER_NOT_ALIVE.",
    source=MANAGER + " (alterSyncStateSet:117-182)")
RMQ_CTL_REPLICA_INFO = clause(
    "RMQ-CTL-REPLICA-INFO", Level.MUST,
    "CONTROLLER_GET_REPLICA_INFO answers the master's id, address and epoch and the SyncStateSet body; an "
    "unknown set is 2008 CONTROLLER_BROKER_METADATA_NOT_EXIST.",
    source=MANAGER + " (getReplicaInfo:368)")
RMQ_CTL_SYNC_STATE_DATA = clause(
    "RMQ-CTL-SYNC-STATE-DATA", Level.MUST,
    "CONTROLLER_GET_SYNC_STATE_DATA with a JSON array of set names answers BrokerReplicasInfo: per known set "
    "the master, both epochs, and its brokers split into inSyncReplicas and notInSyncReplicas with their "
    "liveness; unknown names are left out.",
    source=PROCESSOR + " (handleControllerGetSyncStateData:218); " + MANAGER + " (getSyncStateData:387)")
RMQ_CTL_CLEAN = clause(
    "RMQ-CTL-CLEAN", Level.MUST,
    "CLEAN_BROKER_DATA forgets a set (or the listed ids of it) unless a broker to forget is alive and "
    "isCleanLivingBroker is false, or the set is unknown: both 2009 "
    "CONTROLLER_INVALID_CLEAN_BROKER_METADATA.",
    source=MANAGER + " (cleanBrokerData:425, handleCleanBrokerDataEvent:574)")
RMQ_CTL_CONFIG = clause(
    "RMQ-CTL-CONFIG", Level.MUST,
    "GET_CONTROLLER_CONFIG answers every setting as Properties text; UPDATE_CONTROLLER_CONFIG with a "
    "black-listed key (configBlackList, configStorePath, rocketmqHome and those configured) is 16 "
    "NO_PERMISSION \"Can not update config in black list.\".",
    source=PROCESSOR + " (handleUpdateControllerConfig:268, handleGetControllerConfig:308)")
