"""SendMessage, EndTransaction and the broker's transaction check-backs (``SendMessageActivity``,
``ProducerProcessor``, ``TransactionProcessor``).

A send is one SEND_MESSAGE to the local broker (a batch when there are several messages), with the topic
as producer group (RMQ-GRPC-PRODUCER-GROUP). A TRANSACTION message's send leaves transaction data behind
(broker, queue and commitlog offsets) that a later EndTransaction needs; a check-back the broker sends to
a producer's channel leaves the same data and reaches the client as a RecoverOrphanedTransactionCommand.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.store.record import decode_record
from rocketmq_spec.reference_broker.proxy import messages, validation
from rocketmq_spec.reference_broker.proxy.call import OK_STATUS, CallContext, Refusal, status
from rocketmq_spec.reference_broker.proxy.channel import GrpcClientChannel
from rocketmq_spec.reference_broker.proxy.local import LocalBroker, refused_unless_success
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_mapping import RecallHandleError, decode_recall_handle
from rocketmq_spec.spec.hashing import guava_consistent_hash, java_string_hash
from rocketmq_spec.spec.headers import CHECK_TRANSACTION_STATE_REQUEST, SEND_MESSAGE_RESPONSE
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import encode_properties
from rocketmq_spec.spec.sysflag import PermName, TransactionType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

TRANSACTION_DATA_EXPIRE_S = 30.0
"""``ProxyConfig.transactionDataExpireMillis``: how long the data of an open transaction is kept."""
DEFAULT_TOPIC_QUEUE_NUMS = 4

SEND_CODES: dict[int, Code] = {
    ResponseCode.SUCCESS: Code.OK, ResponseCode.FLUSH_DISK_TIMEOUT: Code.MASTER_PERSISTENCE_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: Code.SLAVE_PERSISTENCE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: Code.HA_NOT_AVAILABLE}
"""A send's answer → its entry's Code (``convertToSendMessageResponse``); others refuse the send."""


@dataclass(frozen=True)
class TransactionData:
    broker_name: str
    queue_offset: int
    commit_log_offset: int
    expires: float


class TransactionTable:
    """``TransactionDataManager``: open transactions by (producer group, transaction id), each usable once."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], TransactionData] = {}

    def add(self, group: str, transaction_id: str, data: TransactionData) -> None:
        now = time.monotonic()
        self._data = {key: value for key, value in self._data.items() if value.expires > now}
        self._data[(group, transaction_id)] = data

    def take(self, group: str, transaction_id: str) -> TransactionData | None:
        data = self._data.pop((group, transaction_id), None)
        return data if data is not None and data.expires > time.monotonic() else None


class Producer:
    def __init__(self, broker: LocalBroker) -> None:
        self._broker = broker
        self.transactions = TransactionTable()
        self._turns = itertools.count()

    async def send(self, ctx: CallContext, channel: GrpcClientChannel,
                   request: rpc.SendMessageRequest) -> rpc.SendMessageResponse:
        if not request.messages:
            raise Refusal(Code.MESSAGE_CORRUPTED, "no message to send")
        first = request.messages[0]
        topic_name = first.topic.name
        validation.topic(topic_name, self._broker.is_system_topic)
        if any(m.topic != first.topic for m in request.messages):
            raise Refusal(Code.MESSAGE_CORRUPTED, "topic in message is not same")
        now_ms = int(time.time() * 1000)
        outgoing = [messages.outgoing(m, topic_name, ctx.peer, now_ms) for m in request.messages]
        topic = self._broker.topic(topic_name)
        messages.check_type(topic.message_type if topic is not None else messages.UNSPECIFIED, first)
        assert topic is not None, "an unknown topic's type accepts no message"
        if not PermName.WRITE & topic.perm or topic.write_queue_nums <= 0:
            raise Refusal(Code.FORBIDDEN, "no writable queue")
        queue_id = self._queue(topic_name, topic.write_queue_nums, request.messages)
        head = outgoing[0]
        header = {"producerGroup": topic_name, "topic": topic_name, "defaultTopic": DEFAULT_TOPIC,
                  "defaultTopicQueueNums": DEFAULT_TOPIC_QUEUE_NUMS, "queueId": queue_id,
                  "sysFlag": head.sys_flag, "bornTimestamp": head.born_timestamp, "flag": 0,
                  "properties": encode_properties(head.properties), "reconsumeTimes": 0,
                  "batch": len(outgoing) > 1}
        body = head.body if len(outgoing) == 1 else encode_batch(
            [BatchBlock(0, o.body, encode_properties(o.properties)) for o in outgoing])
        command = self._broker.request(RequestCode.SEND_MESSAGE, header, body, language=ctx.language)
        response = await self._broker.call(channel, command)
        code = SEND_CODES.get(response.code)
        if code is None:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, response.remark or f"send failed with {response.code}")
        answer = decode_header(SEND_MESSAGE_RESPONSE, response.ext_fields)
        message_id = ",".join(o.message_id for o in outgoing)
        # a 5.x broker answers the message's UNIQ_KEY as transactionId, a 4.x one nothing: the same id
        prepared = bool(head.sys_flag & TransactionType.PREPARED)
        transaction_id = answer.get("transactionId") or (message_id if prepared else "")
        if code is Code.OK and prepared and transaction_id:
            commit_log_offset = decode_offset_msg_id(answer["msgId"].split(",")[0]).offset
            self.transactions.add(topic_name, transaction_id, TransactionData(
                self._broker.name, answer["queueOffset"], commit_log_offset,
                time.monotonic() + TRANSACTION_DATA_EXPIRE_S))
        entry = rpc.SendResultEntry(status=status(code, code.name if code is Code.OK else
                                                  f"send message failed, sendStatus={response.code}"))
        if code is Code.OK:
            entry.offset = answer["queueOffset"]
            entry.message_id = message_id
            entry.transaction_id = transaction_id
            entry.recall_handle = answer.get("recallHandle") or ""
        return rpc.SendMessageResponse(status=status(code, code.name), entries=[entry])

    def _queue(self, topic: str, queues: int, sent: Sequence[v2.Message]) -> int:
        """A single FIFO message goes to the queue its group hashes to, anything else to the next queue
        (``SendMessageQueueSelector``; RMQ-GRPC-SEND-FIFO)."""
        group = sent[0].system_properties.message_group if len(sent) == 1 else ""
        if group:
            return guava_consistent_hash(java_string_hash(group), queues)
        return next(self._turns) % queues

    async def end_transaction(self, ctx: CallContext, channel: GrpcClientChannel,
                              request: rpc.EndTransactionRequest) -> rpc.EndTransactionResponse:
        topic = request.topic.name
        validation.topic(topic, self._broker.is_system_topic)
        if not request.transaction_id.strip():
            raise Refusal(Code.INVALID_TRANSACTION_ID, "transaction id cannot be empty")
        resolution = {v2.COMMIT: TransactionType.COMMIT, v2.ROLLBACK: TransactionType.ROLLBACK}.get(
            request.resolution, TransactionType.NOT_TYPE)
        data = self.transactions.take(topic, request.transaction_id)
        if data is None:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, "cannot found transaction data")
        header = {"producerGroup": topic, "tranStateTableOffset": data.queue_offset,
                  "commitLogOffset": data.commit_log_offset, "commitOrRollback": int(resolution),
                  "fromTransactionCheck": request.source == v2.SOURCE_SERVER_CHECK,
                  "msgId": request.message_id, "transactionId": request.transaction_id}
        command = self._broker.request(RequestCode.END_TRANSACTION, header, language=ctx.language,
                                       oneway=True)
        await self._broker.call(channel, command)
        return rpc.EndTransactionResponse(status=OK_STATUS)

    async def recall(self, ctx: CallContext, channel: GrpcClientChannel,
                     request: rpc.RecallMessageRequest) -> rpc.RecallMessageResponse:
        """RECALL_MESSAGE to the broker the handle names (``ProducerProcessor.recallMessage``)."""
        topic = request.topic.name
        validation.topic(topic, self._broker.is_system_topic)
        topic_type = messages.check_type_of_topic(self._broker.topic(topic))
        if topic_type not in ("DELAY", "MIXED"):
            raise Refusal(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, f"TopicMessageType validate failed, the "
                          f"expected type is {topic_type}, but actual type is DELAY")
        try:
            handle = decode_recall_handle(request.recall_handle)
        except RecallHandleError as exc:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, str(exc)) from None
        header = {"topic": topic, "recallHandle": request.recall_handle, "bname": handle.broker_name}
        command = self._broker.request(RequestCode.RECALL_MESSAGE, header, language=ctx.language)
        response = await self._broker.call(channel, command)
        refused_unless_success(response)
        recalled = (response.ext_fields or {}).get("msgId", handle.message_id)
        return rpc.RecallMessageResponse(status=OK_STATUS, message_id=recalled)

    def recover_command(self, command: RemotingCommand) -> rpc.TelemetryCommand | None:
        """A CHECK_TRANSACTION_STATE for a producer's channel, as the Telemetry command the client gets;
        the transaction's data is kept for the EndTransaction that answers it."""
        if command.code != RequestCode.CHECK_TRANSACTION_STATE:
            return None
        header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, command.ext_fields)
        record = decode_record(command.body or b"", verify_crc=False)
        group = record.properties.get("PGROUP", record.topic)
        transaction_id = header.get("transactionId") or header.get("msgId") or ""
        self.transactions.add(group, transaction_id, TransactionData(
            self._broker.name, header["tranStateTableOffset"], header["commitLogOffset"],
            time.monotonic() + TRANSACTION_DATA_EXPIRE_S))
        topic = record.properties.get("REAL_TOPIC", record.topic)
        recover = rpc.RecoverOrphanedTransactionCommand(message=messages.delivered(record, topic),
                                                        transaction_id=transaction_id)
        return rpc.TelemetryCommand(recover_orphaned_transaction_command=recover)
