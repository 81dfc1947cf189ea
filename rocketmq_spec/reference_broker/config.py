"""Name server and broker settings, under the property names Java's ``broker.conf`` uses.

Operators already have ``broker.conf`` files written for Apache RocketMQ, so the reference broker reads the
same keys (``brokerName``, ``listenPort``, ``storePathRootDir`` ...) and maps each onto a snake_case field.
What happens to each Java key is decided by one table (:mod:`rocketmq_spec.reference_broker.java_keys`):
honoured, refused at start with its reason, or ignored with a warning that names it. A value that cannot
be read stops start-up with the key, the value and what was expected, before any port is bound; keys
nobody knows are warned about, so a typo in a config file never passes unseen.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketmq_spec.reference_broker.java_keys import BY_NAME, Disposition, JavaKey, Owner
from rocketmq_spec.reference_broker.store.config import StoreTunables, parse_delay_levels
from rocketmq_spec.reference_broker.tls import TlsFileError, TlsSettings
from rocketmq_spec.spec.acl_file import ROCKETMQ_HOME_ENV
from rocketmq_spec.spec.behaviour import DEFAULT_BROKER_PORT, DEFAULT_NAMESRV_PORT, FAST_PORT_OFFSET
from rocketmq_spec.spec.broker_identity import CONTROLLER_MODE_DEFAULTS
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.grpc_schema import DEFAULT_PROXY_PORT
from rocketmq_spec.spec.ha import HA_DEFAULTS, HA_PORT_OFFSET, BrokerRole
from rocketmq_spec.spec.ha_autoswitch import AUTOSWITCH_DEFAULTS
from rocketmq_spec.spec.shutdown import SHUTDOWN_WAIT_SECONDS
from rocketmq_spec.spec.store_settings import STORE_DEFAULTS
from rocketmq_spec.spec.system_topics import TRACE_TOPIC
from rocketmq_spec.spec.tls import TLS_KEYS_BY_NAME
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE

log = logging.getLogger(__name__)

GRPC_DISABLED = -1
LOOPBACK = "127.0.0.1"
SOCKET_BACKLOG = 1024
"""Connects the kernel queues for accept: ``serverSocketBacklog``'s default, from the system property
``com.rocketmq.remoting.socket.backlog``. asyncio's own default of 100 makes a burst of connects beyond
it wait for a SYN retransmit, a second or more."""


@dataclass
class NamesrvConfig:
    listen_port: int = DEFAULT_NAMESRV_PORT
    """0 picks a free port."""
    bind_address: str = LOOPBACK
    server_socket_backlog: int = SOCKET_BACKLOG
    """Connects queued for accept (NettyServerConfig's ``serverSocketBacklog``)."""
    enable_shutdown_gracefully: bool = False
    shutdown_wait_time_seconds: int = SHUTDOWN_WAIT_SECONDS
    """With the key above, seconds of GO_AWAY before a 5.2.0+ release stops
    (``rocketmq_spec.spec.shutdown``)."""
    scan_not_active_broker_interval: int | None = None
    """Milliseconds between scans for silent brokers: 5.x's ``NamesrvConfig.scanNotActiveBrokerInterval``,
    which the controller a name server runs reads too (``ControllerConfig`` has the same key), in Java's
    unit so that a Java namesrv.conf means the same here. None: the name server keeps 4.9.8's fixed 10 s
    (``spec.behaviour.BROKER_SCAN_INTERVAL_MS``), the controller its 5 s."""
    broker_channel_expired_time: float = 120.0
    """Seconds without REGISTER_BROKER after which a broker is dropped (``BROKER_CHANNEL_EXPIRED_TIME``)."""
    order_message_enable: bool = False
    """Adds ``orderTopicConf`` from the ORDER_TOPIC_CONFIG KV namespace to route data, as Java does."""
    product_env_name: str = "center"
    """A label Java's name server only reports (GET_NAMESRV_CONFIG) and lets an admin change."""
    kv_config_path: str | None = str(Path.home() / "namesrv" / "kvConfig.json")
    """Where the KV configuration is persisted on every change and read at start (``kvConfigPath``);
    None keeps it in memory only, as an embedded name server does unless given a config."""
    wire_release: str = DEFAULT_RELEASE
    """The Apache RocketMQ release answered as where releases differ on the wire (``wireRelease``)."""
    tls: TlsSettings = dataclasses.field(default_factory=TlsSettings)
    """The ``tls.*`` keys (Java's system properties): TLS on the name server's port."""
    # -- ControllerConfig: the controller a name server runs with enableControllerInNamesrv, or
    # rmq-controller alone (``rocketmq_spec.reference_broker.controller``)
    enable_controller_in_namesrv: bool = False
    controller_d_leger_group: str | None = None
    controller_d_leger_peers: str | None = None
    """``id-ip:port;...``: the controller serves on its own entry's port; with other peers it never leads."""
    controller_d_leger_self_id: str | None = None
    controller_store_path: str | None = None
    """Where the controller's table is kept (None: in memory only)."""
    enable_elect_unclean_master: bool = False
    notify_broker_role_changed: bool = True
    scan_inactive_master_interval: int = 5000
    """ms between the checks for a dead master (``scanInactiveMasterInterval``)."""
    elect_master_max_retry_count: int = 3
    """Elections the controller tries after its master died, until one succeeds."""

    def scan_interval_ms(self, default: int) -> int:
        """``scanNotActiveBrokerInterval`` as given, else ``default``: the name server's and the
        controller's scans read the one key but default differently."""
        given = self.scan_not_active_broker_interval
        return default if given is None else given


@dataclass
class BrokerConfig(StoreTunables):
    broker_name: str = "broker-a"
    wire_release: str = DEFAULT_RELEASE
    """The Apache RocketMQ release answered as where releases differ on the wire (``wireRelease``): its
    version word and request codes, and 5.x behaviour (POP, timer messages) only for a 5.x release."""
    broker_cluster_name: str = "DefaultCluster"
    broker_id: int = 0
    listen_port: int = DEFAULT_BROKER_PORT
    """0 picks a free port P whose P - 2 is free too, so the fast port still sits at ``listenPort - 2``."""
    fast_listen_port: int | None = None
    """None means ``listen_port - 2``; 0 asks for a free port of its own."""
    bind_address: str = LOOPBACK
    server_socket_backlog: int = SOCKET_BACKLOG
    """Connects queued for accept on each listening port (NettyServerConfig's ``serverSocketBacklog``)."""
    enable_shutdown_gracefully: bool = False
    shutdown_wait_time_seconds: int = SHUTDOWN_WAIT_SECONDS
    """With the key above, seconds of GO_AWAY before a 5.2.0+ release stops
    (``rocketmq_spec.spec.shutdown``)."""
    broker_ip1: str = LOOPBACK
    """The address advertised in route data and written as store host."""
    namesrv_addr: str | None = None
    """Semicolon-separated ``host:port`` list of the name servers the broker joins (``namesrvAddr``). None:
    an embedded run (``rmq-broker`` without it, :class:`~reference_broker.embedded.EmbeddedRocketMQ`) starts
    a name server of its own and registers there; a bare :class:`~reference_broker.broker.server.Broker`
    registers nowhere."""
    store_path_root_dir: str = str(Path.home() / "store")
    store_path_commit_log: str | None = None
    """None means ``<storePathRootDir>/commitlog``."""
    flush_disk_type: str = "ASYNC_FLUSH"
    auto_create_topic_enable: bool = True
    auto_create_subscription_group: bool = True
    default_topic_queue_nums: int = 8
    broker_permission: int = 6
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    trace_topic_enable: bool = False
    msg_trace_topic_name: str = TRACE_TOPIC
    region_id: str = "DefaultRegion"
    trace_on: bool = True
    reject_transaction_message: bool = False
    enable_property_filter: bool = False
    """SQL92 filtering is not implemented, so a pull asking for it is refused as a 4.9.8 broker with the
    default ``enablePropertyFilter=false`` refuses it."""
    register_name_server_period: int = 30_000
    """Milliseconds between registrations; Java clamps it to [10000, 60000]."""
    long_polling_enable: bool = True
    revive_queue_num: int = 8
    """5.x ``reviveQueueNum``: queues of the POP revive topic rmq_sys_REVIVE_LOG_<cluster>."""
    revive_interval: int = 1000
    """5.x ``reviveInterval``: milliseconds between two reads of the revive queues."""
    pop_polling_size: int = 1024
    """5.x ``popPollingSize``: POP_MESSAGE / NOTIFICATION requests held per queue before POLLING_FULL."""
    short_polling_time_mills: int = 1000
    channel_expired_timeout: int = 120_000
    """Milliseconds without HEART_BEAT after which a client channel is dropped."""
    client_scan_interval: int = 10_000
    """Milliseconds between scans for silent client channels."""
    lock_max_live_time: int = 60_000
    """Lease of a LOCK_BATCH_MQ lock (``rocketmq.broker.rebalance.lockMaxLiveTime``)."""
    acl_enable: bool = False
    """Check every request against plain_acl.yml (``rocketmq_spec.spec.acl``); the broker will not start
    without one."""
    acl_file: str | None = None
    """The ACL file (Java: ``rocketmq.acl.plain.file`` under ``rocketmq.home.dir``). Unset: $ROCKETMQ_HOME/
    conf/plain_acl.yml, else plain_acl.yml beside the broker.conf that enabled ACL. Files below ``acl/``
    beside it are read too, as Java reads ``conf/acl``."""
    authentication_metadata_provider: str | None = None
    """5.3.0+ ``authenticationMetadataProvider``: with Java's local provider named, the broker keeps users
    (config/users.json) and serves the AUTH_* user commands; unset, they answer SYSTEM_ERROR."""
    authorization_metadata_provider: str | None = None
    """5.3.0+ ``authorizationMetadataProvider``: likewise for ACLs (config/acls.json)."""
    authentication_enabled: bool = False
    """5.3.0+: every request must be signed by a user of the table (RMQ-AUTH-AUTHENTICATE); needs the
    authentication metadata provider and a 5.3.0+ wire release."""
    authentication_whitelist: str | None = None
    """Request codes (comma-separated) that pass unsigned when authentication is on."""
    authorization_enabled: bool = False
    """5.3.0+: every request is checked against the signed user's ACL (RMQ-AUTHZ-DECIDE); needs both
    metadata providers and a 5.3.0+ wire release."""
    authorization_whitelist: str | None = None
    """Request codes (gRPC: request message full names), comma-separated, that are not authorized."""
    init_authentication_user: str | None = None
    """JSON ``{"username": ..., "password": ...}`` of a Super user created at start when absent."""
    flush_consumer_offset_interval: int = 5000
    """Milliseconds between writes of a changed consumerOffset.json."""
    notify_consumer_ids_changed_enable: bool = True
    transaction_time_out: int = 6000
    """Milliseconds a half message waits for END_TRANSACTION before the broker checks it back."""
    transaction_check_max: int = 15
    """Check-backs of one half message before it is discarded to TRANS_CHECK_MAX_TIME_TOPIC."""
    transaction_check_interval: int = 60_000
    """Milliseconds between runs of the transaction check service."""
    lite_pull_message_enable: bool = True
    """5.x ``litePullMessageEnable``: LITE_PULL_MESSAGE is refused with 16 NO_PERMISSION when off."""
    # -- the store: StoreTunables, and these keys the store takes under other names or shapes ----------
    timer_wheel_enable: bool = True
    """5.x timer messages (a 4.9.8 wire release has none, whatever this says)."""
    recall_message_enable: bool = False
    """5.3.2+ ``recallMessageEnable``: RECALL_MESSAGE is refused unless set (the default of 5.3.3/5.5.0)."""
    flush_interval_commit_log: int = STORE_DEFAULTS.flushIntervalCommitLog
    flush_interval_consume_queue: int = STORE_DEFAULTS.flushIntervalConsumeQueue
    flush_delay_offset_interval: int = STORE_DEFAULTS.flushDelayOffsetInterval
    sync_flush_timeout: int = STORE_DEFAULTS.syncFlushTimeout
    broker_role: str = BrokerRole.ASYNC_MASTER.value
    """ASYNC_MASTER, SYNC_MASTER or SLAVE (``rocketmq_spec.spec.ha``); a master registers as brokerId 0."""
    grpc_server_port: int | None = None
    """Port of the gRPC proxy in the broker's process (``ProxyConfig.grpcServerPort``), which the 5.x SDKs
    use. None: 8081, or a free port when ``listen_port`` is 0; 0 picks a free port; -1 serves no gRPC."""
    ha_listen_port: int | None = None
    """None: ``listenPort + 1``, which Java's BrokerStartup imposes whatever broker.conf says (so does
    ``load_config_file``); embedded callers may ask for 0, a free port."""
    ha_master_address: str | None = None
    """A slave's fixed master HA address; None follows the name server's REGISTER_BROKER answer."""
    ha_send_heartbeat_interval: int = HA_DEFAULTS["haSendHeartbeatInterval"]
    ha_housekeeping_interval: int = HA_DEFAULTS["haHousekeepingInterval"]
    ha_transfer_batch_size: int = HA_DEFAULTS["haTransferBatchSize"]
    slave_timeout: int = HA_DEFAULTS["slaveTimeout"]
    slave_read_enable: bool = False
    """Whether pull answers suggest the subscription group's brokerId instead of the master (0)."""
    slave_sync_interval: int = 10_000
    """Milliseconds between a slave's metadata syncs from its master (``SlaveSynchronize``: 10 s)."""
    ha_reconnect_interval: int = 5_000
    """Milliseconds a slave waits before connecting again to its master (``HAClient``: 5 s)."""
    enable_controller_mode: bool = False
    """The broker's id and role come from a controller (``rocketmq_spec.spec.broker_identity``);
    brokerRole and brokerId are then the controller's to set."""
    controller_addr: str = ""
    """Controllers, ``ip:port;ip:port``; the one that leads is asked."""
    sync_broker_metadata_period: int = CONTROLLER_MODE_DEFAULTS["syncBrokerMetadataPeriod"]
    broker_heartbeat_interval: int = CONTROLLER_MODE_DEFAULTS["brokerHeartbeatInterval"]
    controller_heart_beat_timeout_mills: int = CONTROLLER_MODE_DEFAULTS["controllerHeartBeatTimeoutMills"]
    check_sync_state_set_period: int = CONTROLLER_MODE_DEFAULTS["checkSyncStateSetPeriod"]
    ha_max_time_slave_not_catchup: int = int(AUTOSWITCH_DEFAULTS["haMaxTimeSlaveNotCatchup"])
    min_in_sync_replicas: int = int(AUTOSWITCH_DEFAULTS["minInSyncReplicas"])
    """Controller mode: a put that waits for the store needs this many SyncStateSet members."""
    all_ack_in_sync_state_set: bool = AUTOSWITCH_DEFAULTS["allAckInSyncStateSet"] == "true"
    """Controller mode: a put waits for every SyncStateSet member's ack (RMQ-HA2-ALL-ACK)."""
    in_sync_replicas: int = int(AUTOSWITCH_DEFAULTS["inSyncReplicas"])
    """Controller mode without allAckInSyncStateSet: the acks a put waits for, the master's counted."""
    read_un_committed: bool = AUTOSWITCH_DEFAULTS["readUnCommitted"] == "true"
    """Controller mode: dispatch past the confirm offset too (RMQ-HA2-CONFIRM-READ)."""
    tls: TlsSettings = dataclasses.field(default_factory=TlsSettings)
    """The ``tls.*`` keys (Java's system properties): TLS on the broker's, fast and gRPC ports."""

    @property
    def broker_addr(self) -> str:
        return f"{self.broker_ip1}:{self.listen_port}"

    @property
    def role(self) -> BrokerRole:
        return BrokerRole(self.broker_role)

    @property
    def resolved_ha_port(self) -> int:
        if self.ha_listen_port is not None:
            return self.ha_listen_port
        return 0 if self.listen_port == 0 else self.listen_port + HA_PORT_OFFSET

    @property
    def resolved_grpc_port(self) -> int:
        if self.grpc_server_port is not None:
            return self.grpc_server_port
        return 0 if self.listen_port == 0 else DEFAULT_PROXY_PORT

    @property
    def namesrv_addrs(self) -> list[str]:
        return [a.strip() for a in (self.namesrv_addr or "").split(";") if a.strip()]

    @property
    def resolved_fast_port(self) -> int:
        if self.fast_listen_port is not None:
            return self.fast_listen_port
        return 0 if self.listen_port == 0 else self.listen_port - FAST_PORT_OFFSET

    @property
    def config_dir(self) -> Path:
        return Path(self.store_path_root_dir) / "config"


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_case(java_name: str) -> str:
    """``mappedFileSizeCommitLog`` -> ``mapped_file_size_commit_log``; ``brokerIP1`` -> ``broker_ip1``."""
    return _CAMEL_BOUNDARY.sub("_", java_name).lower()


def parse_properties(text: str) -> dict[str, str]:
    """Read the subset of ``java.util.Properties`` syntax that broker.conf files use.

    Comments start with ``#`` or ``!``, a key ends at the first ``=``, ``:`` or whitespace, and a
    trailing backslash continues a line. Unicode escapes are not needed by any broker key and not read.
    """
    result: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if match:
            result[match.group(1)] = match.group(2).strip()
        else:
            result[line] = ""
    return result



class ConfigError(ValueError):
    """A setting that stops start-up: which key, the value given and what was expected instead."""

    def __init__(self, key: str, value: str, expected: str, source: str = "config") -> None:
        super().__init__(f"{source}: {key}={value!r}: expected {expected}")
        self.key = key
        self.value = value
        self.expected = expected


def _read_bool(text: str) -> bool:
    """``true`` or ``false`` in any case; Java's ``Boolean.parseBoolean`` would read any other word as
    false, which hides a typo, so anything else is refused."""
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError(text)
    return lowered == "true"


def _read_hours(text: str) -> str:
    """``deleteWhen``: hours of the day separated by ``;`` (``04``, ``03;15``)."""
    if not all(part.strip().isdigit() and int(part) < 24 for part in text.split(";")):
        raise ValueError(text)
    return text


def _read_single_path(text: str) -> str | None:
    """``storePathCommitLog``: 4.9.8 splits it on ``;`` into several disks, which is not supported here."""
    if ";" in text:
        raise ValueError(text)
    return text or None


_CONVERTERS: dict[str, tuple[Any, str]] = {
    "bool": (_read_bool, "true or false"),
    "int": (int, "an integer"),
    "int | None": (int, "an integer"),
    "float": (float, "a number"),
    "str": (str, "text"),
    "str | None": (lambda text: text or None, "text"),
}
"""Field annotation (a string under ``from __future__ import annotations``) -> reader, what it expects."""

_FIELD_READERS: dict[str, tuple[Any, str]] = {
    "message_delay_level": (lambda text: parse_delay_levels(text) and text, "levels like '1s 5s 10s 1m 2h'"),
    "delete_when": (_read_hours, "hours 00-23 separated by ';' (e.g. 04 or 03;15)"),
    "store_path_commit_log": (_read_single_path, "one directory (several ';'-separated paths are not "
                                                 "supported)"),
}


_POSITIVE = frozenset({
    "mappedFileSizeCommitLog", "mappedFileSizeConsumeQueue", "maxHashSlotNum", "maxIndexNum",
    "maxMessageSize", "flushIntervalCommitLog", "flushIntervalConsumeQueue", "flushDelayOffsetInterval",
    "cleanResourceInterval", "transactionCheckInterval", "flushConsumerOffsetInterval", "clientScanInterval",
    "scanNotActiveBrokerInterval",
})
"""Sizes and the periods of background loops: zero or less would break the store or spin a loop."""


def _field_name(key: JavaKey) -> str:
    return key.field or snake_case(key.name)


def _apply(config: NamesrvConfig | BrokerConfig, key: JavaKey, value: str, source: str) -> None:
    name = _field_name(key)
    kind = str({f.name: f.type for f in dataclasses.fields(config)}[name])
    reader, expected = _FIELD_READERS.get(name) or _CONVERTERS[kind]
    if key.choices:
        if value not in key.choices:
            raise ConfigError(key.name, value, "one of " + ", ".join(key.choices), source)
        reader = str
    try:
        read = reader(value)
    except (ValueError, SpecViolation):
        raise ConfigError(key.name, value, expected, source) from None
    if key.name in _POSITIVE and read <= 0:
        raise ConfigError(key.name, value, "a number above 0", source)
    setattr(config, name, read)


@dataclass
class LoadedConfig:
    """What reading a config file found besides the settings it applied."""

    ignored: list[JavaKey] = dataclasses.field(default_factory=list)
    unknown: list[str] = dataclasses.field(default_factory=list)
    broker_only: list[str] = dataclasses.field(default_factory=list)
    """Keys of a broker's config found in a name server's file."""

    def warn(self) -> None:
        """One warning per ignored or unknown key, once, at start."""
        for key in self.ignored:
            log.warning("config key %s (%s) is ignored by the reference broker: %s", key.name, key.java_class,
                        key.reason)
        for name in self.broker_only:
            log.warning("config key %s is read by a broker, not by a name server: ignored", name)
        for name in self.unknown:
            log.warning("unknown config key %s ignored (neither Apache RocketMQ 4.9.8 nor the reference "
                        "broker reads it)", name)


def apply_properties(properties: dict[str, str], broker: BrokerConfig, namesrv: NamesrvConfig,
                     source: str = "config") -> LoadedConfig:
    """Apply Java-named properties to both configs through the key table.

    Raises ConfigError on the first value that cannot be read or on a refused key; returns the ignored
    and unknown keys for :meth:`LoadedConfig.warn`. ``listenPort`` belongs to the broker (as in Java,
    where the name server has its own file).
    """
    loaded = LoadedConfig()
    for name, raw in properties.items():
        value = raw.strip()
        key = BY_NAME.get(name)
        if name in TLS_KEYS_BY_NAME:  # system properties in Java: both processes read them
            for config in (broker, namesrv):
                try:
                    config.tls.set(name, value)
                except ValueError as exc:
                    raise ConfigError(name, value, str(exc), source) from None
        elif key is None:
            loaded.unknown.append(name)
        elif key.disposition is Disposition.IGNORED:
            loaded.ignored.append(key)
        elif key.disposition is Disposition.REFUSED:
            if not key.accepts(value):
                allowed = " or ".join(key.accepted) or "an empty value"
                raise ConfigError(name, value, f"{allowed} ({key.reason})" if key.accepted else
                                  f"the key to be absent ({key.reason})", source)
        else:
            if key.owner in (Owner.BROKER, Owner.BOTH):
                _apply(broker, key, value, source)
            if key.owner in (Owner.NAMESRV, Owner.BOTH):
                _apply(namesrv, key, value, source)
    return loaded


def load_config_file(path: str | Path, broker: BrokerConfig, namesrv: NamesrvConfig) -> LoadedConfig:
    """Apply a broker.conf to both configs. Raises OSError when the file cannot be read and ConfigError
    when a setting cannot be honoured."""
    text = Path(path).read_text(encoding="utf-8")
    properties = parse_properties(text)
    loaded = apply_properties(properties, broker, namesrv, source=str(path))
    if "aclFile" in properties and broker.acl_file:
        broker.acl_file = str(Path(path).parent / broker.acl_file)
    elif broker.acl_enable and not os.environ.get(ROCKETMQ_HOME_ENV):
        broker.acl_file = str(Path(path).parent / "plain_acl.yml")
    return loaded


def load_namesrv_config_file(path: str | Path, namesrv: NamesrvConfig) -> LoadedConfig:
    """Apply a namesrv.conf (``mqnamesrv -c``): the name server's keys and ``listenPort``, which a
    broker.conf gives the broker. A broker's key there is reported as not read, like an ignored one."""
    properties = parse_properties(Path(path).read_text(encoding="utf-8"))
    port = properties.pop("listenPort", None)
    broker_keys = [name for name in properties if (key := BY_NAME.get(name)) and key.owner is Owner.BROKER
                   and key.disposition is Disposition.HONOURED]
    loaded = apply_properties({name: value for name, value in properties.items() if name not in broker_keys},
                              BrokerConfig(), namesrv, source=str(path))
    if port is not None:
        _apply(namesrv, BY_NAME["listenPort"], port.strip(), str(path))
    loaded.broker_only += broker_keys
    return loaded


def with_tls_file(settings: TlsSettings) -> TlsSettings:
    """``settings`` overridden by the properties file ``tls.config.file`` names, when it exists (Java
    goes on without it). Raises TlsFileError for a file that exists and cannot be read, ConfigError for
    a value in it that cannot be taken."""
    path = Path(settings.config_file)
    if not path.exists():
        return settings
    try:
        properties = parse_properties(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TlsFileError("tls.config.file", settings.config_file, str(exc)) from None
    try:
        return settings.overridden_by(properties)
    except ValueError as exc:
        raise ConfigError("tls.config.file", settings.config_file, str(exc), str(path)) from None


def validate(broker: BrokerConfig) -> None:
    """Checks of settings made in code rather than read from a file, run before any port is bound."""
    positive = sorted(name for name in _POSITIVE if BY_NAME[name].owner is not Owner.NAMESRV)
    for key in ("flushDiskType", "messageDelayLevel", "deleteWhen", "storePathCommitLog", *positive):
        value = getattr(broker, _field_name(BY_NAME[key]))
        if value is not None:
            _apply(dataclasses.replace(broker), BY_NAME[key], str(value), "settings")


__all__ = [
    "DEFAULT_BROKER_PORT",
    "DEFAULT_NAMESRV_PORT",
    "BrokerConfig",
    "ConfigError",
    "LoadedConfig",
    "NamesrvConfig",
    "apply_properties",
    "load_config_file",
    "load_namesrv_config_file",
    "parse_properties",
    "snake_case",
    "validate",
]
