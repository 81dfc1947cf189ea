"""Admin requests the broker relays to a gRPC client, over its Telemetry stream (``GrpcClientChannel``,
``LocalProxyRelayService``, ``ClientActivity.reportThreadStackTrace`` / ``reportVerifyMessageResult``).

GET_CONSUMER_RUNNING_INFO asking for a thread dump becomes a PrintThreadStackTraceCommand, and the
client's ThreadStackTrace the broker's answer: a ConsumerRunningInfo holding only the dump. Without
``jstackEnable`` nothing is sent and the broker's call times out, as with Apache's proxy.
CONSUME_MESSAGE_DIRECTLY becomes a VerifyMessageCommand with the message, and the client's
VerifyMessageResult a ConsumeMessageDirectlyResult (CR_SUCCESS for OK, CR_LATER for
FAILED_TO_CONSUME_MESSAGE, CR_RETURN_NULL for MESSAGE_CORRUPTED). Each command carries a nonce the client's
answer repeats (RMQ-GRPC-RELAY).
"""

from __future__ import annotations

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.store.record import decode_record
from rocketmq_spec.reference_broker.proxy import messages
from rocketmq_spec.spec.admin_bodies import CONSUME_MESSAGE_DIRECTLY_RESULT, CONSUMER_RUNNING_INFO
from rocketmq_spec.spec.admin_headers import GET_CONSUMER_RUNNING_INFO_REQUEST
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.grpc_codes import Code

CONSUME_RESULTS = {Code.OK: "CR_SUCCESS", Code.FAILED_TO_CONSUME_MESSAGE: "CR_LATER",
                   Code.MESSAGE_CORRUPTED: "CR_RETURN_NULL"}
"""``ClientActivity.buildConsumeMessageDirectlyResult``: a verify result's status as a CMResult."""


def relay_command(command: RemotingCommand, nonce: str) -> rpc.TelemetryCommand | None:
    """The Telemetry command a relayed admin request becomes; None when nothing is sent (a running-info
    request without a thread dump, a request the proxy does not relay). Raises ValueError when the
    request's message does not decode (the broker's call then fails)."""
    if command.code == RequestCode.GET_CONSUMER_RUNNING_INFO:
        header = decode_header(GET_CONSUMER_RUNNING_INFO_REQUEST, command.ext_fields)
        if not header.get("jstackEnable"):
            return None
        return rpc.TelemetryCommand(print_thread_stack_trace_command=rpc.PrintThreadStackTraceCommand(
            nonce=nonce))
    if command.code == RequestCode.CONSUME_MESSAGE_DIRECTLY:
        try:
            record = decode_record(command.body or b"", verify_crc=False)
        except (RocketMQSpecError, ValueError, IndexError) as exc:
            raise ValueError(f"the message to verify does not decode: {exc}") from None
        return rpc.TelemetryCommand(verify_message_command=rpc.VerifyMessageCommand(
            nonce=nonce, message=messages.delivered(record, record.topic)))
    return None


def relay_answer(request: RemotingCommand, answer: rpc.TelemetryCommand) -> RemotingCommand:
    """The broker's response to ``request`` made from the client's Telemetry answer."""
    code = answer.status.code
    if answer.WhichOneof("command") == "thread_stack_trace":
        if code == Code.OK:
            body = encode_body(CONSUMER_RUNNING_INFO, {
                "jstack": answer.thread_stack_trace.thread_stack_trace, "mqTable": {}, "properties": {},
                "statusTable": {}, "subscriptionSet": []})
            return request.response(ResponseCode.SUCCESS, "", body=body)
        if code == Code.VERIFY_FIFO_MESSAGE_UNSUPPORTED:
            return request.response(ResponseCode.NO_PERMISSION, "forbidden to verify message")
        return request.response(ResponseCode.SYSTEM_ERROR, "verify message failed")
    result = {"autoCommit": True, "order": False, "remark": "from gRPC client", "spentTimeMills": 0}
    if code in CONSUME_RESULTS:
        result["consumeResult"] = CONSUME_RESULTS[Code(code)]
    body = encode_body(CONSUME_MESSAGE_DIRECTLY_RESULT, result)
    return request.response(ResponseCode.SUCCESS, "", body=body)
