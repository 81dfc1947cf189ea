"""Committed consumer offsets per ``topic@group`` and queue, persisted in consumerOffset.json.

Java flushes the table every 5 s (``flushConsumerOffsetInterval``) rather than on every commit, because
consumers commit constantly, often oneway; the broker calls ``persist`` on the same schedule (its
``flush_consumer_offset_interval`` setting) and at stop.
"""

from __future__ import annotations

from rocketmq_spec.codec.store.configs import (
    OffsetTable,
    consumer_offsets_from_json,
    consumer_offsets_to_json,
)
from rocketmq_spec.reference_broker.persistence import ConfigFiles

CONSUMER_OFFSET_FILE = "consumerOffset.json"


class ConsumerOffsetManager:
    def __init__(self, files: ConfigFiles) -> None:
        self._files = files
        stored = files.load(CONSUMER_OFFSET_FILE)
        self.table: OffsetTable = consumer_offsets_from_json(stored) if stored else {}
        self.pulled: OffsetTable = {}
        """(topic, group) -> queue -> next offset the group's last pull was answered with (Java's in-memory
        pullOffsetTable, 5.x: consume stats report it as pullOffset)."""
        self.dirty = False

    def commit(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        self.table.setdefault((topic, group), {})[queue_id] = offset
        self.dirty = True

    def commit_pull(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        self.pulled.setdefault((topic, group), {})[queue_id] = offset

    def query_pull(self, group: str, topic: str, queue_id: int) -> int:
        """``queryPullOffset``: the last pull's next offset, else the committed offset (-1 for none)."""
        pulled = self.pulled.get((topic, group), {}).get(queue_id)
        return pulled if pulled is not None else self.query(group, topic, queue_id)

    def query(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or -1 when the group never committed one for this queue."""
        return self.table.get((topic, group), {}).get(queue_id, -1)

    def remove_topic(self, topic: str) -> None:
        for key in [k for k in self.table if k[0] == topic]:
            del self.table[key]
            self.dirty = True

    def remove_group(self, group: str) -> None:
        for key in [k for k in self.table if k[1] == group]:
            del self.table[key]
            self.dirty = True

    def topics_of(self, group: str) -> list[str]:
        """``whichTopicByConsumer``: topics the group committed offsets for."""
        return sorted(topic for topic, owner in self.table if owner == group)

    def groups_of(self, topic: str) -> list[str]:
        """``whichGroupByTopic``: groups that committed offsets for the topic."""
        return sorted(owner for name, owner in self.table if name == topic)

    def clone(self, source: str, target: str, topic: str) -> None:
        """``cloneOffset``: the target group gets a copy of the source group's offsets of one topic."""
        offsets = self.table.get((topic, source))
        if offsets is not None:
            self.table[(topic, target)] = dict(offsets)
            self.dirty = True

    def persist(self) -> None:
        """Write the table as ``topic@group`` keys with unquoted integer queue ids, as fastjson does."""
        self._files.save(CONSUMER_OFFSET_FILE, consumer_offsets_to_json(self.table))
        self.dirty = False
