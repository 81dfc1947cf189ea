"""The sans-IO parts of the reference broker's gRPC proxy: what a v2 message becomes on the remoting side,
which sends it refuses, how receipt and recall handles read, and Guava's consistent hash (the FIFO queue
choice), each against the Java behaviour it restates."""

from __future__ import annotations

import base64

import pytest

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.grpc_client import message
from rocketmq_spec.reference_broker.proxy import messages, validation
from rocketmq_spec.reference_broker.proxy.call import CallContext, Refusal, address_of
from rocketmq_spec.reference_broker.proxy.consumer import Receipt, _offset_infos
from rocketmq_spec.reference_broker.proxy.relay import relay_answer, relay_command
from rocketmq_spec.spec.admin_bodies import CONSUME_MESSAGE_DIRECTLY_RESULT
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.grpc_codes import Code, code_for_remoting
from rocketmq_spec.spec.grpc_mapping import (
    BORN_HOST,
    SHARDING_KEY,
    TIMER_DELIVER_MS,
    RecallHandleError,
    decode_recall_handle,
)
from rocketmq_spec.spec.hashing import guava_consistent_hash, java_string_hash
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests.broker_support import body, fields


def test_guava_consistent_hash_matches_guava() -> None:
    """Known answers printed by Guava 32's ``Hashing.consistentHash`` (Apache 5.3.3's class path)."""
    assert [guava_consistent_hash(java_string_hash(g), 8) for g in
            ("group-a", "group-b", "g0", "g1", "order-7")] == [7, 3, 0, 6, 4]
    assert (guava_consistent_hash(-5, 16), guava_consistent_hash(0, 4), guava_consistent_hash(1, 4),
            guava_consistent_hash(2**31 - 1, 100)) == (5, 0, 0, 56)


def test_outgoing_message_carries_the_send_mapping() -> None:
    msg = message("T", b"body", tag="TagA", keys=("k1", "k2"), message_group="g1",
                  delivery_ms=1_900_000_000_000)
    out = messages.outgoing(msg, "T", "10.0.0.1:5000", now_ms=1_899_999_999_000)
    props = out.properties
    assert (props[PropertyKey.TAGS], props[PropertyKey.KEYS], props[SHARDING_KEY]) == ("TagA", "k1 k2", "g1")
    assert props[PropertyKey.UNIQ_KEY] == msg.system_properties.message_id == out.message_id
    assert props[PropertyKey.PRODUCER_GROUP] == "T" and props[TIMER_DELIVER_MS] == "1900000000000"
    assert props[BORN_HOST] == "127.0.0.1" and out.sys_flag == 0


@pytest.mark.parametrize(("msg", "code"), [
    (message("T", message_id=""), Code.ILLEGAL_MESSAGE_ID),
    (message("T", b""), Code.MESSAGE_BODY_EMPTY),
    (message("T", tag="a|b"), Code.ILLEGAL_MESSAGE_TAG),
    (message("T", keys=("\x01",)), Code.ILLEGAL_MESSAGE_KEY),
    (message("T", message_group="g" * 64), Code.ILLEGAL_MESSAGE_GROUP),
    (message("T", properties={"TIMER_DELIVER_MS": "1"}), Code.ILLEGAL_MESSAGE_PROPERTY_KEY),
    (message("T", properties={f"k{i}": "v" for i in range(129)}), Code.MESSAGE_PROPERTIES_TOO_LARGE),
])
def test_refused_messages(msg: v2.Message, code: Code) -> None:
    with pytest.raises(Refusal) as refused:
        messages.outgoing(msg, "T", "", now_ms=0)
    assert refused.value.code is code


@pytest.mark.parametrize(("topic_type", "kind", "accepted"), [
    ("NORMAL", {}, True), ("FIFO", {"message_group": "g"}, True), ("MIXED", {"message_group": "g"}, True),
    ("NORMAL", {"message_group": "g"}, False), ("UNSPECIFIED", {}, False),
    ("DELAY", {"delivery_ms": 1}, True), ("TRANSACTION", {"message_type": v2.TRANSACTION}, True),
])
def test_topic_message_type_check(topic_type: str, kind: dict, accepted: bool) -> None:
    msg = message("T", **kind)
    if accepted:
        messages.check_type(topic_type, msg)
    else:
        with pytest.raises(Refusal):
            messages.check_type(topic_type, msg)


def test_topic_and_group_names() -> None:
    validation.topic("Ok-topic_1", lambda name: False)
    for bad in ("", "a b", "t" * 128):
        with pytest.raises(Refusal):
            validation.topic(bad, lambda name: False)
    with pytest.raises(Refusal):
        validation.topic(DEFAULT_TOPIC, lambda name: name == DEFAULT_TOPIC)
    with pytest.raises(Refusal) as refused:
        validation.group("CID_RMQ_SYS_x")
    assert refused.value.code is Code.ILLEGAL_CONSUMER_GROUP


def test_receipt_handles_read_as_java_reads_them() -> None:
    receipt = Receipt.decode("3 1700000000000 30000 2 1 broker-a 0 7 4096")
    assert (receipt.start_offset, receipt.invisible_time, receipt.queue_id, receipt.offset,
            receipt.commit_log_offset) == (3, 30000, 0, 7, 4096)
    assert receipt.real_topic("T", "G") == "%RETRY%G_T"
    with pytest.raises(Refusal) as short:
        Receipt.decode("1 2 3")
    assert short.value.code is Code.INTERNAL_SERVER_ERROR
    with pytest.raises(Refusal) as expired:
        receipt.check_fresh()
    assert expired.value.code is Code.INVALID_RECEIPT_HANDLE


def test_offset_infos_by_retry_flag_and_queue() -> None:
    assert _offset_infos("0 1 5;1 0 3,4") == {"0@1": [5], "1@0": [3, 4]}
    assert _offset_infos(None) == {}


def test_recall_handles() -> None:
    handle = base64.urlsafe_b64encode(b"v1 T broker-a 1700000000000 ABC").decode()
    decoded = decode_recall_handle(handle)
    assert (decoded.topic, decoded.broker_name, decoded.message_id) == ("T", "broker-a", "ABC")
    for bad in ("", "%%%", base64.urlsafe_b64encode(b"v2 a b c d").decode()):
        with pytest.raises(RecallHandleError):
            decode_recall_handle(bad)


def test_call_context_and_codes() -> None:
    ctx = CallContext.of([("x-mq-client-id", "c1"), ("x-mq-language", "GOLANG")], "ipv4:127.0.0.1:9")
    assert (ctx.client_id, ctx.language, ctx.peer) == ("c1", "GO", "127.0.0.1:9")
    assert address_of("ipv6:[::1]:5000") == "::1:5000"
    assert code_for_remoting(17) is Code.TOPIC_NOT_FOUND
    assert code_for_remoting(1) is Code.INTERNAL_SERVER_ERROR


def test_relayed_requests_and_answers() -> None:
    """RMQ-GRPC-RELAY: running info without a thread dump sends nothing; each verify status is its
    CMResult; a failed thread dump is SYSTEM_ERROR, a FIFO one NO_PERMISSION."""
    info = RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO,
                                   {"consumerGroup": "g", "clientId": "c"}, opaque=5)
    assert relay_command(info, "n") is None
    fields(info)["jstackEnable"] = "true"
    dump = relay_command(info, "n")
    assert dump is not None and dump.print_thread_stack_trace_command.nonce == "n"
    with pytest.raises(ValueError):
        relay_command(RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, {"consumerGroup": "g"},
                                              b"garbage"), "n")
    failed = rpc.TelemetryCommand(status=v2.Status(code=v2.Code.INTERNAL_ERROR),
                                  thread_stack_trace=rpc.ThreadStackTrace(nonce="n"))
    assert relay_answer(info, failed).code == ResponseCode.SYSTEM_ERROR
    failed.status.code = v2.Code.VERIFY_FIFO_MESSAGE_UNSUPPORTED
    assert relay_answer(info, failed).code == ResponseCode.NO_PERMISSION
    direct = RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, {"consumerGroup": "g"}, opaque=6)
    for code, result in ((v2.Code.OK, "CR_SUCCESS"), (v2.Code.FAILED_TO_CONSUME_MESSAGE, "CR_LATER"),
                         (v2.Code.MESSAGE_CORRUPTED, "CR_RETURN_NULL"), (v2.Code.INTERNAL_ERROR, None)):
        answer = relay_answer(direct, rpc.TelemetryCommand(status=v2.Status(code=code),
                                                           verify_message_result=rpc.VerifyMessageResult()))
        assert answer.code == ResponseCode.SUCCESS and answer.opaque == 6
        decoded = decode_body(CONSUME_MESSAGE_DIRECTLY_RESULT, body(answer))
        assert decoded.get("consumeResult") == result and decoded["remark"] == "from gRPC client"
