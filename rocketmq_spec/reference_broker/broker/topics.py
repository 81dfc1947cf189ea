"""The broker's topic configurations: system topics at start, auto-creation through TBW102, topics.json.

Mirrors Java's ``TopicConfigManager``: the same system topics with the same queue counts and permissions
(the golden REGISTER_BROKER body lists them), a data version bumped on every change so the name server
knows to re-read queue data, and creation from a default topic only when that topic carries PERM_INHERIT.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.pop import revive_topic
from rocketmq_spec.spec.store_layout import TOPIC_CONFIG_FIELDS
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, PermName
from rocketmq_spec.spec.system_topics import (
    BENCHMARK_TOPIC,
    BUILT_IN_QUEUES,
    DEFAULT_TOPIC,
    OFFSET_MOVED_EVENT_TOPIC,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
    SYNC_BROKER_MEMBER_PREFIX,
    TIMER_TOPIC,
    TOPIC_MAX_LENGTH,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    VALID_TOPIC,
    is_system_topic,
    reply_topic,
)
from rocketmq_spec.spec.topic_attributes import MESSAGE_TYPE
from rocketmq_spec.spec.wire_release import wire_release

TOPICS_FILE = "topics.json"


@lru_cache(maxsize=4096)
def topic_name_problem(topic: str) -> str | None:
    """``TopicValidator.validateTopic``'s remark for an unusable name, or None when it is fine."""
    if not topic.strip():
        return remarks.TOPIC_BLANK.template
    if not VALID_TOPIC.match(topic):
        return remarks.TOPIC_ILLEGAL_CHARACTERS.template
    if len(topic) > TOPIC_MAX_LENGTH:
        return remarks.TOPIC_TOO_LONG.template
    return None


@dataclass
class TopicConfig:
    topic_name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = int(PERM_READ_WRITE)
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False
    attributes: dict[str, str] = field(default_factory=dict)
    """5.x topic attributes (``rocketmq_spec.spec.topic_attributes``); written only when there are some, so a
    topic without any keeps 4.9.8's JSON."""

    def as_json(self) -> dict[str, Any]:
        values = {"order": self.order, "perm": self.perm, "readQueueNums": self.read_queue_nums,
                  "topicFilterType": self.topic_filter_type, "topicName": self.topic_name,
                  "topicSysFlag": self.topic_sys_flag, "writeQueueNums": self.write_queue_nums}
        json = {name: values[name] for name in TOPIC_CONFIG_FIELDS}
        if self.attributes:
            json["attributes"] = dict(self.attributes)
        return json

    @property
    def message_type(self) -> str:
        """The ``message.type`` attribute, NORMAL when unset (``TopicConfig.getTopicMessageType``)."""
        return self.attributes.get(MESSAGE_TYPE, "NORMAL")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TopicConfig:
        return cls(topic_name=data["topicName"], read_queue_nums=int(data.get("readQueueNums", 16)),
                   write_queue_nums=int(data.get("writeQueueNums", 16)), perm=int(data.get("perm", 6)),
                   topic_filter_type=data.get("topicFilterType", "SINGLE_TAG"),
                   topic_sys_flag=int(data.get("topicSysFlag", 0)), order=bool(data.get("order", False)),
                   attributes={str(k): str(v) for k, v in (data.get("attributes") or {}).items()})


@dataclass
class DataVersion:
    counter: int = 0
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))

    def bump(self) -> None:
        self.counter += 1
        self.timestamp = int(time.time() * 1000)

    def as_json(self) -> dict[str, int]:
        return {"counter": self.counter, "timestamp": self.timestamp}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DataVersion:
        return cls(int(data.get("counter", 0)), int(data.get("timestamp", 0)))


def newer_table(wrapper: dict[str, Any], table_key: str,
                current: DataVersion) -> tuple[DataVersion, list[dict[str, Any]]] | None:
    """A master's data-versioned table (topics, subscription groups) when its version differs from
    ``current`` (``SlaveSynchronize`` compares versions, never contents), else None."""
    version = DataVersion.from_json(wrapper.get("dataVersion") or {})
    if version == current:
        return None
    return version, list((wrapper.get(table_key) or {}).values())


def _built_in(name: str) -> TopicConfig:
    return TopicConfig(name, BUILT_IN_QUEUES[name], BUILT_IN_QUEUES[name])


class TopicConfigManager:
    def __init__(self, config: BrokerConfig, files: ConfigFiles,
                 on_change: Callable[[], None] = lambda: None) -> None:
        self.config = config
        self._files = files
        self._on_change = on_change
        self.data_version = DataVersion()
        self.topics: dict[str, TopicConfig] = {}
        for topic in self._system_topics():
            self.topics[topic.topic_name] = topic
        stored = files.load(TOPICS_FILE)
        if stored:
            for data in stored.get("topicConfigTable", {}).values():
                topic = TopicConfig.from_json(data)
                self.topics[topic.topic_name] = topic
            self.data_version = DataVersion.from_json(stored.get("dataVersion", {}))

    def _system_topics(self) -> list[TopicConfig]:
        """What Java's TopicConfigManager constructor creates, in its order (5.x adds the revive, broker
        member, transaction and timer topics)."""
        c = self.config
        inherit = int(PermName.INHERIT)
        rw = int(PERM_READ_WRITE)
        topics = [_built_in(SELF_TEST_TOPIC)]
        if c.auto_create_topic_enable:
            topics.append(TopicConfig(DEFAULT_TOPIC, c.default_topic_queue_nums, c.default_topic_queue_nums,
                                      perm=rw | inherit))
        topics += [
            _built_in(BENCHMARK_TOPIC),
            TopicConfig(c.broker_cluster_name, 16, 16, perm=inherit | (rw if c.cluster_topic_enable else 0)),
            TopicConfig(c.broker_name, 1, 1, perm=inherit | (rw if c.broker_topic_enable else 0)),
            _built_in(OFFSET_MOVED_EVENT_TOPIC),
            _built_in(SCHEDULE_TOPIC),
        ]
        if c.trace_topic_enable:
            topics.append(TopicConfig(c.msg_trace_topic_name, 1, 1))
        topics.append(TopicConfig(reply_topic(c.broker_cluster_name), 1, 1))
        if wire_release(c.wire_release).is_5x:
            topics += [
                TopicConfig(revive_topic(c.broker_cluster_name), c.revive_queue_num, c.revive_queue_num),
                TopicConfig(SYNC_BROKER_MEMBER_PREFIX + c.broker_name, 1, 1, perm=inherit),
                TopicConfig(TRANS_HALF_TOPIC, 1, 1),
                TopicConfig(TRANS_OP_HALF_TOPIC, 1, 1),
            ]
            if c.timer_wheel_enable:
                topics.append(TopicConfig(TIMER_TOPIC, 1, 1))
        return topics

    def is_system_topic(self, topic: str) -> bool:
        return is_system_topic(topic) or topic in (self.config.broker_cluster_name, self.config.broker_name)

    def get(self, topic: str) -> TopicConfig | None:
        return self.topics.get(topic)

    def put(self, topic: TopicConfig) -> None:
        self.topics[topic.topic_name] = topic
        self._changed()

    def delete(self, topic: str) -> bool:
        if self.topics.pop(topic, None) is None:
            return False
        self._changed()
        return True

    def create_in_send(self, topic: str, default_topic: str, client_queue_nums: int,
                       topic_sys_flag: int = 0) -> TopicConfig | None:
        """Auto-create ``topic`` from ``default_topic`` on a send, or None when Java would refuse."""
        existing = self.topics.get(topic)
        if existing is not None:
            return existing
        template = self.topics.get(default_topic)
        if template is None:
            return None
        perm = template.perm
        if default_topic == DEFAULT_TOPIC and not self.config.auto_create_topic_enable:
            perm = int(PERM_READ_WRITE)
        if not perm & PermName.INHERIT:
            return None
        queues = max(0, min(client_queue_nums, template.write_queue_nums))
        created = TopicConfig(topic, queues, queues, perm=perm & ~int(PermName.INHERIT),
                              topic_filter_type=template.topic_filter_type, topic_sys_flag=topic_sys_flag)
        self.put(created)
        return created

    def create_in_send_back(self, topic: str, queue_nums: int, perm: int = int(PERM_READ_WRITE),
                            topic_sys_flag: int = 0) -> TopicConfig:
        """Retry and DLQ topics: created outright, no template (``createTopicInSendMessageBackMethod``)."""
        existing = self.topics.get(topic)
        if existing is not None:
            return existing
        created = TopicConfig(topic, queue_nums, queue_nums, perm=perm, topic_sys_flag=topic_sys_flag)
        self.put(created)
        return created

    def wrapper_json(self) -> dict[str, Any]:
        """TopicConfigSerializeWrapper: what topics.json holds and REGISTER_BROKER carries."""
        return {"dataVersion": self.data_version.as_json(),
                "topicConfigTable": {name: t.as_json() for name, t in self.topics.items()}}

    def replace_all(self, wrapper: dict[str, Any]) -> bool:
        """A slave takes its master's topics when the master's data version differs; True if it did."""
        newer = newer_table(wrapper, "topicConfigTable", self.data_version)
        if newer is None:
            return False
        self.data_version, table = newer
        self.topics = {t.topic_name: t for t in map(TopicConfig.from_json, table)}
        self.persist()
        return True

    def registration_json(self) -> dict[str, Any]:
        """What REGISTER_BROKER carries: the topic table, with every topic at the broker's permission
        while the broker is not read-write, so routes show a read-only broker (``registerBrokerAll``)."""
        wrapper = self.wrapper_json()
        perm = self.config.broker_permission
        if perm & PermName.WRITE and perm & PermName.READ:
            return wrapper
        wrapper["topicConfigTable"] = {
            name: TopicConfig(name, t.read_queue_nums, t.write_queue_nums, perm).as_json()
            for name, t in self.topics.items()}
        return wrapper

    def persist(self) -> None:
        self._files.save(TOPICS_FILE, self.wrapper_json())

    def _changed(self) -> None:
        self.data_version.bump()
        self.persist()
        self._on_change()
