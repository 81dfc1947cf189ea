"""Subscription group configs: which groups may consume, their retry settings; subscriptionGroup.json.

Java auto-creates a group's config the first time it heartbeats or pulls (``autoCreateSubscriptionGroup``)
and a few system groups exist from the start; the retry settings here decide the queues of the group's
``%RETRY%`` topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketmq_spec.reference_broker.broker.topics import DataVersion, newer_table
from rocketmq_spec.reference_broker.config import snake_case
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.spec.store_layout import SUBSCRIPTION_GROUP_FIELDS

SUBSCRIPTION_GROUP_FILE = "subscriptionGroup.json"
ORDERLY = "consumeMessageOrderly"
SYSTEM_GROUPS = ("TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY",
                 "CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_SYS_RMQ_TRANS")
"""Groups Java's SubscriptionGroupManager creates at start."""


@dataclass
class SubscriptionGroup:
    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True
    consume_message_orderly: bool = False
    """5.x (``mqadmin updateSubGroup -o true``): the proxy tells the group's gRPC consumers fifo."""

    def as_json(self) -> dict[str, Any]:
        """The 4.9.8 fields, and consumeMessageOrderly once set (a 4.9.8 file never has it)."""
        fields = {name: getattr(self, snake_case(name)) for name in SUBSCRIPTION_GROUP_FIELDS}
        return {**fields, ORDERLY: True} if self.consume_message_orderly else fields

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubscriptionGroup:
        """Read a stored config; absent keys keep their defaults, other unknown (5.x) keys are ignored."""
        return cls(**{snake_case(name): data[name] for name in (*SUBSCRIPTION_GROUP_FIELDS, ORDERLY)
                      if name in data})


class SubscriptionGroupManager:
    def __init__(self, files: ConfigFiles, auto_create: bool) -> None:
        self._files = files
        self.auto_create = auto_create
        self.data_version = DataVersion()
        self.groups = {name: SubscriptionGroup(name) for name in SYSTEM_GROUPS}
        stored = files.load(SUBSCRIPTION_GROUP_FILE)
        if stored:
            for data in stored.get("subscriptionGroupTable", {}).values():
                group = SubscriptionGroup.from_json(data)
                self.groups[group.group_name] = group

    def find_or_create(self, name: str) -> SubscriptionGroup | None:
        """The group's config; created with defaults when auto-creation is on, else None if unknown."""
        group = self.groups.get(name)
        if group is None and self.auto_create:
            group = self.groups[name] = SubscriptionGroup(name)
            self.data_version.bump()
            self.persist()
        return group

    def wrapper_json(self) -> dict[str, Any]:
        """SubscriptionGroupWrapper: what subscriptionGroup.json holds and a slave syncs."""
        return {"dataVersion": self.data_version.as_json(),
                "subscriptionGroupTable": {name: g.as_json() for name, g in self.groups.items()}}

    def replace_all(self, wrapper: dict[str, Any]) -> bool:
        """A slave takes its master's groups when the master's data version differs; True if it did."""
        newer = newer_table(wrapper, "subscriptionGroupTable", self.data_version)
        if newer is None:
            return False
        self.data_version, table = newer
        self.groups = {g.group_name: g for g in map(SubscriptionGroup.from_json, table)}
        self.persist()
        return True


    def update(self, group: SubscriptionGroup) -> None:
        """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: replace (or add) a group's config."""
        self.groups[group.group_name] = group
        self.data_version.bump()
        self.persist()

    def delete(self, name: str) -> None:
        if self.groups.pop(name, None) is not None:
            self.data_version.bump()
            self.persist()

    def persist(self) -> None:
        self._files.save(SUBSCRIPTION_GROUP_FILE, self.wrapper_json())
