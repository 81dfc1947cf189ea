"""The broker's admin commands: settings, runtime figures, queue and group statistics, groups, clean-up.

These are what mqadmin and the Dashboard ask a broker (AdminBrokerProcessor in Java). Each handler reads the
managers the send and pull paths already keep, and answers with the spec's bean tables
(``rocketmq_spec.spec.admin_bodies``) and remarks (``rocketmq_spec.spec.admin``); headers are decoded through
the spec's tables by ``request.header()``, so a missing field is refused in one place. """

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import (
    decode_body,
    decode_properties_text,
    encode_body,
    encode_properties_text,
    object_key,
)
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.clients import ClientChannel, ClientManager
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.stats import GROUP_GET_NUMS, TOPIC_PUT_NUMS, BrokerStats
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroup, SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import DataVersion, TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.config_view import black_listed, settings_of, update_settings
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.reference_broker.store import MessageStore
from rocketmq_spec.spec import admin, remarks
from rocketmq_spec.spec.admin import RUNTIME_INFO, runtime_info_keys
from rocketmq_spec.spec.admin_bodies import BROKER_STATS_DATA as STATS_DATA
from rocketmq_spec.spec.admin_bodies import (
    CONSUME_STATS,
    CONSUMER_CONNECTION,
    GROUP_LIST,
    PRODUCER_CONNECTION,
    QUERY_CONSUME_QUEUE_RESPONSE,
    SUBSCRIPTION_GROUP_CONFIG,
    SUBSCRIPTION_GROUP_WRAPPER,
    TOPIC_LIST,
    TOPIC_STATS_TABLE,
)
from rocketmq_spec.spec.admin_headers import DELETE_SUBSCRIPTION_GROUP_REQUEST
from rocketmq_spec.spec.bodies import KV_TABLE
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.language import LanguageCode
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.releases import ALL
from rocketmq_spec.spec.system_topics import SYSTEM_TOPICS
from rocketmq_spec.spec.wire_release import wire_release


@dataclass
class BrokerParts:
    """The managers the admin handlers read and change, gathered once by the broker."""

    config: BrokerConfig
    topics: TopicConfigManager
    groups: SubscriptionGroupManager
    clients: ClientManager
    offsets: ConsumerOffsetManager
    store: MessageStore
    stats: BrokerStats
    config_version: DataVersion
    reregister: Any
    """Called when an update changes what the broker registers (brokerPermission)."""

    def queue_key(self, topic: str, queue_id: int) -> fastjson.ObjectKey:
        return object_key({"brokerName": self.config.broker_name, "queueId": queue_id, "topic": topic})


def connection_json(channel: Any, info: ClientChannel) -> dict[str, Any]:
    """A Connection bean: the channel's remote address and what the client's heartbeat said."""
    language = info.language
    if isinstance(language, int):
        known = {code.value: code.name for code in LanguageCode}
        language = known.get(language, str(language))
    return {"clientAddr": getattr(channel, "peer", str(channel)), "clientId": info.client_id,
            "language": language, "version": info.version}


GIB = 2**30


def disk_used_ratio(used: int, usable: int) -> float:
    """``UtilAll.getDiskPartitionSpaceUsedPercent``: used / (used + usable to non-root), rounded up to a
    hundredth, so it matches ``df``'s Use% rather than used / total."""
    entire = used + usable
    return -(-used * 100 // entire) / 100 if entire else -1.0


def _runtime(seconds: int) -> str:
    minutes, sec = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"[ {days} days, {hours} hours, {minutes} minutes, {sec} seconds ]"


class AdminHandlers:
    def __init__(self, parts: BrokerParts) -> None:
        self.parts = parts

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.GET_BROKER_RUNTIME_INFO: self.runtime_info,
            RequestCode.GET_BROKER_CONFIG: self.get_config,
            RequestCode.UPDATE_BROKER_CONFIG: self.update_config,
            RequestCode.GET_TOPIC_STATS_INFO: self.topic_stats,
            RequestCode.GET_CONSUME_STATS: self.consume_stats,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: self.consumer_connections,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: self.producer_connections,
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: self.consumed_by,
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: self.update_group,
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: self.all_groups,
            RequestCode.DELETE_SUBSCRIPTIONGROUP: self.delete_group,
            RequestCode.CLONE_GROUP_OFFSET: self.clone_offsets,
            RequestCode.VIEW_BROKER_STATS_DATA: self.stats_data,
            RequestCode.QUERY_CONSUME_QUEUE: self.query_consume_queue,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: self.system_topics,
            RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE: self.clean_expired_consume_queues,
            RequestCode.DELETE_EXPIRED_COMMITLOG: self.delete_expired_commitlog,
        }

    # ---------------------------------------------------------------- settings and figures

    async def runtime_info(self, request: Request) -> RemotingCommand:
        p = self.parts
        release = wire_release(p.config.wire_release)
        usage = shutil.disk_usage(p.store.root)
        ratio = str(disk_used_ratio(usage.used, usage.free))
        now_ms = int(time.time() * 1000)
        put_tps, get_tps = p.stats.total_tps(TOPIC_PUT_NUMS), p.stats.total_tps(GROUP_GET_NUMS)
        table = {
            "brokerVersionDesc": release.version_name, "brokerVersion": str(release.version),
            "getTransferedTps": f"{get_tps} {get_tps} {get_tps}",
            "getTransferredTps": f"{get_tps} {get_tps} {get_tps}",
            # counters since start: the "morning" marks Java samples at midnight are the start here
            "msgPutTotalYesterdayMorning": "0", "msgPutTotalTodayMorning": "0",
            "msgPutTotalTodayNow": str(p.stats.put_total),
            "msgGetTotalYesterdayMorning": "0", "msgGetTotalTodayMorning": "0",
            "msgGetTotalTodayNow": str(p.stats.get_total),
            "sendThreadPoolQueueSize": "0", "pullThreadPoolQueueSize": "0",
            "sendThreadPoolQueueHeadWaitTimeMills": "0", "pullThreadPoolQueueHeadWaitTimeMills": "0",
            "pageCacheLockTimeMills": "0",
            "earliestMessageTimeStamp": str(self._earliest_message_time()),
            "commitLogDiskRatio": ratio, "putTps": f"{put_tps} {put_tps} {put_tps}",
            "commitLogMinOffset": str(p.store.min_phy_offset),
            "commitLogMaxOffset": str(p.store.max_phy_offset),
            "bootTimestamp": str(p.stats.boot_ms), "runtime": _runtime((now_ms - p.stats.boot_ms) // 1000),
            "commitLogDirCapacity": f"Total : {usage.total / GIB:.1f} GiB, "
                                    f"Free : {usage.free / GIB:.1f} GiB.",
            # one disk holds commitlog and queues; a put dispatches before it answers, so nothing trails
            f"commitLogDiskRatio_{p.store.commitlog.files.directory}": ratio, "consumeQueueDiskRatio": ratio,
            "dispatchBehindBytes": "0", "putMessageTimesTotal": str(p.stats.put_total),
            "startAcceptSendRequestTimeStamp": "0",
        }
        versioned = {row.key for row in RUNTIME_INFO if row.releases != ALL}
        wanted = set(runtime_info_keys(release.version))
        table = {key: value for key, value in table.items() if key not in versioned or key in wanted}
        return request.reply(body=encode_body(KV_TABLE, {"table": table}))

    def _earliest_message_time(self) -> int:
        record = self.parts.store.read_record(self.parts.store.min_phy_offset)
        return record.store_timestamp if record is not None else -1

    async def get_config(self, request: Request) -> RemotingCommand:
        p = self.parts
        version = fastjson.dumps(p.config_version.as_json())
        return request.reply(header={"version": version}, body=encode_properties_text(settings_of(p.config)))

    async def update_config(self, request: Request) -> RemotingCommand:
        if not request.command.body:
            return request.reply()
        properties = decode_properties_text(request.command.body)
        if black_listed(properties, admin.BROKER_CONFIG_BLACK_LIST):
            return request.reply(ResponseCode.NO_PERMISSION, admin.BLACK_LIST_REMARK)
        update_settings(self.parts.config, properties)
        self.parts.config_version.bump()
        if "brokerPermission" in properties:
            self.parts.reregister()
        return request.reply()

    # ---------------------------------------------------------------- queues and groups

    async def topic_stats(self, request: Request) -> RemotingCommand:
        p = self.parts
        topic_name = request.header()["topic"]
        topic = p.topics.get(topic_name)
        if topic is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 admin.TOPIC_NOT_EXIST_REMARK.format(topic=topic_name))
        table = {}
        for queue_id in range(topic.write_queue_nums):
            high = max(p.store.max_offset(topic_name, queue_id), 0)
            last = p.store.message_store_timestamp(topic_name, queue_id, high - 1) if high > 0 else 0
            table[p.queue_key(topic_name, queue_id)] = {
                "lastUpdateTimestamp": max(last, 0), "maxOffset": high,
                "minOffset": max(p.store.min_offset(topic_name, queue_id), 0)}
        return request.reply(body=encode_body(TOPIC_STATS_TABLE, {"offsetTable": table}))

    def _skips(self, group: str, topic: str) -> bool:
        """Java leaves out a topic the group's online members do not subscribe to."""
        members = self.parts.clients.consumer_group(group)
        return members is not None and bool(members.subscriptions) and topic not in members.subscriptions

    async def consume_stats(self, request: Request) -> RemotingCommand:
        p = self.parts
        header = request.header()
        group = header["consumerGroup"]
        topics = [header["topic"]] if header.get("topic") else p.offsets.topics_of(group)
        pull_offsets = holds(Rule.CONSUME_STATS_PULL_OFFSET, wire_release(p.config.wire_release).version)
        table: dict[fastjson.ObjectKey, dict[str, int]] = {}
        tps = 0.0
        for topic_name in topics:
            topic = p.topics.get(topic_name)
            if topic is None or self._skips(group, topic_name):
                continue
            for queue_id in range(topic.read_queue_nums):
                consumed = max(p.offsets.query(group, topic_name, queue_id), 0)
                last = p.store.message_store_timestamp(topic_name, queue_id, consumed - 1) if consumed else 0
                wrapper = {"brokerOffset": max(p.store.max_offset(topic_name, queue_id), 0),
                           "consumerOffset": consumed, "lastTimestamp": max(last, 0)}
                if pull_offsets:
                    wrapper["pullOffset"] = max(consumed, p.offsets.query_pull(group, topic_name, queue_id))
                table[p.queue_key(topic_name, queue_id)] = wrapper
            tps += p.stats.tps(GROUP_GET_NUMS, f"{topic_name}@{group}")
        return request.reply(body=encode_body(CONSUME_STATS, {"consumeTps": tps, "offsetTable": table}))

    async def consumer_connections(self, request: Request) -> RemotingCommand:
        group = request.header()["consumerGroup"]
        members = self.parts.clients.consumer_group(group)
        if members is None:
            return request.reply(ResponseCode.CONSUMER_NOT_ONLINE,
                                 admin.CONSUMER_NOT_ONLINE_REMARK.format(group=group))
        body = {"connectionSet": [connection_json(c, i) for c, i in members.channels.items()],
                "consumeFromWhere": members.consume_from_where or None,
                "consumeType": members.consume_type or None, "messageModel": members.message_model or None,
                "subscriptionTable": dict(members.subscriptions)}
        return request.reply(body=encode_body(CONSUMER_CONNECTION, body))

    async def producer_connections(self, request: Request) -> RemotingCommand:
        group = request.header()["producerGroup"]
        members = self.parts.clients.producers.get(group)
        if members is None:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.PRODUCER_NOT_EXIST_REMARK.format(group=group))
        body = {"connectionSet": [connection_json(c, i) for c, i in members.items()]}
        return request.reply(body=encode_body(PRODUCER_CONNECTION, body))

    async def consumed_by(self, request: Request) -> RemotingCommand:
        topic = request.header()["topic"]
        online = [g for g, members in self.parts.clients.consumers.items() if topic in members.subscriptions]
        groups = sorted({*online, *self.parts.offsets.groups_of(topic)})
        return request.reply(body=encode_body(GROUP_LIST, {"groupList": groups}))

    async def update_group(self, request: Request) -> RemotingCommand:
        if request.command.body:
            config = decode_body(SUBSCRIPTION_GROUP_CONFIG, request.command.body)
            if config.get("groupName"):
                self.parts.groups.update(SubscriptionGroup.from_json(config))
        return request.reply()

    async def all_groups(self, request: Request) -> RemotingCommand:
        return request.reply(body=encode_body(SUBSCRIPTION_GROUP_WRAPPER, self.parts.groups.wrapper_json()))

    async def delete_group(self, request: Request) -> RemotingCommand:
        header = request.header()
        self.parts.groups.delete(header["groupName"])
        declared = {f.key for f in DELETE_SUBSCRIPTION_GROUP_REQUEST.declared_by(
            wire_release(self.parts.config.wire_release).version)}
        if any(header.get(key) for key in ("removeOffset", "cleanOffset") if key in declared):
            self.parts.offsets.remove_group(header["groupName"])
        return request.reply()

    async def clone_offsets(self, request: Request) -> RemotingCommand:
        p = self.parts
        header = request.header()
        source = header["srcGroup"]
        topics = [header["topic"]] if header.get("topic") else p.offsets.topics_of(source)
        for topic in topics:
            if p.topics.get(topic) is None or (not header.get("offline") and self._skips(source, topic)):
                continue
            p.offsets.clone(source, header["destGroup"], topic)
        return request.reply()

    async def stats_data(self, request: Request) -> RemotingCommand:
        header = request.header()
        data = self.parts.stats.stats_data(header["statsName"], header["statsKey"])
        if data is None:
            return request.reply(ResponseCode.SYSTEM_ERROR, admin.STATS_NOT_EXIST_REMARK.format(
                name=header["statsName"], key=header["statsKey"]))
        return request.reply(body=encode_body(STATS_DATA, data))

    async def query_consume_queue(self, request: Request) -> RemotingCommand:
        p = self.parts
        header = request.header()
        topic, queue_id = header.get("topic") or "", header.get("queueId") or 0
        queue = p.store.consume_queue(topic, queue_id)
        if queue is None:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.CQ_NOT_EXIST_REMARK.format(queue_id=queue_id, topic=topic))
        body: dict[str, Any] = {"maxQueueIndex": queue.max_offset, "minQueueIndex": queue.min_offset}
        group = header.get("consumerGroup")
        if group is not None:
            members = p.clients.consumer_group(group)
            subscription = members.subscriptions.get(topic) if members is not None else None
            body["subscriptionData"] = subscription
            # a TAG subscription has no ConsumerFilterData: Java writes JSON null for it
            body["filterData"] = ("null" if subscription is not None
                                  else admin.CQ_GROUP_OFFLINE_FILTER.format(group=group, topic=topic))
        index = header.get("index") or 0
        if not queue.min_offset <= index < queue.max_offset:
            return request.reply(remark=admin.CQ_INDEX_NOT_EXIST_REMARK.format(
                index=index, queue_id=queue_id, topic=topic))
        entries = queue.entries(index, header.get("count") or 0) or []
        body["queueData"] = [{"eval": False, "physicOffset": offset, "physicSize": size, "tagsCode": tags}
                             for offset, size, tags in entries]
        # Java sets the code but never clears createResponseCommand's default remark here
        return request.reply(remark=remarks.UNSET.template,
                             body=encode_body(QUERY_CONSUME_QUEUE_RESPONSE, body))

    async def system_topics(self, request: Request) -> RemotingCommand:
        return request.reply(body=encode_body(TOPIC_LIST, {"topicList": sorted(SYSTEM_TOPICS)}))

    async def clean_expired_consume_queues(self, request: Request) -> RemotingCommand:
        self.parts.store.clean_expired_consume_queues()
        return request.reply()

    async def delete_expired_commitlog(self, request: Request) -> RemotingCommand:
        self.parts.store.delete_expired_commitlog()
        return request.reply()
