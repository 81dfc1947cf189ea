"""The controller's requests and answers (RocketMQ 5's automatic failover): headers, bodies and commands.

In controller mode a broker group (a *broker-set*: every broker of one ``brokerName``) no longer has a
configured master. Each broker asks a controller for a broker id (CONTROLLER_GET_NEXT_BROKER_ID, then
CONTROLLER_APPLY_BROKER_ID with a check code ``ip:port;timestamp``), registers
(CONTROLLER_REGISTER_BROKER), keeps itself alive with BROKER_HEARTBEAT, and asks for an election
(CONTROLLER_ELECT_MASTER) when the set has no master. The controller keeps, per broker-set, the master's
broker id, a *master epoch* that grows with every new master, and the **SyncStateSet**: the replicas
known to be in step with the master, with its own *SyncStateSet epoch*. Only the master may change the
set (CONTROLLER_ALTER_SYNC_STATE_SET), and only while both its epochs are the controller's: a stale
master is *fenced* (``rocketmq_spec.spec.controller_rules``).

The controller is a RemotingCommand server like a name server: it runs stand-alone
(``ControllerStartup``) or inside a name server started with ``enableControllerInNamesrv=true``; in both
cases it answers on its own port, the one its DLedger peer address names (``controllerDLegerPeers``), not
on the name server's. Every header value is an extFields string as elsewhere; ``required`` is
``@CFNotNull``. Bodies are fastjson JSON. Each field's doc ends with the 5.5.0 source line declaring it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.bodies import BodyField, BodySpec, Json
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.header_fields import INT, B, Field, FieldType, HeaderSpec, L, S
from rocketmq_spec.spec.releases import Releases, since

REMOTING = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/"
HEADER = REMOTING + "header/controller/"
BODY = REMOTING + "body/"
CONTROLLER = "controller/src/main/java/org/apache/rocketmq/controller/"
PROCESSOR = CONTROLLER + "processor/ControllerRequestProcessor.java"
MANAGER = CONTROLLER + "impl/manager/ReplicasInfoManager.java"
DLEDGER = CONTROLLER + "impl/DLedgerController.java"

CONTROLLER_RELEASES = since("5.0.0")
"""Releases with a controller (RequestCode 1001-1011, ResponseCode 2000-2009)."""
BROKER_ID_RELEASES = since("5.1.1")
"""Releases where the controller hands out broker ids (RIP-44: GET_NEXT_BROKER_ID, APPLY_BROKER_ID,
brokers named by id rather than by address in every controller header)."""


INVOKE_TIME_RELEASES = since("5.4.0")
"""``invokeTime`` joined four request headers in 5.4.0 (5.3.3's classes lack it)."""


def _fields(java_file: str, *rows: tuple[str, FieldType, bool, str, int],
            releases: Releases = BROKER_ID_RELEASES) -> tuple[Field, ...]:
    """Header fields with the 5.5.0 line declaring each (``java_file`` is the header class's file);
    ``invokeTime`` holds from 5.4.0 whatever the class's releases."""
    name = java_file.rsplit("/", 1)[-1]
    return tuple(Field(field, kind, required, f"{doc} ({name}:{line})",
                       releases=INVOKE_TIME_RELEASES if field == "invokeTime" else releases)
                 for field, kind, required, doc, line in rows)


_REGISTER = HEADER + "register/"
GET_NEXT_BROKER_ID_REQUEST = HeaderSpec("GetNextBrokerIdRequestHeader", _fields(
    _REGISTER + "GetNextBrokerIdRequestHeader.java",
    ("clusterName", S, False, "cluster of the broker-set", 32),
    ("brokerName", S, False, "broker-set (brokerName)", 34)))
GET_NEXT_BROKER_ID_RESPONSE = HeaderSpec("GetNextBrokerIdResponseHeader", _fields(
    _REGISTER + "GetNextBrokerIdResponseHeader.java",
    ("clusterName", S, False, "echoed", 25),
    ("brokerName", S, False, "echoed", 27),
    ("nextBrokerId", L, False, "1 for an unknown broker-set, else one more than the largest id given", 29)))
APPLY_BROKER_ID_REQUEST = HeaderSpec("ApplyBrokerIdRequestHeader", _fields(
    _REGISTER + "ApplyBrokerIdRequestHeader.java",
    ("clusterName", S, False, "cluster of the broker-set", 32),
    ("brokerName", S, False, "broker-set", 34),
    ("appliedBrokerId", L, False, "the id the broker asks for (the one GET_NEXT_BROKER_ID gave)", 36),
    ("registerCheckCode", S, False,
     "ip:port;timestamp: the part before ';' becomes the broker's address; the controller dereferences it",
     38)))
APPLY_BROKER_ID_RESPONSE = HeaderSpec("ApplyBrokerIdResponseHeader", _fields(
    _REGISTER + "ApplyBrokerIdResponseHeader.java",
    ("clusterName", S, False, "echoed", 25),
    ("brokerName", S, False, "echoed", 27)))
REGISTER_BROKER_REQUEST = HeaderSpec("RegisterBrokerToControllerRequestHeader", _fields(
    _REGISTER + "RegisterBrokerToControllerRequestHeader.java",
    ("clusterName", S, False, "cluster of the broker-set", 32),
    ("brokerName", S, False, "broker-set", 34),
    ("brokerId", L, False, "the id APPLY_BROKER_ID granted", 36),
    ("brokerAddress", S, False, "ip:port now; a new one replaces the recorded address", 38),
    ("invokeTime", L, False, "ms when sent (informative)", 40)))
REGISTER_BROKER_RESPONSE = HeaderSpec("RegisterBrokerToControllerResponseHeader", _fields(
    _REGISTER + "RegisterBrokerToControllerResponseHeader.java",
    ("clusterName", S, False, "echoed", 25),
    ("brokerName", S, False, "echoed", 27),
    ("masterBrokerId", L, False, "the master's id; absent while the set has no alive master", 29),
    ("masterAddress", S, False, "the master's address, absent with masterBrokerId", 31),
    ("masterEpoch", INT, False, "the master epoch, absent with masterBrokerId", 33),
    ("syncStateSetEpoch", INT, False, "the SyncStateSet epoch, absent with masterBrokerId", 35)))
ELECT_MASTER_REQUEST = HeaderSpec("ElectMasterRequestHeader", _fields(
    HEADER + "ElectMasterRequestHeader.java",
    ("clusterName", S, True, "cluster of the broker-set", 33),
    ("brokerName", S, True, "broker-set", 36),
    ("brokerId", L, True, "the broker asking (-1: the controller itself, after its master died)", 46),
    ("designateElect", B, True, "elect brokerId and no other (an admin's electMaster)", 49),
    ("invokeTime", L, False, "ms when sent (informative)", 51)))
ELECT_MASTER_RESPONSE = HeaderSpec("ElectMasterResponseHeader", _fields(
    HEADER + "ElectMasterResponseHeader.java",
    ("masterBrokerId", L, False, "the (new or still) master's id", 25),
    ("masterAddress", S, False, "its address", 26),
    ("masterEpoch", INT, False, "its epoch: one more than before for a new master", 27),
    ("syncStateSetEpoch", INT, False, "the SyncStateSet epoch: one more than before for a new master", 28)))
ALTER_SYNC_STATE_SET_REQUEST = HeaderSpec("AlterSyncStateSetRequestHeader", _fields(
    HEADER + "AlterSyncStateSetRequestHeader.java",
    ("brokerName", S, False, "broker-set", 28),
    ("masterBrokerId", L, False, "the master asking, which must be the controller's", 29),
    ("masterEpoch", INT, False, "its master epoch, which must be the controller's", 30),
    ("invokeTime", L, False, "ms when sent (informative)", 31)))
ALTER_SYNC_STATE_SET_RESPONSE = HeaderSpec("AlterSyncStateSetResponseHeader", _fields(
    HEADER + "AlterSyncStateSetResponseHeader.java",
    ("newSyncStateSetEpoch", INT, False, "the new set's epoch (0 on a refusal: a Java int)", 23)))
GET_REPLICA_INFO_REQUEST = HeaderSpec("GetReplicaInfoRequestHeader", _fields(
    HEADER + "GetReplicaInfoRequestHeader.java",
    ("brokerName", S, False, "broker-set", 28)))
GET_REPLICA_INFO_RESPONSE = HeaderSpec("GetReplicaInfoResponseHeader", _fields(
    HEADER + "GetReplicaInfoResponseHeader.java",
    ("masterBrokerId", L, False, "the master's id; absent while there is none", 24),
    ("masterAddress", S, False, "its address", 25),
    ("masterEpoch", INT, False, "the master epoch (kept when the master is gone)", 26)))
GET_METADATA_RESPONSE = HeaderSpec("GetMetaDataResponseHeader", _fields(
    HEADER + "GetMetaDataResponseHeader.java",
    ("group", S, False, "the DLedger group (controllerDLegerGroup)", 23),
    ("controllerLeaderId", S, False, "the leader's peer id (n0 ...)", 24),
    ("controllerLeaderAddress", S, False, "the leader's ip:port", 25),
    ("isLeader", B, False, "whether the controller answering leads", 26),
    ("peers", S, False, "id:ip:port; for every peer, each followed by ';'", 27),
    releases=CONTROLLER_RELEASES))
CLEAN_BROKER_DATA_REQUEST = HeaderSpec("CleanControllerBrokerDataRequestHeader", _fields(
    HEADER + "admin/CleanControllerBrokerDataRequestHeader.java",
    ("clusterName", S, False, "cluster", 35),
    ("brokerName", S, True, "broker-set to forget", 38),
    ("brokerControllerIdsToClean", S, False, "ids separated by ';' (absent: the whole set)", 41),
    ("isCleanLivingBroker", B, False, "also forget alive brokers (default false)", 43),
    ("invokeTime", L, False, "ms when sent (informative)", 44)))
BROKER_HEARTBEAT_REQUEST = HeaderSpec("BrokerHeartbeatRequestHeader", _fields(
    REMOTING + "header/namesrv/BrokerHeartbeatRequestHeader.java",
    ("clusterName", S, True, "cluster", 34),
    ("brokerAddr", S, True, "ip:port", 36),
    ("brokerName", S, True, "broker-set", 38),
    ("brokerId", L, False, "the broker's id; the processor refuses a heartbeat without it", 40),
    ("epoch", INT, False, "the broker's last epoch (its epoch file's)", 42),
    ("maxOffset", L, False, "its CommitLog max offset", 44),
    ("confirmOffset", L, False, "its confirm offset", 46),
    ("heartbeatTimeoutMills", L, False, "how long the heartbeat keeps it alive (absent: 10 s)", 48),
    ("electionPriority", INT, False, "lower is preferred among equals (absent: Integer.MAX_VALUE)", 50)))

NOTIFY_BROKER_ROLE_CHANGED_REQUEST = HeaderSpec("NotifyBrokerRoleChangedRequestHeader", _fields(
    REMOTING + "header/NotifyBrokerRoleChangedRequestHeader.java",
    ("masterAddress", S, False, "the new master's address", 28),
    ("masterEpoch", INT, False, "its master epoch", 29),
    ("syncStateSetEpoch", INT, False, "the SyncStateSet epoch", 30),
    ("masterBrokerId", L, False, "the new master's id", 31)))
"""What a controller sends, oneway, to every alive broker of a set it elected a master for (with
``notifyBrokerRoleChanged=true``): NOTIFY_BROKER_ROLE_CHANGED with the SyncStateSet as body
(ControllerManager.doNotifyBrokerRoleChanged:222; the broker's AdminBrokerProcessor hands it to
ReplicasManager.changeBrokerRole)."""

_S, _N, _A, _O, _B = Json.STRING, Json.NUMBER, Json.ARRAY, Json.OBJECT, Json.BOOLEAN
SYNC_STATE_SET = BodySpec("SyncStateSet", (
    BodyField("syncStateSet", _A, "broker ids in step with the master (SyncStateSet.java:25)"),
    BodyField("syncStateSetEpoch", _N, "the set's epoch (SyncStateSet.java:26)", default=0),
))
BROKER_MEMBER_GROUP = BodySpec("BrokerMemberGroup", (
    BodyField("brokerAddrs", _O, "broker id (unquoted Long key) → address (BrokerMemberGroup.java:29)",
              is_map=True),
    BodyField("brokerName", _S, "broker-set (BrokerMemberGroup.java:28)"),
    BodyField("cluster", _S, "cluster (BrokerMemberGroup.java:27)"),
))
ELECT_MASTER_BODY = BodySpec("ElectMasterResponseBody", (
    BodyField("brokerMemberGroup", _O, "every broker of the set, for a new master "
                                       "(ElectMasterResponseBody.java:26)",
              BROKER_MEMBER_GROUP),
    BodyField("syncStateSet", _A, "the SyncStateSet: just the new master (ElectMasterResponseBody.java:27)"),
))
REPLICA_IDENTITY = BodySpec("ReplicaIdentity", (
    BodyField("alive", _B, "heartbeat still valid (BrokerReplicasInfo.java:134)"),
    BodyField("brokerAddress", _S, "address (BrokerReplicasInfo.java:133)"),
    BodyField("brokerId", _N, "id (BrokerReplicasInfo.java:131)"),
    BodyField("brokerName", _S, "broker-set (BrokerReplicasInfo.java:130)"),
))
REPLICAS_INFO = BodySpec("ReplicasInfo", (
    BodyField("inSyncReplicas", _A, "members of the SyncStateSet (BrokerReplicasInfo.java:53)",
              REPLICA_IDENTITY),
    BodyField("masterAddress", _S, "master's address (BrokerReplicasInfo.java:50)"),
    BodyField("masterBrokerId", _N, "master's id (BrokerReplicasInfo.java:48)"),
    BodyField("masterEpoch", _N, "master epoch (BrokerReplicasInfo.java:51)"),
    BodyField("notInSyncReplicas", _A, "the other brokers of the set (BrokerReplicasInfo.java:54)",
              REPLICA_IDENTITY),
    BodyField("syncStateSetEpoch", _N, "SyncStateSet epoch (BrokerReplicasInfo.java:52)"),
))
BROKER_REPLICAS_INFO = BodySpec("BrokerReplicasInfo", (
    BodyField("replicasInfoTable", _O, "broker-set → ReplicasInfo; unknown sets are left out "
              "(BrokerReplicasInfo.java:27)", REPLICAS_INFO, is_map=True),
))


@dataclass(frozen=True)
class ControllerCommand:
    """One request the controller serves and what it answers on success."""

    code: RequestCode
    header: HeaderSpec | None
    request_body: str
    answer_header: HeaderSpec | None
    answer_body: str
    writes: bool
    """A write event: what it changes is replicated through DLedger before the answer."""
    source: str
    releases: Releases


_P = "ControllerRequestProcessor."
_M = "ReplicasInfoManager."
CONTROLLER_COMMANDS: tuple[ControllerCommand, ...] = (
    ControllerCommand(RequestCode.CONTROLLER_GET_NEXT_BROKER_ID, GET_NEXT_BROKER_ID_REQUEST, "(none)",
                      GET_NEXT_BROKER_ID_RESPONSE, "(none)", False,
                      f"{_P}handleGetNextBrokerId:241; {_M}getNextBrokerId:290", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_APPLY_BROKER_ID, APPLY_BROKER_ID_REQUEST, "(none)",
                      APPLY_BROKER_ID_RESPONSE, "(none)", True,
                      f"{_P}handleApplyBrokerId:250; {_M}applyBrokerId:305", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_REGISTER_BROKER, REGISTER_BROKER_REQUEST, "(none)",
                      REGISTER_BROKER_RESPONSE, "SyncStateSet", True,
                      f"{_P}handleRegisterBroker:259; {_M}registerBroker:334", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.BROKER_HEARTBEAT, BROKER_HEARTBEAT_REQUEST, "(none)", None, "(none)", False,
                      f"{_P}handleBrokerHeartbeat:208; DefaultBrokerHeartbeatManager.onBrokerHeartbeat:110",
                      BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_ELECT_MASTER, ELECT_MASTER_REQUEST, "(none)",
                      ELECT_MASTER_RESPONSE,
                      "ElectMasterResponseBody", True,
                      f"{_P}handleControllerElectMaster:177; {_M}electMaster:193", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, ALTER_SYNC_STATE_SET_REQUEST,
                      "SyncStateSet (the new set and the epoch it replaces)", ALTER_SYNC_STATE_SET_RESPONSE,
                      "SyncStateSet (the new set and its epoch)", True,
                      f"{_P}handleAlterSyncStateSet:166; {_M}alterSyncStateSet:110", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_GET_REPLICA_INFO, GET_REPLICA_INFO_REQUEST, "(none)",
                      GET_REPLICA_INFO_RESPONSE, "SyncStateSet", False,
                      f"{_P}handleControllerGetReplicaInfo:194; {_M}getReplicaInfo:368", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, None, "JSON array of broker-set names",
                      None, "BrokerReplicasInfo", False,
                      f"{_P}handleControllerGetSyncStateData:218; {_M}getSyncStateData:387",
                      BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.CONTROLLER_GET_METADATA_INFO, None, "(none)", GET_METADATA_RESPONSE,
                      "(none)", False, f"{_P}handleControllerGetMetadataInfo:204; "
                      "DLedgerController.getControllerMetadata:248", CONTROLLER_RELEASES),
    ControllerCommand(RequestCode.CLEAN_BROKER_DATA, CLEAN_BROKER_DATA_REQUEST, "(none)", None, "(none)",
                      True,
                      f"{_P}handleCleanBrokerData:232; {_M}cleanBrokerData:425", BROKER_ID_RELEASES),
    ControllerCommand(RequestCode.UPDATE_CONTROLLER_CONFIG, None, "Properties text (key=value lines)", None,
                      "(none)", False, f"{_P}handleUpdateControllerConfig:268", CONTROLLER_RELEASES),
    ControllerCommand(RequestCode.GET_CONTROLLER_CONFIG, None, "(none)", None,
                      "Properties text of every setting", False, f"{_P}handleGetControllerConfig:308",
                      CONTROLLER_RELEASES),
)
"""Served by ``ControllerManager.registerProcessor`` (ControllerManager.java:249-264); any other code is
answered 3 REQUEST_CODE_NOT_SUPPORTED (ControllerRequestProcessor.handleRequest:159)."""

CONTROLLER_REQUEST_HEADERS: dict[int, HeaderSpec] = {
    command.code: command.header for command in CONTROLLER_COMMANDS if command.header is not None}
CONTROLLER_RESPONSE_HEADERS: dict[int, HeaderSpec] = {
    command.code: command.answer_header for command in CONTROLLER_COMMANDS
    if command.answer_header is not None}
