"""Producer and consumer channels per group, as learnt from HEART_BEAT, with Java's 120 s expiry.

A consumer group's membership drives rebalancing on the clients: whenever a channel joins or leaves a
group, or the group's subscriptions change, every member must be told (NOTIFY_CONSUMER_IDS_CHANGED).
This module only reports *that* a group changed; the broker sends the notifications. Sans-IO: callers
pass ``now`` in seconds and channels are opaque hashable objects.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientChannel:
    client_id: str
    language: str | int
    version: int
    last_update: float


@dataclass
class ConsumerGroup:
    consume_type: str = ""
    message_model: str = ""
    consume_from_where: str = ""
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """topic -> SubscriptionData as JSON (subString, tagsSet, codeSet, subVersion, expressionType ...)."""
    channels: dict[Hashable, ClientChannel] = field(default_factory=dict)

    def client_ids(self) -> list[str]:
        return [channel.client_id for channel in self.channels.values()]


class ClientManager:
    def __init__(self, expiry_seconds: float) -> None:
        self.expiry = expiry_seconds
        self.producers: dict[str, dict[Hashable, ClientChannel]] = {}
        self.consumers: dict[str, ConsumerGroup] = {}

    def register_producer(self, group: str, channel: Hashable, info: ClientChannel) -> None:
        self.producers.setdefault(group, {})[channel] = info

    def register_consumer(self, group: str, channel: Hashable, info: ClientChannel,
                          consumer_data: Mapping[str, Any], now_ms: int) -> bool:
        """Record a consumer heartbeat decoded at ``now_ms``; True when the group's members or subscriptions
        changed."""
        entry = self.consumers.setdefault(group, ConsumerGroup())
        entry.consume_type = consumer_data.get("consumeType", "")
        entry.message_model = consumer_data.get("messageModel", "")
        entry.consume_from_where = consumer_data.get("consumeFromWhere", "")
        known = channel in entry.channels
        if known:
            entry.channels[channel].last_update = info.last_update
        else:
            entry.channels[channel] = info
        # Java's SubscriptionData starts at subVersion = the time it is decoded, kept when the JSON has none
        subscriptions = {sub["topic"]: {**sub, "subVersion": sub.get("subVersion") or now_ms}
                         for sub in consumer_data.get("subscriptionDataSet") or ()}
        topics_changed = set(subscriptions) != set(entry.subscriptions)
        for topic, sub in subscriptions.items():
            old = entry.subscriptions.get(topic)
            # Java keeps the newer subscription only (by subVersion).
            if old is None or int(sub["subVersion"]) > int(old["subVersion"]):
                entry.subscriptions[topic] = sub
        for topic in set(entry.subscriptions) - set(subscriptions):
            del entry.subscriptions[topic]
        return not known or topics_changed

    def unregister_producer(self, group: str, channel: Hashable) -> None:
        members = self.producers.get(group)
        if members is not None:
            members.pop(channel, None)
            if not members:
                del self.producers[group]

    def unregister_consumer(self, group: str, channel: Hashable) -> bool:
        """Remove a consumer channel; True when it was a member (the remaining ones must be told)."""
        entry = self.consumers.get(group)
        if entry is None or entry.channels.pop(channel, None) is None:
            return False
        if not entry.channels:
            del self.consumers[group]
        return True

    def channel_gone(self, channel: Hashable) -> list[str]:
        """Drop a closed channel everywhere; returns the consumer groups that lost a member."""
        for group in list(self.producers):
            self.unregister_producer(group, channel)
        return [group for group in list(self.consumers) if self.unregister_consumer(group, channel)]

    def expire(self, now: float) -> tuple[list[Hashable], list[str]]:
        """Drop channels silent for longer than the expiry; returns them and the groups that changed."""
        stale = {channel for members in self.producers.values() for channel, info in members.items()
                 if now - info.last_update > self.expiry}
        stale |= {channel for entry in self.consumers.values() for channel, info in entry.channels.items()
                  if now - info.last_update > self.expiry}
        changed: set[str] = set()
        for channel in stale:
            changed.update(self.channel_gone(channel))
        return list(stale), sorted(changed)

    def producer_channels(self, group: str) -> list[Hashable]:
        return list(self.producers.get(group, {}))

    def consumer_group(self, group: str) -> ConsumerGroup | None:
        return self.consumers.get(group)
