"""A broker configuration whose store costs a few MiB: for brokers started only to be measured or tested.

The default file sizes (1 GiB commit log files, 6 MB consume queues, a 5-million-slot index) are Java's,
right for a broker that keeps its data; a broker that lives for one benchmark or one test would only pay
for sparse files it never fills.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketmq_spec.reference_broker.config import BrokerConfig

SMALL_STORE = {"mapped_file_size_commit_log": 1024 * 1024, "mapped_file_size_consume_queue": 20 * 1000,
               "max_hash_slot_num": 1000, "max_index_num": 4000}
"""Store file sizes small enough that a store costs a few MiB, not a GiB-sized sparse file."""


def small_config(store: Path, **overrides: Any) -> BrokerConfig:
    """A broker on a free port keeping its small store under ``store``; ``overrides`` win."""
    return BrokerConfig(listen_port=0, store_path_root_dir=str(store), **{**SMALL_STORE, **overrides})
