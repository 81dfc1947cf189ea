"""The producer side of the broker: SEND_MESSAGE (v1 and v2 headers), batches, END_TRANSACTION.

What a send does is decided by its plan (``send_plan``, shared with the send lane); this module runs the
put the plan asks for and maps the store's status to Java's answer (``handlePutMessageResult``). Every send
response, refused or not, carries MSG_REGION and TRACE_ON, because Java adds them before the first check.
"""

from __future__ import annotations

from rocketmq_spec.codec.batch import decode_batch
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.send_plan import SendPlan, SendPlanner
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import (
    BatchItem,
    MessageStore,
    PutMessageStatus,
    PutResult,
)
from rocketmq_spec.reference_broker.store.retention import disk_used_ratio
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import CONSUMEQUEUE_DIR, INDEX_DIR
from rocketmq_spec.spec.sysflag import TransactionType
from rocketmq_spec.spec.timer import ILLEGAL_REMARK, recall_handle
from rocketmq_spec.spec.wire_release import wire_release

PUT_FAILURE_REMARKS = {PutMessageStatus.CREATE_MAPEDFILE_FAILED: remarks.CREATE_MAPPED_FILE_FAILED,
                       PutMessageStatus.OS_PAGECACHE_BUSY: remarks.PAGECACHE_BUSY,
                       PutMessageStatus.UNKNOWN_ERROR: remarks.PUT_UNKNOWN_ERROR}
"""Store statuses answered SYSTEM_ERROR, by the remark ``handlePutMessageResult`` gives each."""


class SendHandlers(SendPlanner):
    """The general route of a send: the plan (``send_plan``), then the put its kind needs, awaited."""

    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 store: MessageStore) -> None:
        super().__init__(config, topics, groups, store)
        self._recall_handles = RequestCode.RECALL_MESSAGE in wire_release(config.wire_release).request_codes
        """RMQ-TIMER-RECALL-HANDLE: releases with RECALL_MESSAGE answer a parked timer message's handle."""

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.SEND_MESSAGE: self.send,
            RequestCode.SEND_MESSAGE_V2: self.send,
            RequestCode.SEND_BATCH_MESSAGE: self.send,
            RequestCode.END_TRANSACTION: self.end_transaction,
        }

    async def send(self, request: Request) -> RemotingCommand:
        """All three codes: Java decides single or batch by the header's ``batch`` flag alone, so the C++
        1.2 client's SEND_MESSAGE with ``batch=1`` (false to ``Boolean.parseBoolean``) stores one message."""
        header = request.header()
        command = request.command
        try:
            plan = self.plan(header, request.connection.peer, command.body or b"", command.version)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={}, extra_fields=self.send_ext)
        result = await self._put(plan, command.body or b"")
        code, remark = self.put_answer(result.status)
        if not result.status.stored:
            return request.reply(code, remark, header={}, extra_fields=self.send_ext)
        if result.timer_out_ms is not None and self._recall_handles and not plan.batch:
            uniq = plan.message.properties.get(PropertyKey.UNIQ_KEY, "")
            handle = recall_handle(header["topic"], self.config.broker_name, result.timer_out_ms, uniq)
            return request.reply(code, None, extra_fields=self.send_ext, header={
                "msgId": result.msg_id, "queueId": plan.queue_id, "queueOffset": result.queue_offset,
                "recallHandle": handle})
        return self.stored_reply(request, code, result.msg_id, plan.queue_id, result.queue_offset)

    async def _put(self, plan: SendPlan, body: bytes) -> PutResult:
        if plan.batch:
            items = [BatchItem(block.body, block.flag, block.properties) for block in decode_batch(body)]
            return await self.store.put_batch_async(plan.message, items)
        if plan.half:
            return await self.store.put_half_message_async(plan.message)
        return await self.store.put_message_async(plan.message)

    def stored_reply(self, request: Request, code: int, msg_id: str, queue_id: int,
                     queue_offset: int) -> RemotingCommand:
        """The answer to a stored send: a JSON answer joined from the plan's template, anything else
        encoded field by field through the spec's response table."""
        ext = self.send_ext
        command = request.command
        if command.serialize_type is SerializeType.JSON:
            template = self.stored_template(code)
            answer = None if template is None else template.command(
                command.opaque, self.stored_values(msg_id, queue_id, queue_offset))
            if answer is not None:
                return answer
        return request.reply(code, None, extra_fields=ext,
                             header={"msgId": msg_id, "queueId": queue_id, "queueOffset": queue_offset})

    def put_answer(self, status: PutMessageStatus) -> tuple[int, str | None]:
        """``handlePutMessageResult``: the response code and remark for a store status."""
        if status is PutMessageStatus.PUT_OK:
            return ResponseCode.SUCCESS, None
        if status.stored:
            return ResponseCode[status.name], None
        if status in (PutMessageStatus.MESSAGE_ILLEGAL, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED):
            return ResponseCode.MESSAGE_ILLEGAL, remarks.MESSAGE_ILLEGAL.format(
                max_size=self.store.config.max_message_size)
        if status is PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL:
            return ResponseCode.MESSAGE_ILLEGAL, ILLEGAL_REMARK.format(
                max_ms=self.store.timer_settings.max_delay_sec * 1000)
        if status is PutMessageStatus.SERVICE_NOT_AVAILABLE:
            return ResponseCode.SERVICE_NOT_AVAILABLE, remarks.SERVICE_NOT_AVAILABLE.format(
                disk_use=self._disk_use())
        failure = PUT_FAILURE_REMARKS.get(status, remarks.PUT_UNKNOWN_DEFAULT)
        return ResponseCode.SYSTEM_ERROR, failure.template

    def _disk_use(self) -> str:
        """``diskUtil()``: how full the disks holding the commitlog, the consume queues and the index are,
        measured as retention measures them."""
        config = self.store.config
        paths = (config.commit_log_path, config.root_dir / CONSUMEQUEUE_DIR, config.root_dir / INDEX_DIR)
        ratios = [disk_used_ratio(path) for path in paths]
        return "CL: {:5.2f} CQ: {:5.2f} INDEX: {:5.2f}".format(*ratios)

    async def end_transaction(self, request: Request) -> RemotingCommand | None:
        """COMMIT writes the half message to its real topic, ROLLBACK only marks it done; anything else
        (0 = unknown) is answered by nothing, the broker waits for its own check."""
        header = request.header()
        decision = header["commitOrRollback"]
        if decision not in (TransactionType.COMMIT, TransactionType.ROLLBACK):
            return None
        half = self.store.read_record(header["commitLogOffset"])
        if half is None:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.HALF_NOT_FOUND.template)
        if half.properties.get(PropertyKey.PRODUCER_GROUP) != header["producerGroup"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.PRODUCER_GROUP_WRONG.template)
        if half.queue_offset != header["tranStateTableOffset"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.TRAN_STATE_OFFSET_WRONG.template)
        if half.physical_offset != header["commitLogOffset"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.COMMIT_LOG_OFFSET_WRONG.template)
        result = self.store.end_transaction(half.physical_offset, decision == TransactionType.COMMIT)
        code, remark = self.put_answer(result.status)
        return request.reply(code, remark)

