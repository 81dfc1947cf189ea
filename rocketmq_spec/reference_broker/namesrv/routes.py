"""The name server's route table: which brokers exist, which topics they serve, and who went silent.

Kept free of I/O and clocks (every call takes ``now`` in seconds) so expiry can be tested without waiting.
The outputs are plain dicts under the JSON names of TopicRouteData/ClusterInfo; the handlers serialize
them with the codec. Semantics follow Java's 4.9.8 ``RouteInfoManager``: queue data is only taken from
a master (brokerId 0), and only when its data version changed or it registers for the first time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.spec.bodies import TOPIC_ROUTE_DATA
from rocketmq_spec.spec.ha import MASTER_ID
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, PermName


@dataclass
class BrokerLive:
    last_update: float
    data_version: Mapping[str, Any]
    channel: Hashable | None
    ha_server_addr: str


@dataclass
class BrokerEntry:
    cluster: str
    broker_name: str
    addrs: dict[int, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"brokerAddrs": dict(sorted(self.addrs.items())), "brokerName": self.broker_name,
                "cluster": self.cluster}


@dataclass(frozen=True)
class RegisterResult:
    ha_server_addr: str | None
    master_addr: str | None


@dataclass
class RouteTable:
    topics: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """topic -> broker name -> QueueData as JSON (brokerName, perm, readQueueNums, topicSysFlag, ...)."""
    brokers: dict[str, BrokerEntry] = field(default_factory=dict)
    clusters: dict[str, set[str]] = field(default_factory=dict)
    live: dict[str, BrokerLive] = field(default_factory=dict)
    filter_servers: dict[str, list[str]] = field(default_factory=dict)

    def register(self, *, cluster: str, broker_addr: str, broker_name: str, broker_id: int,
                 ha_server_addr: str, data_version: Mapping[str, Any] | None,
                 topic_configs: Mapping[str, Mapping[str, Any]], filter_servers: list[str],
                 channel: Hashable | None, now: float, single_topic_first_refused: bool = False
                 ) -> RegisterResult | None:
        """Record a registration whole or not at all: everything that can fail (reading the topic
        configs) happens before the first table changes, so a bad registration cannot leave a broker
        that routes see but expiry, which walks ``live``, never removes.

        None when the registration is refused: from 5.0.0 a broker id's first registration holding exactly
        one topic (RMQ-NS-REGISTER-FIRST); Java has added the cluster and broker name by then, and so has
        this table."""
        queue_datas = [_queue_data(broker_name, topic_config) for topic_config in topic_configs.values()]
        self.clusters.setdefault(cluster, set()).add(broker_name)
        first = broker_name not in self.brokers
        entry = self.brokers.setdefault(broker_name, BrokerEntry(cluster, broker_name))
        # A slave promoted to master re-registers the same address under id 0: drop the old id first.
        for old_id in [i for i, addr in entry.addrs.items() if addr == broker_addr and i != broker_id]:
            del entry.addrs[old_id]
        if single_topic_first_refused and broker_id not in entry.addrs and len(topic_configs) == 1:
            return None
        first = first or entry.addrs.get(broker_id) is None
        entry.addrs[broker_id] = broker_addr
        version = dict(data_version or {})
        if broker_id == MASTER_ID and (first or self.version_changed(broker_addr, version)):
            for topic, queue_data in queue_datas:
                self.topics.setdefault(topic, {})[broker_name] = queue_data
        self.live[broker_addr] = BrokerLive(now, version, channel, ha_server_addr)
        if filter_servers:
            self.filter_servers[broker_addr] = list(filter_servers)
        else:
            self.filter_servers.pop(broker_addr, None)
        if broker_id != MASTER_ID:
            master = entry.addrs.get(MASTER_ID)
            if master is not None and master in self.live:
                return RegisterResult(self.live[master].ha_server_addr, master)
        return RegisterResult(None, None)

    def version_changed(self, broker_addr: str, data_version: Mapping[str, Any]) -> bool:
        live = self.live.get(broker_addr)
        return live is None or dict(live.data_version) != dict(data_version)

    def touch(self, broker_addr: str, now: float) -> None:
        if broker_addr in self.live:
            self.live[broker_addr].last_update = now

    def data_version_of(self, broker_addr: str) -> Mapping[str, Any] | None:
        live = self.live.get(broker_addr)
        return None if live is None else live.data_version

    def unregister(self, *, cluster: str, broker_addr: str, broker_name: str, broker_id: int) -> None:
        self.live.pop(broker_addr, None)
        self.filter_servers.pop(broker_addr, None)
        entry = self.brokers.get(broker_name)
        if entry is None:
            return
        if entry.addrs.get(broker_id) == broker_addr:
            del entry.addrs[broker_id]
        if entry.addrs:
            return
        del self.brokers[broker_name]
        names = self.clusters.get(cluster)
        if names is not None:
            names.discard(broker_name)
            if not names:
                del self.clusters[cluster]
        self._remove_topics_of(broker_name)

    def _remove_topics_of(self, broker_name: str) -> None:
        for topic in list(self.topics):
            self.topics[topic].pop(broker_name, None)
            if not self.topics[topic]:
                del self.topics[topic]

    def _forget(self, broker_addr: str) -> None:
        """Drop a broker address known only by its address (channel closed or registration expired)."""
        for entry in list(self.brokers.values()):
            for broker_id, addr in list(entry.addrs.items()):
                if addr == broker_addr:
                    self.unregister(cluster=entry.cluster, broker_addr=addr, broker_name=entry.broker_name,
                                    broker_id=broker_id)
        self.live.pop(broker_addr, None)
        self.filter_servers.pop(broker_addr, None)

    def expire(self, now: float, timeout: float) -> list[str]:
        """Remove brokers silent for longer than ``timeout``; returns their addresses."""
        stale = [addr for addr, live in self.live.items() if live.last_update + timeout < now]
        for addr in stale:
            self._forget(addr)
        return stale

    def channel_closed(self, channel: Hashable) -> list[str]:
        """Java removes a broker as soon as its registering connection closes."""
        gone = [addr for addr, live in self.live.items() if live.channel == channel]
        for addr in gone:
            self._forget(addr)
        return gone

    def route(self, topic: str) -> dict[str, Any] | None:
        """TopicRouteData for ``topic`` as JSON-shaped data, or None when either half is missing."""
        queues = self.topics.get(topic)
        if not queues:
            return None
        broker_datas = [self.brokers[name].as_json() for name in queues if name in self.brokers]
        if not broker_datas:
            return None
        filter_table = {addr: servers for entry in broker_datas for addr in entry["brokerAddrs"].values()
                        if (servers := self.filter_servers.get(addr))}
        return {"brokerDatas": broker_datas, "filterServerTable": filter_table,
                "queueDatas": list(queues.values())}

    def cluster_info(self) -> dict[str, Any]:
        return {
            "brokerAddrTable": {name: entry.as_json() for name, entry in self.brokers.items()},
            "clusterAddrTable": {cluster: sorted(names) for cluster, names in self.clusters.items()},
        }

    def topic_names(self) -> list[str]:
        return list(self.topics)

    def delete_topic(self, topic: str, cluster: str | None = None) -> None:
        """Drop a topic, or only its queues on the brokers of ``cluster`` when one is named."""
        if not cluster:
            self.topics.pop(topic, None)
            return
        queues = self.topics.get(topic, {})
        for name in self.clusters.get(cluster, set()):
            queues.pop(name, None)
        if not queues:
            self.topics.pop(topic, None)

    def wipe_write_perm(self, broker_name: str) -> int:
        """Clear PERM_WRITE on every queue data of ``broker_name``; returns how many topics it touched."""
        return self._set_perm(broker_name, lambda perm: int(perm & ~PermName.WRITE))

    def add_write_perm(self, broker_name: str) -> int:
        """Set every queue data of ``broker_name`` to read+write (Java sets exactly PERM_READ|PERM_WRITE,
        dropping any other bit); returns how many topics it touched."""
        return self._set_perm(broker_name, lambda perm: int(PERM_READ_WRITE))

    def _set_perm(self, broker_name: str, new_perm: Callable[[int], int]) -> int:
        count = 0
        for queues in self.topics.values():
            queue_data = queues.get(broker_name)
            if queue_data is not None:
                queue_data["perm"] = new_perm(queue_data["perm"])
                count += 1
        return count

    def topics_of_cluster(self, cluster: str) -> list[str]:
        """GET_TOPICS_BY_CLUSTER: topics with queues on a broker of ``cluster`` (none for an unknown one)."""
        names = self.clusters.get(cluster, set())
        return [topic for topic, queues in self.topics.items() if names & queues.keys()]

    def system_topics(self) -> tuple[list[str], str | None]:
        """GET_SYSTEM_TOPIC_LIST_FROM_NS: cluster and broker names (each broker has a topic named after it,
        and so has its cluster), and the address of one broker to ask for more."""
        names = [name for cluster, brokers in self.clusters.items() for name in (cluster, *sorted(brokers))]
        addrs = [next(iter(entry.addrs.values())) for entry in self.brokers.values() if entry.addrs]
        return list(dict.fromkeys(names)), addrs[0] if addrs else None


def _queue_data(broker_name: str, topic_config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A topic and the QueueData a master's TopicConfig gives it (the config read through the spec's
    TopicConfig table, so every key is there)."""
    return topic_config["topicName"], {
        "brokerName": broker_name,
        "perm": topic_config["perm"],
        "readQueueNums": topic_config["readQueueNums"],
        "topicSysFlag": topic_config["topicSysFlag"],
        "writeQueueNums": topic_config["writeQueueNums"],
    }


def _standard(value: Any) -> Any:
    """fastjson's MapSortField + QuoteFieldNames: map keys quoted and sorted, at every depth."""
    if isinstance(value, Mapping):
        return {str(k): _standard(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list):
        return [_standard(v) for v in value]
    return value


def route_data_json(route: Mapping[str, Any], *, standard: bool) -> bytes:
    """TopicRouteData bytes: fastjson's default form (unquoted integer keys), or standard JSON."""
    return encode_body(TOPIC_ROUTE_DATA, _standard(route) if standard else dict(route))
