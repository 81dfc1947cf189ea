"""The name server's KV configuration: namespaced string pairs that brokers and admin tools share.

Java keeps ordered topic configurations here (namespace ORDER_TOPIC_CONFIG), returned to brokers on
every registration and merged into route data when ``orderMessageEnable`` is set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"
"""``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``."""


@dataclass
class KVConfig:
    table: dict[str, dict[str, str]] = field(default_factory=dict)

    def put(self, namespace: str, key: str, value: str) -> None:
        self.table.setdefault(namespace, {})[key] = value

    def get(self, namespace: str, key: str) -> str | None:
        return self.table.get(namespace, {}).get(key)

    def delete(self, namespace: str, key: str) -> None:
        entries = self.table.get(namespace)
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                del self.table[namespace]

    def namespace(self, namespace: str) -> dict[str, str] | None:
        """A copy of one namespace, or None when it holds nothing."""
        entries = self.table.get(namespace)
        return dict(entries) if entries else None
