"""Admin commands the broker passes on to its clients: offset resets, running info, direct consumption.

An admin tool cannot reach a consumer directly; it asks the broker the consumer is connected to, which
calls the client back over the client's own connection (Java's ``Broker2Client``). A reset is sent
oneway to every member of the group; GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY go to one
named client, whose answer becomes the broker's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.broker.admin import BrokerParts
from rocketmq_spec.reference_broker.client import next_opaque
from rocketmq_spec.reference_broker.server import Channel, Connection, Handler, Request, error_remark
from rocketmq_spec.spec import admin
from rocketmq_spec.spec.admin_bodies import RESET_OFFSET_BODY, RESET_OFFSET_BODY_FOR_C
from rocketmq_spec.spec.admin_headers import RESET_OFFSET_REQUEST
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.language import LanguageCode
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.version import MQVersion
from rocketmq_spec.spec.wire_release import wire_release

CALL_CLIENT_TIMEOUT = 10.0
"""Seconds the broker waits for a client's answer (``callClient`` uses invokeSync with 10000 ms)."""
RESET_LATEST = -1
"""A reset timestamp of -1 moves every queue to its max offset."""


class RelayHandlers:
    def __init__(self, parts: BrokerParts) -> None:
        self.parts = parts
        release_version = wire_release(parts.config.wire_release).version
        self._lower_bound = holds(Rule.SEARCH_OFFSET_LOWER_BOUND, release_version)
        """A reset by time lands on the lower bound (5.1.1+), as a search by time does."""

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: self.reset_offset,
            RequestCode.GET_CONSUMER_RUNNING_INFO: self.running_info,
            RequestCode.CONSUME_MESSAGE_DIRECTLY: self.consume_directly,
        }

    async def reset_offset(self, request: Request) -> RemotingCommand:
        p = self.parts
        header = request.header()
        if holds(Rule.SERVER_SIDE_RESET_OFFSET, wire_release(p.config.wire_release).version):
            return self._reset_in_broker(request, header)
        topic_name, group, stamp = header["topic"], header["group"], header["timestamp"]
        topic = p.topics.get(topic_name)
        if topic is None:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.RESET_NO_TOPIC_REMARK.format(topic=topic_name))
        table = {}
        for queue_id in range(topic.write_queue_nums):
            committed = p.offsets.query(group, topic_name, queue_id)
            if committed == -1:
                return request.reply(ResponseCode.SYSTEM_ERROR,
                                     admin.RESET_NO_GROUP_REMARK.format(group=group))
            wanted = (p.store.max_offset(topic_name, queue_id) if stamp == RESET_LATEST
                      else p.store.search_offset_by_timestamp(topic_name, queue_id, stamp,
                                                              lower_bound=self._lower_bound))
            wanted = max(wanted, 0)
            table[p.queue_key(topic_name, queue_id)] = wanted if header["isForce"] or wanted < committed \
                else committed
        body = encode_body(RESET_OFFSET_BODY, {"offsetTable": table})
        to_clients = body if request.command.language != LanguageCode.CPP.name else encode_body(
            RESET_OFFSET_BODY_FOR_C, {"offsetTable": [{**key.as_dict(), "offset": offset}
                                                      for key, offset in table.items()]})
        members = p.clients.consumer_group(group)
        if members is None or not members.channels:
            return request.reply(ResponseCode.CONSUMER_NOT_ONLINE, admin.RESET_OFFLINE_REMARK.format(
                group=group, topic=topic_name, timestamp=stamp))
        too_old = [i for i in members.channels.values() if i.version < MQVersion.V3_0_7_SNAPSHOT]
        if too_old:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.RESET_CLIENT_TOO_OLD_REMARK.format(version=too_old[0].version))
        fields = encode_header(RESET_OFFSET_REQUEST, {"topic": topic_name, "group": group, "timestamp": stamp,
                                                      "isForce": False})
        for channel in members.channels:
            if isinstance(channel, Connection):
                await channel.send(self._request(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, fields, to_clients,
                                                 oneway=True))
        return request.reply(body=body)

    def _reset_in_broker(self, request: Request, header: Mapping[str, Any]) -> RemotingCommand:
        """``resetOffsetInner`` (RMQ-ADMIN-RESET-SERVER-SIDE): the offsets are set here, no client is told."""
        p = self.parts
        topic_name, group, stamp = header["topic"], header["group"], header["timestamp"]
        if p.config.role is BrokerRole.SLAVE:
            return request.reply(ResponseCode.SYSTEM_ERROR, admin.RESET_IN_SLAVE_REMARK)
        topic = p.topics.get(topic_name)
        if topic is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 admin.RESET_SERVER_NO_TOPIC_REMARK.format(topic=topic_name))
        if group not in p.groups.groups:
            return request.reply(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                 admin.RESET_SERVER_NO_GROUP_REMARK.format(group=group))
        queue_id, offset = header.get("queueId", -1), header.get("offset")
        queues = [queue_id] if queue_id >= 0 else list(range(topic.read_queue_nums))
        wanted: dict[int, int] = {}
        for queue in queues:
            if queue_id >= 0 and offset is not None and offset != -1:
                low, high = p.store.min_offset(topic_name, queue), p.store.max_offset(topic_name, queue)
                if offset < low or offset > high + 1:
                    return request.reply(ResponseCode.SYSTEM_ERROR, admin.RESET_SERVER_RANGE_REMARK.format(
                        offset=offset, low=low, high=high))
                wanted[queue] = offset
            else:
                wanted[queue] = (p.store.max_offset(topic_name, queue) if stamp < 0
                                 else p.store.search_offset_by_timestamp(topic_name, queue, stamp,
                                                                         lower_bound=self._lower_bound))
        for queue, value in wanted.items():
            p.offsets.commit(group, topic_name, queue, value)
        table = {p.queue_key(topic_name, queue): value for queue, value in wanted.items()}
        return request.reply(body=encode_body(RESET_OFFSET_BODY, {"offsetTable": table}))

    async def running_info(self, request: Request) -> RemotingCommand:
        header = request.header()
        return await self._call_consumer(request, header["consumerGroup"], header["clientId"],
                                         request.command.ext_fields or {}, request.command.body)

    async def consume_directly(self, request: Request) -> RemotingCommand:
        header = request.header()
        fields = {**(request.command.ext_fields or {}), "brokerName": self.parts.config.broker_name}
        # Java decodes the id and reads its record before calling the consumer, catching nothing but an
        # unknown host: an id that does not decode, or names no record, escapes as SYSTEM_ERROR.
        offset = decode_offset_msg_id(header.get("msgId") or "").offset
        record = self.parts.store.view_by_offset(offset)
        if record is None:
            raise SpecViolation("msgId names no message", expected="the offset of a stored record",
                                seen=offset, clause=admin.ADMIN_CALL_CONSUMER.id)
        return await self._call_consumer(request, header["consumerGroup"], header.get("clientId") or "",
                                         fields, record)

    async def _call_consumer(self, request: Request, group: str, client_id: str, fields: Mapping[str, str],
                             body: bytes | None) -> RemotingCommand:
        """``callConsumer``: forward to the group's client ``client_id`` and answer with its response."""
        members = self.parts.clients.consumer_group(group)
        found = [(c, i) for c, i in (members.channels.items() if members else ())
                 if i.client_id == client_id and isinstance(c, Channel)]
        if not found:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.CLIENT_NOT_ONLINE_REMARK.format(group=group, client=client_id))
        channel, info = found[0]
        assert isinstance(channel, Channel)  # a connection, or a gRPC client of the in-process proxy
        if info.version < MQVersion.V3_1_8_SNAPSHOT:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.CALL_CONSUMER_TOO_OLD_REMARK.format(client=client_id,
                                                                           version=info.version))
        try:
            answer = await channel.invoke(self._request(request.command.code, fields, body),
                                          CALL_CLIENT_TIMEOUT)
        except TimeoutError as exc:
            return request.reply(ResponseCode.CONSUME_MSG_TIMEOUT,
                                 admin.CALL_CONSUMER_TIMEOUT_REMARK.format(group=group, client=client_id,
                                                                           error=error_remark(exc)))
        except (ConnectionError, OSError) as exc:
            return request.reply(ResponseCode.SYSTEM_ERROR,
                                 admin.CALL_CONSUMER_FAILED_REMARK.format(group=group, client=client_id,
                                                                          error=error_remark(exc)))
        return request.reply(answer.code, answer.remark, body=answer.body, extra_fields=answer.ext_fields)

    def _request(self, code: int, fields: Mapping[str, Any], body: bytes | None, *,
                 oneway: bool = False) -> RemotingCommand:
        return RemotingCommand.request(code, dict(fields), body, opaque=next_opaque(), oneway=oneway,
                                       version=wire_release(self.parts.config.wire_release).version)
