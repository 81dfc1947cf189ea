"""The admin operations behind ``rmq-admin``: each asks the name server and brokers what mqadmin asks.

Operations return plain JSON-ready data (lists of row dicts, or one dict), so the CLI prints the same
result as a table or as ``--json``. Every body is decoded through the spec's bean tables, and brokers
are found the way mqadmin finds them: from the name server's cluster info or a topic's route.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rocketmq_spec.admin.wire import AdminConnection, AdminError
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.bodies import decode_body, decode_properties_text, encode_properties_text
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.spec.admin_bodies import CONSUME_STATS, CONSUMER_CONNECTION, TOPIC_LIST, TOPIC_STATS_TABLE
from rocketmq_spec.spec.bodies import CLUSTER_INFO, KV_TABLE, TOPIC_ROUTE_DATA, BodySpec
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.ha import MASTER_ID
from rocketmq_spec.spec.indexfile import INDEX_KEY_TYPE, INDEX_TAG_TYPE
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, RETRY_PREFIX

QUERY_MAX_NUM = 64
"""Messages one key query asks each broker for (mqadmin's queryMsgByKey asks for 64)."""


def _body(connection: AdminConnection, spec: BodySpec, code: RequestCode,
          values: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = connection.call(code, values)
    return decode_body(spec, answer.command.body or b"{}")


class Admin:
    """One admin session against a name server; broker connections are opened per question."""

    def __init__(self, namesrv: str, timeout: float, *, tls: bool = False,
                 credentials: Credentials | None = None) -> None:
        """``tls``: every connection over TLS (servers in tls.server.mode=enforcing); ``credentials``:
        every request signed with them (brokers with ACL or authentication on)."""
        self.namesrv = namesrv
        self.timeout = timeout
        self.tls = tls
        self.credentials = credentials

    @contextmanager
    def connected(self, addr: str) -> Iterator[AdminConnection]:
        """A connection to ``addr`` with this session's TLS and credentials, closed afterwards."""
        connection = AdminConnection(addr, self.timeout, tls=self.tls, credentials=self.credentials)
        try:
            yield connection
        finally:
            connection.close()

    def _namesrv(self, spec: BodySpec, code: RequestCode,
                 values: dict[str, Any] | None = None) -> dict[str, Any]:
        with self.connected(self.namesrv) as connection:
            return _body(connection, spec, code, values)

    def _broker(self, addr: str, spec: BodySpec, code: RequestCode,
                values: dict[str, Any] | None = None) -> dict[str, Any]:
        with self.connected(addr) as connection:
            return _body(connection, spec, code, values)

    def cluster_info(self) -> dict[str, Any]:
        return self._namesrv(CLUSTER_INFO, RequestCode.GET_BROKER_CLUSTER_INFO)

    def route(self, topic: str) -> dict[str, Any]:
        return self._namesrv(TOPIC_ROUTE_DATA, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})

    def masters_of_topic(self, topic: str) -> dict[str, str]:
        """Broker name -> master address of the brokers serving ``topic``."""
        return _masters(self.route(topic).get("brokerDatas") or [])

    def masters_of_cluster(self, cluster: str | None) -> dict[str, str]:
        info = self.cluster_info()
        table = info.get("brokerAddrTable") or {}
        members = (info.get("clusterAddrTable") or {}).get(cluster) or () if cluster is not None else table
        names = set(members)
        if cluster is not None and not names:
            raise AdminError(f"cluster {cluster} has no brokers on {self.namesrv}")
        return _masters([table[name] for name in sorted(names) if name in table])

    def masters_of_group(self, group: str) -> dict[str, str]:
        """The brokers of a consumer group: those of its %RETRY% topic (created by its first heartbeat),
        else every master, for a group that only ever committed offsets."""
        try:
            return self.masters_of_topic(RETRY_PREFIX + group)
        except AdminError:
            return self.masters_of_cluster(None)

    # ---------------------------------------------------------------- brokers

    def cluster_list(self) -> list[dict[str, Any]]:
        info = self.cluster_info()
        rows = []
        for cluster, names in sorted((info.get("clusterAddrTable") or {}).items()):
            for name in sorted(names):
                data = (info.get("brokerAddrTable") or {}).get(name) or {}
                addrs = sorted((int(k), v) for k, v in (data.get("brokerAddrs") or {}).items())
                for broker_id, addr in addrs:
                    status = self.broker_status(addr)
                    rows.append({"cluster": cluster, "brokerName": name, "brokerId": broker_id, "addr": addr,
                                 "version": status.get("brokerVersionDesc", ""),
                                 "putTps": _first_number(status.get("putTps")),
                                 "getTps": _first_number(status.get("getTransferedTps")  # 4.x spelling
                                                         or status.get("getTransferredTps")),
                                 "commitLogDiskRatio": status.get("commitLogDiskRatio", "")})
        return rows

    def broker_status(self, broker: str) -> dict[str, str]:
        table = self._broker(broker, KV_TABLE, RequestCode.GET_BROKER_RUNTIME_INFO)["table"]
        return dict(sorted(table.items()))

    # ---------------------------------------------------------------- topics

    def topic_list(self) -> list[str]:
        return sorted(self._namesrv(TOPIC_LIST, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)["topicList"])

    def topic_status(self, topic: str) -> list[dict[str, Any]]:
        rows = []
        for name, addr in sorted(self.masters_of_topic(topic).items()):
            stats = self._broker(addr, TOPIC_STATS_TABLE, RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic})
            for key, offsets in stats["offsetTable"].items():
                queue = key.as_dict()
                rows.append({"brokerName": name, "queueId": queue["queueId"], **offsets})
        return sorted(rows, key=lambda row: (row["brokerName"], row["queueId"]))

    def update_topic(self, topic: str, *, broker: str | None, cluster: str | None, read_queues: int,
                     write_queues: int, perm: int = int(PERM_READ_WRITE), attributes: str | None = None
                     ) -> list[str]:
        """Create or change ``topic`` on one broker or every master of a cluster; returns the addresses.
        ``attributes`` are 5.x topic attributes (``+message.type=FIFO``), as mqadmin's ``-a``."""
        targets = [broker] if broker else list(self.masters_of_cluster(cluster).values())
        for addr in targets:
            with self.connected(addr) as connection:
                connection.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
                    "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": read_queues,
                    "writeQueueNums": write_queues, "perm": perm, "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": 0, "order": False, **({"attributes": attributes} if attributes else {})})
        return targets

    def delete_topic(self, topic: str, cluster: str) -> list[str]:
        """Delete ``topic`` from the cluster's masters and from the name server; returns the brokers."""
        targets = list(self.masters_of_cluster(cluster).values())
        for addr in targets:
            with self.connected(addr) as connection:
                connection.call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": topic})
        with self.connected(self.namesrv) as connection:
            connection.call(RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": topic, "clusterName": cluster})
        return targets

    def targets(self, broker: str | None, cluster: str | None, command: str) -> list[str]:
        """-b's broker, or every master of -c's cluster (``CommandUtil.fetchMasterAddrByClusterName``)."""
        if not broker and not cluster:
            raise AdminError(f"{command} needs -b BROKER_ADDR or -c CLUSTER")
        return [broker] if broker else list(self.masters_of_cluster(cluster).values())

    def update_sub_group(self, body: bytes, *, broker: str | None, cluster: str | None) -> list[str]:
        """Create or change a consumer group (a ``groups.sub_group_body``); returns the brokers."""
        targets = self.targets(broker, cluster, "updateSubGroup")
        for addr in targets:
            with self.connected(addr) as connection:
                connection.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body)
        return targets

    def delete_sub_group(self, group: str, *, broker: str | None, cluster: str | None,
                         clean_offset: bool) -> list[str]:
        """Delete a consumer group (and its offsets with ``clean_offset``); returns the brokers."""
        targets = self.targets(broker, cluster, "deleteSubGroup")
        for addr in targets:
            with self.connected(addr) as connection:
                connection.call(RequestCode.DELETE_SUBSCRIPTIONGROUP,
                                {"groupName": group, "cleanOffset": clean_offset})
        return targets

    def broker_config(self, *, broker: str | None, cluster: str | None) -> dict[str, dict[str, str]]:
        """Each broker's settings as GET_BROKER_CONFIG answers them (Properties text)."""
        found = {}
        for addr in self.targets(broker, cluster, "getBrokerConfig"):
            with self.connected(addr) as connection:
                answer = connection.call(RequestCode.GET_BROKER_CONFIG)
                found[addr] = decode_properties_text(answer.command.body or b"")
        return found

    def update_broker_config(self, key: str, value: str, *, broker: str | None,
                             cluster: str | None) -> list[str]:
        """Change one setting of each broker (UPDATE_BROKER_CONFIG with a Properties body)."""
        targets = self.targets(broker, cluster, "updateBrokerConfig")
        for addr in targets:
            with self.connected(addr) as connection:
                connection.call(RequestCode.UPDATE_BROKER_CONFIG, None, encode_properties_text({key: value}))
        return targets

    # ---------------------------------------------------------------- consumers and messages

    def consumer_progress(self, group: str) -> list[dict[str, Any]]:
        """Per queue: broker offset, group offset and the difference (lag), as consumerProgress prints."""
        rows = []
        for name, addr in sorted(self.masters_of_group(group).items()):
            stats = self._broker(addr, CONSUME_STATS, RequestCode.GET_CONSUME_STATS, {"consumerGroup": group})
            for key, offsets in stats["offsetTable"].items():
                queue = key.as_dict()
                rows.append({"topic": queue["topic"], "brokerName": name, "queueId": queue["queueId"],
                             "brokerOffset": offsets["brokerOffset"],
                             "consumerOffset": offsets["consumerOffset"],
                             "diff": offsets["brokerOffset"] - offsets["consumerOffset"],
                             "lastTimestamp": offsets.get("lastTimestamp", 0)})
        return sorted(rows, key=lambda row: (row["topic"], row["brokerName"], row["queueId"]))

    def consumer_connection(self, group: str) -> dict[str, Any]:
        for addr in self.masters_of_group(group).values():
            with self.connected(addr) as connection:
                answer = connection.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group},
                                         accept=(ResponseCode.SUCCESS, ResponseCode.CONSUMER_NOT_ONLINE))
            if answer.command.code == ResponseCode.SUCCESS:
                return decode_body(CONSUMER_CONNECTION, answer.command.body or b"{}")
        raise AdminError(f"the consumer group {group} is not online")

    def query_by_key(self, topic: str, key: str, key_type: str = INDEX_KEY_TYPE) -> list[dict[str, Any]]:
        """``queryMsgByKey``; ``key_type`` T (5.4.0+ brokers): ``key`` is a TAGS string."""
        rows = []
        by_tag = key_type == INDEX_TAG_TYPE
        for name, addr in sorted(self.masters_of_topic(topic).items()):
            with self.connected(addr) as connection:
                answer = connection.call(RequestCode.QUERY_MESSAGE, {
                    "topic": topic, "key": key, "maxNum": QUERY_MAX_NUM, "beginTimestamp": 0,
                    "endTimestamp": 2**63 - 1, **({"indexType": key_type} if by_tag else {})},
                    accept=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
            for record in decode_records(answer.command.body or b""):
                # the index matches hashes; the keys (or the tags) decide, as MQAdminImpl.queryMessage does
                if (record.tags == key) if by_tag else (key in record.keys):
                    rows.append({"msgId": record.uniq_key or record.offset_msg_id, "brokerName": name,
                                 "queueId": record.queue_id, "queueOffset": record.queue_offset,
                                 "offsetMsgId": record.offset_msg_id,
                                 "storeTimestamp": record.store_timestamp})
        return rows


def _masters(broker_datas: list[dict[str, Any]]) -> dict[str, str]:
    masters = {}
    for data in broker_datas:
        addrs = {int(k): v for k, v in (data.get("brokerAddrs") or {}).items()}
        if MASTER_ID in addrs:
            masters[data["brokerName"]] = addrs[MASTER_ID]
    return masters


def _first_number(text: str | None) -> float:
    """The first figure of a TPS value ("12.5 12.1 11.9")."""
    try:
        return float((text or "0").split()[0])
    except (ValueError, IndexError):
        return 0.0
