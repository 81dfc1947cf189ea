"""The name server's KV configuration: namespaced string pairs that brokers and admin tools share.

Java keeps ordered topic configurations here (namespace ORDER_TOPIC_CONFIG), returned to brokers on
every registration and merged into route data when ``orderMessageEnable`` is set. Like
``KVConfigManager``, the table is read from ``kvConfigPath`` at start and written back after every
change (``{"configTable":{namespace:{key:value}}}``, one line, through a .tmp file with a .bak copy), so
a restart keeps it and a Java name server can start on the file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rocketmq_spec.codec.store.configs import load_config, save_config
from rocketmq_spec.spec.errors import StoreError

log = logging.getLogger(__name__)

ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"
"""``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``."""
CONFIG_TABLE = "configTable"
"""The one field of ``KVConfigSerializeWrapper``."""


@dataclass
class KVConfig:
    table: dict[str, dict[str, str]] = field(default_factory=dict)
    path: Path | None = None
    """Where the table is persisted; None keeps it in memory only."""

    @classmethod
    def load(cls, path: Path) -> KVConfig:
        """The table stored at ``path``; empty when there is no readable file yet (a first start)."""
        try:
            content = load_config(path)
        except StoreError:
            return cls(path=path)
        table = content.get(CONFIG_TABLE) if isinstance(content, dict) else None
        if not isinstance(table, dict):
            log.warning("%s holds no %s; starting with an empty KV table", path, CONFIG_TABLE)
            return cls(path=path)
        return cls({str(ns): {str(k): str(v) for k, v in (entries or {}).items()}
                    for ns, entries in table.items()}, path)

    def persist(self) -> None:
        if self.path is not None:
            save_config(self.path, {CONFIG_TABLE: self.table}, pretty=False)

    def put(self, namespace: str, key: str, value: str) -> None:
        self.table.setdefault(namespace, {})[key] = value
        self.persist()

    def get(self, namespace: str, key: str) -> str | None:
        return self.table.get(namespace, {}).get(key)

    def delete(self, namespace: str, key: str) -> None:
        """Like Java, a namespace stays once created, even when its last key is deleted."""
        entries = self.table.get(namespace)
        if entries is not None:
            entries.pop(key, None)
        self.persist()

    def namespace(self, namespace: str) -> dict[str, str] | None:
        """A copy of one namespace (empty once all its keys were deleted), or None if it never existed."""
        entries = self.table.get(namespace)
        return None if entries is None else dict(entries)
