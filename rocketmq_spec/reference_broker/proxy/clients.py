"""Heartbeat, Telemetry and NotifyClientTermination (``ClientActivity``).

A client is registered with the broker the way a remoting client registers itself: a HEART_BEAT naming a
producer group per topic it publishes to (the topic's name, RMQ-GRPC-PRODUCER-GROUP) or its consumer group
with its subscriptions, sent on the client's channel. Settings on Telemetry register the client and are
answered with the merged settings (RMQ-GRPC-SETTINGS); Heartbeat refreshes the registration; termination
sends UNREGISTER_CLIENT and forgets the settings.
"""

from __future__ import annotations

import time
from typing import Any

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.reference_broker.proxy import validation
from rocketmq_spec.reference_broker.proxy.call import OK_STATUS, CallContext, Refusal, status
from rocketmq_spec.reference_broker.proxy.channel import ChannelRegistry, GrpcClientChannel
from rocketmq_spec.reference_broker.proxy.local import LocalBroker, refused_unless_success
from rocketmq_spec.reference_broker.proxy.settings import SettingsStore
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.hashing import java_string_hash
from rocketmq_spec.spec.release_rules import Rule, holds

CONSUME_TYPES = {v2.SIMPLE_CONSUMER: "CONSUME_ACTIVELY", v2.PUSH_CONSUMER: "CONSUME_PASSIVELY"}
"""``ClientActivity.buildConsumeType``."""


def subscription_data(entry: v2.SubscriptionEntry) -> dict[str, Any]:
    """``FilterAPI.build``: a tag expression's tags and their hash codes, or an SQL92 expression."""
    expression = entry.expression.expression or "*"
    data: dict[str, Any] = {"classFilterMode": False, "topic": entry.topic.name, "subString": expression,
                            "subVersion": int(time.time() * 1000), "tagsSet": [], "codeSet": []}
    if entry.expression.type == v2.SQL:
        data["expressionType"] = "SQL92"
        return data
    data["expressionType"] = "TAG"
    if expression.strip() != "*":
        tags = [tag.strip() for tag in expression.split("||") if tag.strip()]
        if not tags:
            raise Refusal(Code.ILLEGAL_FILTER_EXPRESSION, "expression format is not correct")
        data["tagsSet"] = tags
        data["codeSet"] = [java_string_hash(tag) for tag in tags]
    return data


class Clients:
    def __init__(self, broker: LocalBroker, settings: SettingsStore, channels: ChannelRegistry) -> None:
        self._broker = broker
        self.settings = settings
        self.channels = channels

    def channel(self, ctx: CallContext) -> GrpcClientChannel:
        return self.channels.channel(ctx.client_id, ctx.peer)

    async def _register(self, ctx: CallContext, settings: v2.Settings, group: str | None = None) -> None:
        """One HEART_BEAT carrying what the settings say the client is."""
        producers: list[dict[str, str]] = []
        consumers: list[dict[str, Any]] = []
        if settings.HasField("publishing"):
            for topic in settings.publishing.topics:
                validation.topic(topic.name, self._broker.is_system_topic)
                producers.append({"groupName": topic.name})
        elif settings.client_type in CONSUME_TYPES:
            name = group or settings.subscription.group.name
            validation.group(name)
            consumers.append({
                "groupName": name, "consumeType": CONSUME_TYPES[settings.client_type],
                "messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "unitMode": False,
                "subscriptionDataSet": [subscription_data(e) for e in settings.subscription.subscriptions]})
        body = fastjson.dumps({"clientID": ctx.client_id, "consumerDataSet": consumers,
                               "producerDataSet": producers}).encode()
        command = self._broker.request(RequestCode.HEART_BEAT, None, body, language=ctx.language)
        refused_unless_success(await self._broker.call(self.channel(ctx), command))

    async def heartbeat(self, ctx: CallContext, request: rpc.HeartbeatRequest) -> rpc.HeartbeatResponse:
        settings = self.settings.raw(ctx.client_id)
        if settings is None:
            return rpc.HeartbeatResponse(status=status(Code.UNRECOGNIZED_CLIENT_TYPE,
                                                       "cannot find client settings for this client"))
        if settings.client_type not in (v2.PRODUCER, *CONSUME_TYPES):
            known = settings.client_type in v2.ClientType.values()
            name = v2.ClientType.Name(settings.client_type) if known else str(settings.client_type)
            return rpc.HeartbeatResponse(status=status(Code.UNRECOGNIZED_CLIENT_TYPE, name))
        await self._register(ctx, settings, request.group.name if request.HasField("group") else None)
        return rpc.HeartbeatResponse(status=OK_STATUS)

    async def settings_received(self, ctx: CallContext,
                                command: rpc.TelemetryCommand) -> rpc.TelemetryCommand:
        """The answer to Settings on the Telemetry stream; raises Refusal for settings without a role."""
        settings = command.settings
        if not settings.HasField("publishing") and not settings.HasField("subscription"):
            raise Refusal(Code.BAD_REQUEST, "there is no publishing or subscription data in settings")
        if settings.HasField("subscription"):
            group = settings.subscription.group.name
            validation.group(group)
            required = holds(Rule.GRPC_SETTINGS_GROUP_REQUIRED, self._broker.version)
            if required and self._broker.group(group) is None:  # RMQ-GRPC-SETTINGS-GROUP
                raise Refusal(Code.ILLEGAL_CONSUMER_GROUP, f"group not found: {group}")
        merged = self.settings.update(ctx.client_id, settings)
        await self._register(ctx, settings)
        return rpc.TelemetryCommand(status=OK_STATUS, settings=merged)

    async def terminate(self, ctx: CallContext,
                        request: rpc.NotifyClientTerminationRequest) -> rpc.NotifyClientTerminationResponse:
        settings = self.settings.remove(ctx.client_id)
        if settings is None:
            return rpc.NotifyClientTerminationResponse(status=status(
                Code.UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client"))
        channel = self.channels.find(ctx.client_id)
        if channel is not None:
            groups: list[dict[str, str]] = []
            if settings.HasField("publishing"):
                groups = [{"producerGroup": topic.name} for topic in settings.publishing.topics]
            elif request.HasField("group"):
                validation.group(request.group.name)
                groups = [{"consumerGroup": request.group.name}]
            for group in groups:
                command = self._broker.request(RequestCode.UNREGISTER_CLIENT,
                                               {"clientID": ctx.client_id, **group}, language=ctx.language)
                await self._broker.call(channel, command)
            self.channels.remove(ctx.client_id)
        return rpc.NotifyClientTerminationResponse(status=OK_STATUS)
