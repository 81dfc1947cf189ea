"""Name server and broker settings, under the property names Java's ``broker.conf`` uses.

Operators already have ``broker.conf`` files written for Apache RocketMQ, so the reference broker reads
the same keys (``brokerName``, ``listenPort``, ``storePathRootDir`` ...) and maps each onto a snake_case
field. Keys Java knows but that change nothing here are accepted quietly enough to be noticed (a
warning), and keys nobody knows are warned about too: a typo in a config file must never pass unseen.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec.consumequeue import DELAY_LEVELS

log = logging.getLogger(__name__)

DEFAULT_NAMESRV_PORT = 9876
DEFAULT_BROKER_PORT = 10911
FAST_PORT_OFFSET = 2
"""Java's fast ("VIP") remoting server listens on ``listenPort - 2``."""
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
    scan_not_active_broker_interval: float = 10.0
    """Seconds between scans for silent brokers (4.9.8: every 10 s)."""
    broker_channel_expired_time: float = 120.0
    """Seconds without REGISTER_BROKER after which a broker is dropped (``BROKER_CHANNEL_EXPIRED_TIME``)."""
    order_message_enable: bool = False
    """Adds ``orderTopicConf`` from the ORDER_TOPIC_CONFIG KV namespace to route data, as Java does."""


@dataclass
class BrokerConfig:
    broker_name: str = "broker-a"
    broker_cluster_name: str = "DefaultCluster"
    broker_id: int = 0
    listen_port: int = DEFAULT_BROKER_PORT
    """0 picks a free port P whose P - 2 is free too, so the fast port still sits at ``listenPort - 2``."""
    fast_listen_port: int | None = None
    """None means ``listen_port - 2``; 0 asks for a free port of its own."""
    bind_address: str = LOOPBACK
    server_socket_backlog: int = SOCKET_BACKLOG
    """Connects queued for accept on each listening port (NettyServerConfig's ``serverSocketBacklog``)."""
    broker_ip1: str = LOOPBACK
    """The address advertised in route data and written as store host."""
    namesrv_addr: str | None = f"{LOOPBACK}:{DEFAULT_NAMESRV_PORT}"
    """Semicolon-separated ``host:port`` list; None registers nowhere."""
    store_path_root_dir: str = str(Path.home() / "store")
    flush_disk_type: str = "ASYNC_FLUSH"
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    mapped_file_size_consume_queue: int = 300_000 * 20
    max_hash_slot_num: int = 5_000_000
    max_index_num: int = 5_000_000 * 4
    message_delay_level: str = DELAY_LEVELS
    """Delay per level for DELAY and consumer retries; tests shorten it so a retry arrives in seconds."""
    auto_create_topic_enable: bool = True
    auto_create_subscription_group: bool = True
    default_topic_queue_nums: int = 8
    broker_permission: int = 6
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    trace_topic_enable: bool = False
    msg_trace_topic_name: str = "RMQ_SYS_TRACE_TOPIC"
    region_id: str = "DefaultRegion"
    trace_on: bool = True
    reject_transaction_message: bool = False
    enable_property_filter: bool = False
    """SQL92 filtering is not implemented, so a pull asking for it is refused as a 4.9.8 broker with the
    default ``enablePropertyFilter=false`` refuses it."""
    register_name_server_period: int = 30_000
    """Milliseconds between registrations; Java clamps it to [10000, 60000]."""
    long_polling_enable: bool = True
    short_polling_time_mills: int = 1000
    channel_expired_timeout: int = 120_000
    """Milliseconds without HEART_BEAT after which a client channel is dropped."""
    client_scan_interval: int = 10_000
    """Milliseconds between scans for silent client channels."""
    lock_max_live_time: int = 60_000
    """Lease of a LOCK_BATCH_MQ lock (``rocketmq.broker.rebalance.lockMaxLiveTime``)."""

    @property
    def broker_addr(self) -> str:
        return f"{self.broker_ip1}:{self.listen_port}"

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


INERT_JAVA_KEYS = frozenset({
    "brokerRole", "deleteWhen", "fileReservedTime", "brokerIP2", "haListenPort", "rocketmqHome",
    "storePathCommitLog", "storePathConsumeQueue", "storePathIndex", "sendMessageThreadPoolNums",
    "pullMessageThreadPoolNums", "useReentrantLockWhenPutMessage", "waitTimeMillsInSendQueue",
    "diskMaxUsedSpaceRatio", "transientStorePoolEnable", "slaveReadEnable", "aclEnable",
})
"""Java keys that are valid in a broker.conf but have no effect on the reference broker."""

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


def _read_bool(text: str) -> bool:
    """Java's ``Boolean.parseBoolean``: anything but a case-insensitive "true" is false."""
    return text.lower() == "true"


_CONVERTERS: dict[str, Any] = {
    "bool": _read_bool,
    "int": int,
    "int | None": int,
    "float": float,
    "str": str,
    "str | None": lambda text: text or None,
}
"""Field annotations are strings under ``from __future__ import annotations``; keyed by that text."""


def apply_properties(config: NamesrvConfig | BrokerConfig, properties: dict[str, str]) -> list[str]:
    """Set each property that names a field of ``config``; return the keys that were not applied.

    The caller decides what to do with the leftovers because ``rmq-broker -c`` reads one file for both
    the name server and the broker, and a key is only unknown if neither of them takes it.
    """
    kinds = {f.name: f.type for f in dataclasses.fields(config)}
    leftovers = []
    for key, value in properties.items():
        name = snake_case(key)
        if name not in kinds:
            leftovers.append(key)
            continue
        try:
            setattr(config, name, _CONVERTERS[str(kinds[name])](value.strip()))
        except ValueError:
            log.warning("config key %s: cannot read %r as %s; keeping %r", key, value, kinds[name],
                        getattr(config, name))
    return leftovers


def warn_unapplied(keys: list[str]) -> list[str]:
    """Log every key that changed nothing; returns the keys nobody knows (inert Java keys excluded)."""
    unknown = []
    for key in keys:
        if key in INERT_JAVA_KEYS:
            log.warning("config key %s is valid for Apache RocketMQ but has no effect here", key)
        else:
            log.warning("unknown config key %s ignored", key)
            unknown.append(key)
    return unknown


def load_config_file(path: str | Path, broker: BrokerConfig, namesrv: NamesrvConfig) -> list[str]:
    """Apply a broker.conf to both configs; returns the unknown keys (already warned about).

    ``listenPort`` belongs to the broker (as in Java, where the name server has its own file), so the
    name server only takes the keys the broker does not.
    """
    properties = parse_properties(Path(path).read_text(encoding="utf-8"))
    broker_rest = apply_properties(broker, properties)
    namesrv_rest = apply_properties(namesrv, {k: properties[k] for k in broker_rest})
    return warn_unapplied(namesrv_rest)


__all__ = [
    "DEFAULT_BROKER_PORT",
    "DEFAULT_NAMESRV_PORT",
    "BrokerConfig",
    "NamesrvConfig",
    "apply_properties",
    "load_config_file",
    "parse_properties",
    "snake_case",
]

