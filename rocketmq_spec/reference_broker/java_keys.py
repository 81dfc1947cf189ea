"""Every key Apache RocketMQ 4.9.8 reads from a broker or name server config file, and what the reference
broker does with it.

A user who copies a Java ``broker.conf`` must never believe a setting took effect when it did not, so
each key has exactly one of three dispositions:

- **honoured**: read into a field of :class:`~reference_broker.config.BrokerConfig` or
  :class:`~reference_broker.config.NamesrvConfig` and acted upon;
- **refused**: start-up stops with a one-line reason, unless the value is one the reference broker
  behaves as anyway (``brokerRole=ASYNC_MASTER``, ``transientStorePoolEnable=false``, ...);
- **ignored**: meaningless here (thread-pool sizes, Netty buffer tuning, statistics); accepted with one
  warning at start that names the key and says why.

The rows are the public fields of 4.9.8's ``BrokerConfig``, ``MessageStoreConfig``, ``NettyServerConfig``,
``NettyClientConfig`` and ``NamesrvConfig`` (which Java fills with ``MixAll.properties2Object``), plus the few
keys of the reference broker's own (``bindAddress``, ...). ``python3 -m
rocketmq_spec.reference_broker.java_keys`` prints the table as Markdown; the copy in ``docs/broker-conf.md``
is generated from it. """

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass

from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.spec.wire_release import SUPPORTED_RELEASES


class Disposition(enum.Enum):
    HONOURED = "honoured"
    REFUSED = "refused"
    IGNORED = "ignored"


class Owner(enum.Enum):
    """Which config object a key fills (in Java, which class ``properties2Object`` finds it on)."""

    BROKER = "broker"
    NAMESRV = "namesrv"
    BOTH = "both"


@dataclass(frozen=True)
class JavaKey:
    name: str
    disposition: Disposition
    java_class: str
    """``BrokerConfig``, ``MessageStoreConfig``, ... or ``reference broker`` for keys of our own."""
    owner: Owner = Owner.BROKER
    reason: str = ""
    field: str | None = None
    """Field name when it is not the key in snake_case (``checkCRCOnRecover`` -> ``check_crc_on_recover``)."""
    accepted: tuple[str, ...] = ()
    """Values a refused key may still have: the ones the reference broker behaves as."""
    choices: tuple[str, ...] = ()
    """For an honoured enum-like key, the values it may take."""

    def accepts(self, value: str) -> bool:
        return value.strip().lower() in {a.lower() for a in self.accepted}


_BC, _MSC, _NSC, _NCC, _NC, _OURS = ("BrokerConfig", "MessageStoreConfig", "NettyServerConfig",
                                     "NettyClientConfig", "NamesrvConfig", "reference broker")
_CC = "ControllerConfig"
_AC = "AuthConfig"
"""5.3.0+: the broker fills it from the same file (``BrokerStartup``)."""


def _honoured(java_class: str, *names: str, owner: Owner = Owner.BROKER) -> list[JavaKey]:
    return [JavaKey(name, Disposition.HONOURED, java_class, owner) for name in names]


def _ignored(java_class: str, reason: str, *names: str, owner: Owner = Owner.BROKER) -> list[JavaKey]:
    return [JavaKey(name, Disposition.IGNORED, java_class, owner, reason) for name in names]


def _refused(java_class: str, reason: str, *names: str, accepted: tuple[str, ...] = ()) -> list[JavaKey]:
    return [JavaKey(name, Disposition.REFUSED, java_class, reason=reason, accepted=accepted)
            for name in names]


def _fixed(java_class: str, name: str, default: str, reason: str) -> JavaKey:
    """A key the reference broker implements only at Java's default: any other value is refused."""
    return JavaKey(name, Disposition.REFUSED, java_class, reason=reason, accepted=(default,))


_THREADS = "thread-pool sizing: one asyncio event loop serves every request"
_QUEUES = "request queue capacity: a connection with too many requests pending is answered SYSTEM_BUSY"
_NETTY = "Netty tuning with no counterpart in asyncio"
_STATS = "statistics the reference broker does not keep"
_UNREAD = "4.9.8 itself never reads it"
_FLUSH = "flush batching: each flush interval writes back everything dirty"
_DISK_READ = "every message is read as if in memory (no disk-read limits)"
_DLEDGER = "DLedger commitlog is not supported"
_NS_CLIENT = "the broker's name-server client: connects and retries with fixed settings"

KEYS: tuple[JavaKey, ...] = (
    # -- BrokerConfig --------------------------------------------------------------------------------
    JavaKey("rocketmqHome", Disposition.IGNORED, _BC, Owner.BOTH, "locates a Java install and its logging"),
    *_honoured(_BC, "namesrvAddr", "brokerName", "brokerClusterName", "brokerId", "brokerPermission",
               "defaultTopicQueueNums", "autoCreateTopicEnable", "clusterTopicEnable", "brokerTopicEnable",
               "autoCreateSubscriptionGroup", "msgTraceTopicName", "traceTopicEnable",
               "flushConsumerOffsetInterval", "rejectTransactionMessage", "longPollingEnable",
               "shortPollingTimeMills", "notifyConsumerIdsChangedEnable", "regionId",
               "registerNameServerPeriod", "traceOn", "transactionTimeOut", "transactionCheckMax",
               "transactionCheckInterval"),
    JavaKey("brokerIP1", Disposition.HONOURED, _BC, field="broker_ip1"),
    JavaKey("brokerIP2", Disposition.IGNORED, _BC,
            reason="Java advertises it as the HA address; the reference broker advertises brokerIP1"),
    _fixed(_BC, "messageStorePlugIn", "", "store plug-ins are Java classes"),
    *_ignored(_BC, _THREADS, "sendMessageThreadPoolNums", "putMessageFutureThreadPoolNums",
              "pullMessageThreadPoolNums", "processReplyMessageThreadPoolNums", "queryMessageThreadPoolNums",
              "adminBrokerThreadPoolNums", "clientManageThreadPoolNums", "consumerManageThreadPoolNums",
              "heartbeatThreadPoolNums", "endTransactionThreadPoolNums"),
    *_ignored(_BC, _QUEUES, "sendThreadPoolQueueCapacity", "putThreadPoolQueueCapacity",
              "pullThreadPoolQueueCapacity", "replyThreadPoolQueueCapacity", "queryThreadPoolQueueCapacity",
              "clientManagerThreadPoolQueueCapacity", "consumerManagerThreadPoolQueueCapacity",
              "heartbeatThreadPoolQueueCapacity", "endTransactionPoolQueueCapacity",
              "brokerFastFailureEnable",
              "waitTimeMillsInSendQueue", "waitTimeMillsInPullQueue", "waitTimeMillsInHeartbeatQueue",
              "waitTimeMillsInTransactionQueue"),
    *_ignored(_BC, _UNREAD, "flushConsumerOffsetHistoryInterval", "filterServerNums", "highSpeedMode",
              "commercialEnable", "commercialTimerCount", "commercialTransCount", "commercialBigCount",
              "maxDelayTime"),
    *_ignored(_BC, _STATS, "commercialBaseCount", "enableDetailStat", "autoDeleteUnusedStats"),
    _fixed(_BC, "fetchNamesrvAddrByAddressServer", "false",
           "the HTTP name-server address service is not used"),
    *_ignored(_BC, "bodies are always copied into the response", "transferMsgByHeap"),
    *_ignored(_BC, _NS_CLIENT, "registerBrokerTimeoutMills", "compressedRegister", "forceRegister"),
    *_honoured(_BC, "slaveReadEnable"),
    _fixed(_BC, "disableConsumeIfConsumerReadSlowly", "false",
           "consumers are never cut off for reading slowly"),
    *_ignored(_BC, "only with disableConsumeIfConsumerReadSlowly=true", "consumerFallbehindThreshold"),
    _fixed(_BC, "startAcceptSendRequestTimeStamp", "0", "sends are accepted as soon as the broker starts"),
    _fixed(_BC, "enableCalcFilterBitMap", "false", "bit-map filtering (consume queue ext) is not supported"),
    *_ignored(_BC, "only with enableCalcFilterBitMap=true", "expectConsumerNumUseFilter",
              "maxErrorRateOfBloomFilter", "filterDataCleanTimeSpan"),
    _fixed(_BC, "filterSupportRetry", "false", "SQL92 filtering is not supported"),
    _fixed(_BC, "enablePropertyFilter", "false", "SQL92 filtering is not supported"),
    JavaKey("aclEnable", Disposition.HONOURED, _BC, reason="ACL 1.0, as in releases up to 5.3.2: with "
            "wireRelease 5.3.3 or 5.5.0 it is read by nothing, as in Apache RocketMQ from 5.3.3"),
    *_ignored(_BC, "request-reply (SEND_REPLY_MESSAGE) is not served", "storeReplyMessageEnable"),
    *_ignored(_BC, "logging layout", "isolateLogEnable"),
    JavaKey("configBlackList", Disposition.IGNORED, _BC, Owner.BOTH,
            "guards UPDATE_BROKER_CONFIG, which does not rewrite a config file here"),
    # -- NettyServerConfig / NettyClientConfig --------------------------------------------------------
    *_honoured(_NSC, "listenPort"),
    *_ignored(_NSC, _THREADS, "serverWorkerThreads", "serverCallbackExecutorThreads",
              "serverSelectorThreads"),
    *_ignored(_NSC, _NETTY, "serverOnewaySemaphoreValue", "serverAsyncSemaphoreValue",
              "serverSocketSndBufSize",
              "serverSocketRcvBufSize", "writeBufferHighWaterMark", "writeBufferLowWaterMark",
              "serverPooledByteBufAllocatorEnable", "useEpollNativeSelector"),
    _fixed(_NSC, "serverChannelMaxIdleTimeSeconds", "120", "idle connections are closed after 120 s"),
    *_honoured(_NSC, "serverSocketBacklog", "enableShutdownGracefully", "shutdownWaitTimeSeconds",
               owner=Owner.BOTH),
    *_ignored(_NCC, _NS_CLIENT, "clientWorkerThreads", "clientCallbackExecutorThreads",
              "clientOnewaySemaphoreValue", "clientAsyncSemaphoreValue", "connectTimeoutMillis",
              "channelNotActiveInterval", "clientChannelMaxIdleTimeSeconds", "clientSocketSndBufSize",
              "clientSocketRcvBufSize", "clientPooledByteBufAllocatorEnable", "clientCloseSocketIfTimeout"),
    _fixed(_NCC, "useTLS", "false", "the broker's own connections use TLS as tls.enable or "
           "tls.server.mode=enforcing say (the tls.* keys below)"),
    # -- MessageStoreConfig ---------------------------------------------------------------------------
    *_honoured(_MSC, "storePathRootDir", "storePathCommitLog", "mappedFileSizeCommitLog",
               "mappedFileSizeConsumeQueue", "flushIntervalCommitLog", "flushIntervalConsumeQueue",
               "cleanResourceInterval", "deleteCommitLogFilesInterval", "deleteConsumeQueueFilesInterval",
               "deleteWhen",
               "diskMaxUsedSpaceRatio", "fileReservedTime", "maxMessageSize",
               "maxTransferBytesOnMessageInMemory", "maxTransferCountOnMessageInMemory", "messageIndexEnable",
               "maxHashSlotNum", "maxIndexNum", "maxMsgsNumBatch", "syncFlushTimeout", "messageDelayLevel",
               "flushDelayOffsetInterval", "cleanFileForciblyEnable", "defaultQueryMaxNum"),
    JavaKey("checkCRCOnRecover", Disposition.HONOURED, _MSC, field="check_crc_on_recover"),
    JavaKey("flushDiskType", Disposition.HONOURED, _MSC, choices=("ASYNC_FLUSH", "SYNC_FLUSH")),
    *_refused(_MSC, _DLEDGER, "storePathDLedgerCommitLog", "dLegerGroup", "dLegerPeers", "dLegerSelfId",
              "preferredLeaderId"),
    _fixed(_MSC, "enableDLegerCommitLog", "false", _DLEDGER),
    *_refused(_MSC, "read-only commitlog paths are not supported", "readOnlyCommitLogStorePaths"),
    _fixed(_MSC, "enableConsumeQueueExt", "false", "the consume queue ext is not written"),
    *_ignored(_MSC, "only with enableConsumeQueueExt=true", "mappedFileSizeConsumeQueueExt",
              "bitMapLengthConsumeQueueExt"),
    _fixed(_MSC, "transientStorePoolEnable", "false", "the off-heap write buffer is not used"),
    *_ignored(_MSC, "only with transientStorePoolEnable=true", "commitIntervalCommitLog",
              "commitCommitLogLeastPages", "commitCommitLogThoroughInterval", "transientStorePoolSize",
              "fastFailIfNoBufferInStorePool"),
    *_ignored(_MSC, "files have no reference counts here: a deleted file is unlinked at once and unmapped at "
              "the next clean round", "destroyMapedFileIntervalForcibly", "redeleteHangedFileInterval"),
    *_ignored(_MSC, "puts are serialised by one lock of its own kind", "useReentrantLockWhenPutMessage"),
    *_ignored(_MSC, _FLUSH, "flushCommitLogTimed", "flushCommitLogLeastPages",
              "flushLeastPagesWhenWarmMapedFile", "flushConsumeQueueLeastPages",
              "flushCommitLogThoroughInterval", "flushConsumeQueueThoroughInterval"),
    *_ignored(_MSC, _DISK_READ, "maxTransferBytesOnMessageInDisk", "maxTransferCountOnMessageInDisk",
              "accessMessageInMemoryMaxRatio"),
    *_ignored(_MSC, _UNREAD, "putMsgIndexHightWater", "isEnableBatchPush"),
    *_ignored(_MSC, "the index is always rebuilt past the last flushed entry", "messageIndexSafe"),
    *_honoured(_MSC, "timerWheelEnable", "timerPrecisionMs", "timerMaxDelaySec"),  # 5.x keys
    *_honoured(_BC, "reviveQueueNum", "reviveInterval", "popPollingSize", "recallMessageEnable",
               "litePullMessageEnable"),  # 5.x keys
    JavaKey("authenticationMetadataProvider", Disposition.HONOURED, _AC,
            choices=(LOCAL_AUTHENTICATION_PROVIDER,)),  # 5.3.0+: users for the AUTH_* commands
    JavaKey("authorizationMetadataProvider", Disposition.HONOURED, _AC,
            choices=(LOCAL_AUTHORIZATION_PROVIDER,)),  # 5.3.0+: ACLs for the AUTH_* commands
    *_honoured(_AC, "authenticationEnabled", "authenticationWhitelist", "initAuthenticationUser",
               "authorizationEnabled", "authorizationWhitelist"),  # 5.3.0+
    *_honoured(_MSC, "haSendHeartbeatInterval", "haHousekeepingInterval", "haTransferBatchSize",
               "haMasterAddress", "haSlaveFallbehindMax", "slaveTimeout"),
    JavaKey("haListenPort", Disposition.IGNORED, _MSC,
            reason="Java's BrokerStartup sets it to listenPort + 1 whatever the file says, and so does "
                   "the reference broker"),
    JavaKey("brokerRole", Disposition.HONOURED, _MSC, choices=("ASYNC_MASTER", "SYNC_MASTER", "SLAVE")),
    _fixed(_MSC, "offsetCheckInSlave", "false", "a slave leaves offset corrections to its master"),
    *_ignored(_MSC, "store files are created sparse and mapped, never pre-touched", "warmMapedFileEnable"),
    *_ignored(_MSC, "lock diagnostics", "debugLockEnable"),
    _fixed(_MSC, "duplicationEnable", "false", "re-dispatch from the confirm offset is not supported"),
    *_ignored(_MSC, _STATS, "diskFallRecorded", "enableScheduleMessageStats"),
    *_ignored(_MSC, "no page-cache busy detection: puts never answer OS_PAGECACHE_BUSY",
              "osPageCacheBusyTimeOutMills"),
    _fixed(_MSC, "enableLmq", "false", "light message queues are not supported"),
    _fixed(_MSC, "enableMultiDispatch", "false", "multi-dispatch (LMQ) is not supported"),
    *_ignored(_MSC, "only with enableLmq=true", "maxLmqConsumeQueueNum"),
    *_ignored(_MSC, "delivery of due delayed messages is synchronous here", "enableScheduleAsyncDeliver",
              "scheduleAsyncDeliverMaxPendingLimit", "scheduleAsyncDeliverMaxResendNum2Blocked"),
    # -- NamesrvConfig --------------------------------------------------------------------------------
    *_honoured(_NC, "kvConfigPath", "orderMessageEnable", "productEnvName", "scanNotActiveBrokerInterval",
               owner=Owner.NAMESRV),
    *_ignored(_NC, "UPDATE_NAMESRV_CONFIG changes are not written back to a file", "configStorePath",
              owner=Owner.NAMESRV),
    JavaKey("clusterTest", Disposition.REFUSED, _NC, Owner.NAMESRV, "cluster-test routes are not supported",
            accepted=("false",)),
    # -- ControllerConfig: read by a name server with enableControllerInNamesrv=true, and rmq-controller --
    *_honoured(_NC, "enableControllerInNamesrv", owner=Owner.NAMESRV),
    *(JavaKey(name, Disposition.HONOURED, _CC, Owner.NAMESRV, field=field) for name, field in (
        ("controllerDLegerGroup", "controller_d_leger_group"),
        ("controllerDLegerPeers", "controller_d_leger_peers"),
        ("controllerDLegerSelfId", "controller_d_leger_self_id"))),
    *_honoured(_CC, "controllerStorePath", "enableElectUncleanMaster", "notifyBrokerRoleChanged",
               "scanInactiveMasterInterval", "electMasterMaxRetryCount", owner=Owner.NAMESRV),
    _fixed(_CC, "controllerType", "DLedger", "a lone controller: neither DLedger nor JRaft replication"),
    *_ignored(_CC, _THREADS, "controllerThreadPoolNums", "controllerRequestThreadPoolQueueCapacity",
              owner=Owner.NAMESRV),
    *_ignored(_CC, "the controller keeps its table in one JSON file, not a DLedger log", "mappedFileSize",
              owner=Owner.NAMESRV),
    # -- ProxyConfig: the gRPC proxy the broker runs in its process (local mode) ----------------------
    *_honoured("ProxyConfig", "grpcServerPort"),
    # -- BrokerConfig 5.x: controller mode (rocketmq_spec.spec.broker_identity) -------------------------
    *_honoured(_BC, "enableControllerMode", "controllerAddr", "syncBrokerMetadataPeriod",
               "brokerHeartbeatInterval", "controllerHeartBeatTimeoutMills", "checkSyncStateSetPeriod"),
    *_honoured(_MSC, "haMaxTimeSlaveNotCatchup", "minInSyncReplicas", "allAckInSyncStateSet",
               "inSyncReplicas", "readUnCommitted"),
    # -- the reference broker's own keys --------------------------------------------------------------
    *_honoured(_OURS, "bindAddress", owner=Owner.BOTH),
    JavaKey("wireRelease", Disposition.HONOURED, _OURS, Owner.BOTH, choices=SUPPORTED_RELEASES),
    *_honoured(_OURS, "aclFile"),
    *_honoured(_OURS, "fastListenPort", "channelExpiredTimeout", "clientScanInterval", "lockMaxLiveTime",
               "diskSpaceWarningLevelRatio", "diskSpaceCleanForciblyRatio", "haReconnectInterval"),
    *_honoured(_OURS, "brokerChannelExpiredTime", owner=Owner.NAMESRV),
)

BY_NAME: dict[str, JavaKey] = {key.name: key for key in KEYS}
if len(BY_NAME) != len(KEYS):
    raise AssertionError("a key appears twice in reference_broker.java_keys.KEYS")


def markdown() -> str:
    """The table as ``docs/broker-conf.md`` shows it: a count per disposition, then one row per key grouped
    by it."""
    counts = ", ".join(f"{sum(k.disposition is d for k in KEYS)} {d.value}" for d in Disposition)
    lines = [f"{len(KEYS)} keys: {counts}.", "", "| key | Java class | disposition | note |",
             "|---|---|---|---|"]
    for disposition in Disposition:
        for key in sorted((k for k in KEYS if k.disposition is disposition), key=lambda k: k.name.lower()):
            note = key.reason
            if key.choices:
                note = "one of " + ", ".join(key.choices)
            if key.disposition is Disposition.REFUSED:
                allowed = " or ".join(key.accepted) or "empty"
                note = f"{note}; allowed: only {allowed}" if key.accepted else note
            lines.append(f"| `{key.name}` | {key.java_class} | {disposition.value} | {note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
