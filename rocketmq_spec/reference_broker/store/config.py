"""The message store's settings, under the meaning (and defaults) of Java's ``MessageStoreConfig``.

The store is a library the broker embeds, so it gets its own small settings object instead of reading
the broker's: tests build stores with tiny file sizes and short delay levels without a broker around,
and :meth:`StoreConfig.from_broker` maps the broker.conf-driven settings onto it in one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Protocol

from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE, DELAY_LEVELS, delay_level_ms
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.ha import HA_DEFAULTS, BrokerRole
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from rocketmq_spec.spec.store_settings import STORE_DEFAULTS
from rocketmq_spec.spec.timer import TIMER_MAX_DELAY_SEC, TIMER_PRECISION_MS
from rocketmq_spec.spec.wire_release import wire_release


class FlushDiskType(enum.Enum):
    ASYNC_FLUSH = "ASYNC_FLUSH"
    SYNC_FLUSH = "SYNC_FLUSH"


def parse_delay_levels(text: str) -> tuple[int, ...]:
    """Milliseconds per delay level; a malformed level string is refused at start, not at the first
    delayed put."""
    count = len(text.split())
    if not count:
        raise SpecViolation("messageDelayLevel has no levels", expected="at least one level", seen=text)
    try:
        return tuple(delay_level_ms(level, text) for level in range(1, count + 1))
    except (KeyError, ValueError):
        raise SpecViolation("malformed messageDelayLevel", expected="tokens like 5s, 1m, 2h, 1d",
                            seen=text) from None


class BrokerSettings(Protocol):
    """The part of the broker's settings the store reads
    (``rocketmq_spec.reference_broker.config.BrokerConfig``), which is a :class:`StoreTunables` too: those
    fields are copied from it as well."""

    store_path_root_dir: str
    store_path_commit_log: str | None
    flush_disk_type: str
    broker_ip1: str
    listen_port: int
    broker_cluster_name: str
    sync_flush_timeout: int
    flush_interval_commit_log: int
    flush_interval_consume_queue: int
    flush_delay_offset_interval: int
    broker_role: str
    slave_timeout: int
    timer_wheel_enable: bool
    wire_release: str


@dataclass(kw_only=True)
class StoreTunables:
    """The MessageStoreConfig keys a broker.conf sets and the store reads under the same name, declared
    once: :class:`StoreConfig` and the broker's ``BrokerConfig`` both derive from it, so a key added here
    is read from broker.conf and reaches the store without a second declaration."""

    mapped_file_size_commit_log: int = STORE_DEFAULTS.mappedFileSizeCommitLog
    mapped_file_size_consume_queue: int = STORE_DEFAULTS.mappedFileSizeConsumeQueue
    max_hash_slot_num: int = STORE_DEFAULTS.maxHashSlotNum
    max_index_num: int = STORE_DEFAULTS.maxIndexNum
    message_index_enable: bool = STORE_DEFAULTS.messageIndexEnable
    message_delay_level: str = DELAY_LEVELS
    """Delay per level for DELAY and consumer retries; tests shorten it so a retry arrives in seconds."""
    max_message_size: int = STORE_DEFAULTS.maxMessageSize
    check_crc_on_recover: bool = STORE_DEFAULTS.checkCRCOnRecover
    max_transfer_bytes_on_message_in_memory: int = STORE_DEFAULTS.maxTransferBytesOnMessageInMemory
    max_transfer_count_on_message_in_memory: int = STORE_DEFAULTS.maxTransferCountOnMessageInMemory
    max_msgs_num_batch: int = STORE_DEFAULTS.maxMsgsNumBatch
    default_query_max_num: int = STORE_DEFAULTS.defaultQueryMaxNum
    # -- retention (CleanCommitLogService / CleanConsumeQueueService) -------------------------------
    delete_when: str = STORE_DEFAULTS.deleteWhen
    file_reserved_time: int = STORE_DEFAULTS.fileReservedTime
    disk_max_used_space_ratio: int = STORE_DEFAULTS.diskMaxUsedSpaceRatio
    clean_resource_interval: int = STORE_DEFAULTS.cleanResourceInterval
    delete_commit_log_files_interval: int = STORE_DEFAULTS.deleteCommitLogFilesInterval
    delete_consume_queue_files_interval: int = STORE_DEFAULTS.deleteConsumeQueueFilesInterval
    clean_file_forcibly_enable: bool = STORE_DEFAULTS.cleanFileForciblyEnable
    disk_space_warning_level_ratio: float = STORE_DEFAULTS.diskSpaceWarningLevelRatio
    disk_space_clean_forcibly_ratio: float = STORE_DEFAULTS.diskSpaceCleanForciblyRatio
    ha_slave_fallbehind_max: int = HA_DEFAULTS["haSlaveFallbehindMax"]
    timer_precision_ms: int = TIMER_PRECISION_MS
    timer_max_delay_sec: int = TIMER_MAX_DELAY_SEC


@dataclass
class StoreConfig(StoreTunables):
    root_dir: Path
    store_host: tuple[str, int] = ("127.0.0.1", 10911)
    """Written into every record (STOREHOSTADDRESS) and into offsetMsgIds: the broker's ip1:listenPort."""
    cluster_name: str = "DefaultCluster"
    """Value of the CLUSTER property the broker adds to every message it accepts from a producer."""
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    index_tag_key: bool = False
    """RMQ-IDX-KEYS by release: since 5.4.0 a tagged record is indexed under topic#T#TAGS too, and
    QUERY_MESSAGE with indexType T looks that key up."""
    sync_flush_timeout_ms: int = STORE_DEFAULTS.syncFlushTimeout
    flush_interval_commit_log_ms: int = STORE_DEFAULTS.flushIntervalCommitLog
    flush_interval_consume_queue_ms: int = STORE_DEFAULTS.flushIntervalConsumeQueue
    flush_delay_offset_interval_ms: int = STORE_DEFAULTS.flushDelayOffsetInterval
    batch_keeps_own_properties: bool = False
    """RMQ-CL-BATCH-PROPERTIES by release: since 5.4.0 a batch record keeps its own properties alone."""
    commit_log_dir: Path | None = None
    """``storePathCommitLog``; None means ``<root_dir>/commitlog``."""
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    """A SLAVE store takes records only from its master; a SYNC_MASTER put waits for a slave's ack."""
    slave_timeout_ms: int = HA_DEFAULTS["slaveTimeout"]
    timer_wheel_enable: bool = False
    """5.x timer messages (``timerWheelEnable``); a store made without a 5.x broker reads none."""
    delay_levels_ms: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.root_dir = Path(self.root_dir)
        if self.commit_log_dir is not None:
            self.commit_log_dir = Path(self.commit_log_dir)
        self.flush_disk_type = FlushDiskType(self.flush_disk_type)
        self.broker_role = BrokerRole(self.broker_role)
        # getMappedFileSizeConsumeQueue: a whole number of 20-byte entries, rounded up
        entries = -(-self.mapped_file_size_consume_queue // CQ_ENTRY_SIZE)
        self.mapped_file_size_consume_queue = entries * CQ_ENTRY_SIZE
        self.delay_levels_ms = parse_delay_levels(self.message_delay_level)

    @classmethod
    def from_broker(cls, broker: BrokerSettings) -> StoreConfig:
        """The store's view of the broker's settings: the :class:`StoreTunables` are copied, the rest
        mapped."""
        same = {f.name: getattr(broker, f.name) for f in fields(StoreTunables)}
        return cls(
            **same,
            broker_role=BrokerRole(broker.broker_role),
            root_dir=Path(broker.store_path_root_dir),
            commit_log_dir=Path(broker.store_path_commit_log) if broker.store_path_commit_log else None,
            store_host=(broker.broker_ip1, broker.listen_port),
            cluster_name=broker.broker_cluster_name,
            flush_disk_type=FlushDiskType(broker.flush_disk_type),
            sync_flush_timeout_ms=broker.sync_flush_timeout,
            flush_interval_commit_log_ms=broker.flush_interval_commit_log,
            flush_interval_consume_queue_ms=broker.flush_interval_consume_queue,
            flush_delay_offset_interval_ms=broker.flush_delay_offset_interval,
            slave_timeout_ms=broker.slave_timeout,
            timer_wheel_enable=broker.timer_wheel_enable and not broker.wire_release.startswith("4."),
            batch_keeps_own_properties=holds(Rule.BATCH_KEEPS_OWN_PROPERTIES,
                                             wire_release(broker.wire_release).version),
            index_tag_key=holds(Rule.INDEX_TAG_KEY, wire_release(broker.wire_release).version),
        )

    @property
    def commit_log_path(self) -> Path:
        return self.commit_log_dir if self.commit_log_dir is not None else self.root_dir / COMMITLOG_DIR

    @property
    def max_delay_level(self) -> int:
        return len(self.delay_levels_ms)
