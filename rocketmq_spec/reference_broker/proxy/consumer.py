"""ReceiveMessage, AckMessage, ChangeInvisibleDuration and ForwardMessageToDeadLetterQueue over the broker's
POP commands (``ReceiveMessageActivity``, ``AckMessageActivity``, ``ConsumerProcessor``).

A receive is one POP_MESSAGE over every queue of the broker (queue -1) with the client's invisible time
and a long-polling time bounded by the call's deadline; each popped message gets a receipt handle, its
POP_CK extra info (built from the answer's offset infos, as the remoting client builds it) and its
commitlog offset (RMQ-GRPC-RECEIPT). Messages the client's filter does not match are acked, messages
consumed too often are sent to the DLQ, the rest are streamed after an OK status line and before the
delivery timestamp that closes the stream.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.store.record import MessageRecord, decode_records
from rocketmq_spec.reference_broker.proxy import validation
from rocketmq_spec.reference_broker.proxy.call import OK_STATUS, CallContext, Refusal, status
from rocketmq_spec.reference_broker.proxy.channel import ChannelRegistry, GrpcClientChannel
from rocketmq_spec.reference_broker.proxy.clients import subscription_data
from rocketmq_spec.reference_broker.proxy.local import LocalBroker
from rocketmq_spec.reference_broker.proxy.messages import delivered
from rocketmq_spec.reference_broker.proxy.renewal import Held, Renewals
from rocketmq_spec.reference_broker.proxy.settings import SettingsStore
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.grpc_codes import Code, code_for_remoting
from rocketmq_spec.spec.grpc_mapping import RECEIPT_HANDLE
from rocketmq_spec.spec.grpc_rpcs import (
    CONSUMER_BATCH_SIZE,
    DEFAULT_INVISIBLE_MS,
    MAX_INVISIBLE_MS,
    MAX_LONG_POLLING_MS,
    MIN_INVISIBLE_MS,
    MIN_LONG_POLLING_MS,
    RECEIVE_BEFORE_SETTINGS_DETAIL,
)
from rocketmq_spec.spec.pop import (
    CHANGE_INVISIBLE_TIME_RESPONSE,
    POP_MESSAGE_RESPONSE,
    InitMode,
    build_extra_info,
    pop_retry_topic,
    retry_flag,
)
from rocketmq_spec.spec.properties import PropertyKey

ILLEGAL_POLLING_TIME_SINCE = (5, 0, 3)
"""SDKs before 5.0.3 do not know ILLEGAL_POLLING_TIME and get BAD_REQUEST instead."""


@dataclass(frozen=True)
class Receipt:
    """A decoded receipt handle (``ReceiptHandle.decode``): the POP_CK extra info and a commitlog offset."""

    text: str
    start_offset: int
    retrieve_time: int
    invisible_time: int
    revive_qid: int
    topic_type: str
    broker_name: str
    queue_id: int
    offset: int
    commit_log_offset: int

    @classmethod
    def decode(cls, text: str) -> Receipt:
        """Java's decode fails with an IllegalArgumentException, which the proxy answers as an unexpected
        failure (INTERNAL_SERVER_ERROR), not as INVALID_RECEIPT_HANDLE."""
        parts = text.split(" ")
        if len(parts) < len(RECEIPT_HANDLE) - 1:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, f"Parse failed, dataList size {len(parts)}")
        try:
            return cls(text, int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), parts[4], parts[5],
                       int(parts[6]), int(parts[7]), int(parts[8]) if len(parts) > 8 else -1)
        except ValueError as exc:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, f"NumberFormatException: {exc}") from None

    def real_topic(self, topic: str, group: str) -> str:
        """``getRealTopic``: the pop retry topic for a retried message."""
        return {"1": pop_retry_topic(topic, group), "2": pop_retry_topic(topic, group, v2=True)}.get(
            self.topic_type, topic)

    def check_fresh(self) -> None:
        """``validateReceiptHandle``: a handle whose invisibility has ended is no longer the message's."""
        if self.retrieve_time + self.invisible_time <= int(time.time() * 1000):
            raise Refusal(Code.INVALID_RECEIPT_HANDLE, "receipt handle is expired")


def _millis(duration: Any) -> int:
    return int(duration.seconds * 1000 + duration.nanos // 1_000_000)


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split("-")[0].split("."))
    except ValueError:
        return ()


def _key(record: MessageRecord) -> str:
    """``ExtraInfoUtil.getStartOffsetInfoMapKey``: the retry flag of the record's topic and its queue."""
    return f"{retry_flag(record.topic)}@{record.queue_id}"


def _offset_infos(text: str | None) -> dict[str, list[int]]:
    """``ExtraInfoUtil.parseMsgOffsetInfo`` / ``parseStartOffsetInfo``: ``retry queueId v,v;...`` by
    ``retry@queueId``."""
    infos: dict[str, list[int]] = {}
    for entry in filter(None, (text or "").split(";")):
        retry, queue_id, values = entry.split(" ")
        infos[f"{retry}@{queue_id}"] = [int(v) for v in values.split(",")]
    return infos


class Consumer:
    def __init__(self, broker: LocalBroker, settings: SettingsStore, channels: ChannelRegistry) -> None:
        self._broker = broker
        self._settings = settings
        self._channels = channels
        self._inner = GrpcClientChannel("", "", lambda channel, command: None)
        """The channel of the proxy's own requests (renewals)."""
        self.renewals = Renewals(self._renew, self._online)

    def _online(self, client_id: str, group: str) -> bool:
        channel = self._channels.find(client_id)
        return (channel is not None and not channel.closed.is_set()
                and self._broker.has_consumer(group, channel))

    async def _renew(self, client_id: str, held: Held, invisible_ms: int) -> str | None:
        receipt = Receipt.decode(held.handle)
        return await self._change_invisible("JAVA", self._inner, receipt, held.group, held.topic,
                                            invisible_ms)

    async def _newest(self, ctx: CallContext, group: str, message_id: str, handle: str) -> str:
        """The handle to act with: the proxy's newest one when it renews the message."""
        return await self.renewals.take(ctx.client_id, group, message_id, handle) or handle

    def _polling_ms(self, ctx: CallContext, request: rpc.ReceiveMessageRequest, settings: v2.Settings,
                    remaining_ms: int | None) -> int:
        """The long-polling time of a receive (``ReceiveMessageActivity``), or a Refusal when the call's
        deadline leaves too little."""
        if request.HasField("long_polling_timeout"):
            polling = _millis(request.long_polling_timeout)
        elif remaining_ms is not None:
            polling = remaining_ms - _millis(settings.request_timeout) // 2
        else:
            polling = MAX_LONG_POLLING_MS
        polling = min(max(polling, MIN_LONG_POLLING_MS), MAX_LONG_POLLING_MS)
        if remaining_ms is not None and polling > remaining_ms:
            if remaining_ms < MIN_LONG_POLLING_MS:
                new_client = _version(ctx.client_version) >= ILLEGAL_POLLING_TIME_SINCE
                raise Refusal(Code.ILLEGAL_POLLING_TIME if new_client else Code.BAD_REQUEST,
                              "The deadline time remaining is not enough for polling, please check network "
                              "condition")
            polling = remaining_ms
        return polling

    async def receive(self, ctx: CallContext, channel: GrpcClientChannel, request: rpc.ReceiveMessageRequest,
                      remaining_ms: int | None) -> list[rpc.ReceiveMessageResponse]:
        """The stream's items, the closing delivery timestamp excepted."""
        settings = self._settings.merged(ctx.client_id)
        if settings is None:  # a receive that overtook its client's Settings is not held for them
            raise Refusal(Code.INTERNAL_SERVER_ERROR, RECEIVE_BEFORE_SETTINGS_DETAIL)
        polling = self._polling_ms(ctx, request, settings, remaining_ms)
        topic, group = request.message_queue.topic.name, request.group.name
        validation.topic(topic, self._broker.is_system_topic)
        validation.group(group)
        invisible = _millis(request.invisible_duration)
        if request.auto_renew:
            invisible = DEFAULT_INVISIBLE_MS
        elif not MIN_INVISIBLE_MS <= invisible <= MAX_INVISIBLE_MS:
            raise Refusal(Code.ILLEGAL_INVISIBLE_TIME,
                          f"the invisibleTime is too {'small' if invisible < MIN_INVISIBLE_MS else 'large'}. "
                          f"{'min' if invisible < MIN_INVISIBLE_MS else 'max'} is "
                          f"{MIN_INVISIBLE_MS if invisible < MIN_INVISIBLE_MS else MAX_INVISIBLE_MS}")
        subscription = subscription_data(v2.SubscriptionEntry(topic=request.message_queue.topic,
                                                              expression=request.filter_expression))
        fifo = settings.subscription.fifo
        header = {"consumerGroup": group, "topic": topic, "queueId": -1,
                  "maxMsgNums": min(request.batch_size, CONSUMER_BATCH_SIZE), "invisibleTime": invisible,
                  "pollTime": polling, "bornTime": int(time.time() * 1000), "initMode": InitMode.LAST,
                  "expType": subscription["expressionType"], "exp": subscription["subString"], "order": fifo}
        if request.HasField("attempt_id"):
            header["attemptId"] = request.attempt_id
        command = self._broker.request(RequestCode.POP_MESSAGE, header, language=ctx.language)
        response = await self._broker.call(channel, command, timeout=polling / 1000 + 10)
        if response.code == ResponseCode.POLLING_FULL:
            return [rpc.ReceiveMessageResponse(status=status(Code.TOO_MANY_REQUESTS, "polling full"))]
        if response.code in (ResponseCode.POLLING_TIMEOUT, ResponseCode.PULL_NOT_FOUND):
            return [rpc.ReceiveMessageResponse(status=status(Code.MESSAGE_NOT_FOUND, "no new message"))]
        if response.code != ResponseCode.SUCCESS:  # MQBrokerException through RESPONSE_CODE_MAPPING: a group
            # that does not exist (autoCreateSubscriptionGroup=false) is CONSUMER_GROUP_NOT_FOUND
            raise Refusal(code_for_remoting(response.code), response.remark or str(response.code))
        answer = decode_header(POP_MESSAGE_RESPONSE, response.ext_fields)
        kept = [m for m in await self._filtered(ctx, channel, request, settings, subscription["tagsSet"],
                                                 self._with_receipts(decode_records(response.body), answer))]
        if not kept:
            return [rpc.ReceiveMessageResponse(status=status(Code.MESSAGE_NOT_FOUND, "no match message"))]
        if request.auto_renew:
            now = int(time.time() * 1000)
            for message in kept:
                attributes = message.system_properties
                self.renewals.add(ctx.client_id, Held(group, topic, attributes.message_id,
                                                      attributes.receipt_handle, now,
                                                      attributes.delivery_attempt - 1))
        return [rpc.ReceiveMessageResponse(status=OK_STATUS),
                *(rpc.ReceiveMessageResponse(message=m) for m in kept)]

    def _with_receipts(self, records: list[MessageRecord],
                       answer: Mapping[str, Any]) -> list[tuple[MessageRecord, str, int]]:
        """Each popped message with its receipt handle and its reconsume count (``processPopResponse``)."""
        starts = _offset_infos(answer.get("startOffsetInfo"))
        offsets = _offset_infos(answer.get("msgOffsetInfo"))
        counts = {key: values[0] for key, values in _offset_infos(answer.get("orderCountInfo")).items()}
        ordered: dict[str, list[int]] = {}
        for record in records:
            ordered.setdefault(_key(record), []).append(record.queue_offset)
        result = []
        for record in records:
            key = _key(record)
            pop_ck = record.properties.get(PropertyKey.POP_CK)
            if pop_ck is None:
                offset = offsets[key][ordered[key].index(record.queue_offset)]
                pop_ck = build_extra_info(starts[key][0], answer["popTime"], answer["invisibleTime"],
                                          answer["reviveQid"], retry_flag(record.topic), self._broker.name,
                                          record.queue_id, offset)
            reconsumed = counts.get(key, record.reconsume_times)
            result.append((record, f"{pop_ck} {record.physical_offset}", reconsumed))
        return result

    async def _filtered(self, ctx: CallContext, channel: GrpcClientChannel,
                        request: rpc.ReceiveMessageRequest, settings: v2.Settings, tags: list[str],
                        popped: list[tuple[MessageRecord, str, int]]) -> list[v2.Message]:
        """``PopMessageResultFilterImpl``: a message whose tag does not match is acked, one received as
        often as the group allows goes to the DLQ, the others are delivered."""
        topic, group = request.message_queue.topic.name, request.group.name
        kept = []
        for record, handle, reconsumed in popped:
            receipt = Receipt.decode(handle)
            message_id = record.properties.get(PropertyKey.UNIQ_KEY) or record.offset_msg_id
            if tags and record.tags not in tags:
                await self._ack(ctx, channel, receipt, group, topic)
            elif reconsumed >= settings.backoff_policy.max_attempts:
                await self._to_dlq(ctx, channel, receipt, message_id, group, topic)
            else:
                kept.append(delivered(record, topic, receipt_handle=handle, reconsume_times=reconsumed))
        return kept

    async def _ack(self, ctx: CallContext, channel: GrpcClientChannel, receipt: Receipt, group: str,
                   topic: str) -> int:
        header = {"consumerGroup": group, "topic": receipt.real_topic(topic, group),
                  "queueId": receipt.queue_id, "extraInfo": receipt.text, "offset": receipt.offset}
        command = self._broker.request(RequestCode.ACK_MESSAGE, header, language=ctx.language)
        return (await self._broker.call(channel, command)).code

    async def ack(self, ctx: CallContext, channel: GrpcClientChannel,
                  request: rpc.AckMessageRequest) -> rpc.AckMessageResponse:
        validation.topic(request.topic.name, self._broker.is_system_topic)
        validation.group(request.group.name)
        entries = []
        for entry in request.entries:
            try:
                handle = await self._newest(ctx, request.group.name, entry.message_id, entry.receipt_handle)
                receipt = Receipt.decode(handle)
                receipt.check_fresh()
                code = await self._ack(ctx, channel, receipt, request.group.name, request.topic.name)
                result = status(Code.OK) if code == ResponseCode.SUCCESS else status(
                    Code.INTERNAL_SERVER_ERROR, "ack failed: status is abnormal")
            except Refusal as refusal:
                result = refusal.status()
            entries.append(rpc.AckMessageResultEntry(message_id=entry.message_id,
                                                     receipt_handle=entry.receipt_handle, status=result))
        codes = {e.status.code for e in entries}
        overall = (status(Code.MULTIPLE_RESULTS) if len(codes) > 1 else status(Code(codes.pop())) if codes
                   else status(Code.INTERNAL_SERVER_ERROR, "ack message result is empty"))
        return rpc.AckMessageResponse(status=overall, entries=entries)

    async def change_invisible(self, ctx: CallContext, channel: GrpcClientChannel,
                               request: rpc.ChangeInvisibleDurationRequest
                               ) -> rpc.ChangeInvisibleDurationResponse:
        topic, group = request.topic.name, request.group.name
        validation.topic(topic, self._broker.is_system_topic)
        validation.group(group)
        invisible = _millis(request.invisible_duration)
        if not 0 <= invisible <= MAX_INVISIBLE_MS:
            raise Refusal(Code.ILLEGAL_INVISIBLE_TIME, f"the invisibleTime is too "
                          f"{'small. min is 0' if invisible < 0 else f'large. max is {MAX_INVISIBLE_MS}'}")
        handle = await self._newest(ctx, group, request.message_id, request.receipt_handle)
        receipt = Receipt.decode(handle)
        receipt.check_fresh()
        renewed = await self._change_invisible(ctx.language, channel, receipt, group, topic, invisible)
        if renewed is None:
            return rpc.ChangeInvisibleDurationResponse(status=status(
                Code.INTERNAL_SERVER_ERROR, "changeInvisibleDuration failed: status is abnormal"))
        return rpc.ChangeInvisibleDurationResponse(status=OK_STATUS, receipt_handle=renewed)

    async def _change_invisible(self, language: str, channel: GrpcClientChannel, receipt: Receipt, group: str,
                                topic: str, invisible_ms: int) -> str | None:
        """CHANGE_MESSAGE_INVISIBLETIME: the message's new receipt handle, None when the broker refused."""
        header = {"consumerGroup": group, "topic": receipt.real_topic(topic, group),
                  "queueId": receipt.queue_id, "extraInfo": receipt.text, "offset": receipt.offset,
                  "invisibleTime": invisible_ms}
        command = self._broker.request(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, header, language=language)
        response = await self._broker.call(channel, command)
        if response.code != ResponseCode.SUCCESS:
            return None
        changed = decode_header(CHANGE_INVISIBLE_TIME_RESPONSE, response.ext_fields)
        renewed = build_extra_info(receipt.start_offset, changed["popTime"], changed["invisibleTime"],
                                   changed["reviveQid"], retry_flag(receipt.real_topic(topic, group)),
                                   receipt.broker_name, receipt.queue_id, receipt.offset)
        return f"{renewed} {receipt.commit_log_offset}"

    async def _to_dlq(self, ctx: CallContext, channel: GrpcClientChannel, receipt: Receipt, message_id: str,
                      group: str, topic: str) -> rpc.ForwardMessageToDeadLetterQueueResponse:
        """CONSUMER_SEND_MSG_BACK with delay level -1 (straight to %DLQ%group), then an ack."""
        if receipt.commit_log_offset < 0:
            raise Refusal(Code.INVALID_RECEIPT_HANDLE, "commit log offset is empty")
        header = {"offset": receipt.commit_log_offset, "group": group, "delayLevel": -1,
                  "originMsgId": message_id, "originTopic": receipt.real_topic(topic, group),
                  "maxReconsumeTimes": 0}
        command = self._broker.request(RequestCode.CONSUMER_SEND_MSG_BACK, header, language=ctx.language)
        response = await self._broker.call(channel, command)
        if response.code == ResponseCode.SUCCESS:
            await self._ack(ctx, channel, receipt, group, topic)
        return rpc.ForwardMessageToDeadLetterQueueResponse(status=status(
            code_for_remoting(response.code), response.remark or str(response.code)))

    async def forward_to_dlq(self, ctx: CallContext, channel: GrpcClientChannel,
                             request: rpc.ForwardMessageToDeadLetterQueueRequest
                             ) -> rpc.ForwardMessageToDeadLetterQueueResponse:
        validation.topic(request.topic.name, self._broker.is_system_topic)
        validation.group(request.group.name)
        handle = await self._newest(ctx, request.group.name, request.message_id, request.receipt_handle)
        return await self._to_dlq(ctx, channel, Receipt.decode(handle), request.message_id,
                                  request.group.name, request.topic.name)
