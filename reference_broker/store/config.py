"""The message store's settings, under the meaning (and defaults) of Java's ``MessageStoreConfig``.

The store is a library the broker embeds, so it gets its own small settings object instead of reading
the broker's: tests build stores with tiny file sizes and short delay levels without a broker around,
and :meth:`StoreConfig.from_broker` maps the broker.conf-driven settings onto it in one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from spec.consumequeue import DELAY_LEVELS, delay_level_ms
from spec.errors import SpecViolation
from spec.ha import HA_DEFAULTS, BrokerRole


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
    """The part of the broker's settings the store reads (``reference_broker.config.BrokerConfig``)."""

    store_path_root_dir: str
    flush_disk_type: str
    mapped_file_size_commit_log: int
    mapped_file_size_consume_queue: int
    max_hash_slot_num: int
    max_index_num: int
    message_delay_level: str
    broker_ip1: str
    listen_port: int
    broker_cluster_name: str
    broker_role: str
    sync_flush_timeout: int
    slave_timeout: int
    ha_slave_fallbehind_max: int


@dataclass
class StoreConfig:
    root_dir: Path
    store_host: tuple[str, int] = ("127.0.0.1", 10911)
    """Written into every record (STOREHOSTADDRESS) and into offsetMsgIds: the broker's ip1:listenPort."""
    cluster_name: str = "DefaultCluster"
    """Value of the CLUSTER property the broker adds to every message it accepts from a producer."""
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    mapped_file_size_consume_queue: int = 300_000 * 20
    max_hash_slot_num: int = 5_000_000
    max_index_num: int = 5_000_000 * 4
    message_index_enable: bool = True
    sync_flush_timeout_ms: int = 5000
    """How long a SYNC_FLUSH put with WAIT=true waits for its flush before answering FLUSH_DISK_TIMEOUT."""
    flush_interval_commit_log_ms: int = 500
    flush_interval_consume_queue_ms: int = 1000
    flush_delay_offset_interval_ms: int = 10_000
    message_delay_level: str = DELAY_LEVELS
    max_message_size: int = 4 * 1024 * 1024
    """``maxMessageSize``: the body limit (bytes)."""
    check_crc_on_recover: bool = True
    max_transfer_bytes_on_message_in_memory: int = 256 * 1024
    max_transfer_count_on_message_in_memory: int = 32
    max_msgs_num_batch: int = 64
    """``maxMsgsNumBatch``: the cap on one key query's result."""
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    """A SLAVE store takes records only from its master; a SYNC_MASTER put waits for a slave's ack."""
    slave_timeout_ms: int = HA_DEFAULTS["slaveTimeout"]
    ha_slave_fallbehind_max: int = HA_DEFAULTS["haSlaveFallbehindMax"]
    delay_levels_ms: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.root_dir = Path(self.root_dir)
        self.flush_disk_type = FlushDiskType(self.flush_disk_type)
        self.broker_role = BrokerRole(self.broker_role)
        self.delay_levels_ms = parse_delay_levels(self.message_delay_level)

    @classmethod
    def from_broker(cls, broker: BrokerSettings) -> StoreConfig:
        return cls(
            root_dir=Path(broker.store_path_root_dir),
            store_host=(broker.broker_ip1, broker.listen_port),
            cluster_name=broker.broker_cluster_name,
            flush_disk_type=FlushDiskType(broker.flush_disk_type),
            mapped_file_size_commit_log=broker.mapped_file_size_commit_log,
            mapped_file_size_consume_queue=broker.mapped_file_size_consume_queue,
            max_hash_slot_num=broker.max_hash_slot_num,
            max_index_num=broker.max_index_num,
            message_delay_level=broker.message_delay_level,
            broker_role=BrokerRole(broker.broker_role),
            sync_flush_timeout_ms=broker.sync_flush_timeout,
            slave_timeout_ms=broker.slave_timeout,
            ha_slave_fallbehind_max=broker.ha_slave_fallbehind_max,
        )

    @property
    def max_delay_level(self) -> int:
        return len(self.delay_levels_ms)
