"""``Code``: the outcome of a gRPC call, carried in the ``Status`` of every response.

Values are grouped like HTTP statuses times 100 (20000 OK, 4xxxx the caller's fault, 5xxxx the server's).
A proxy that turns a call into remoting requests maps the broker's ResponseCode to a Code with a small
table (``REMOTING_TO_CODE``); every other broker refusal becomes INTERNAL_SERVER_ERROR with the broker's
remark as message.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.enums import Code as Code  # re-exported: the table's home
from rocketmq_spec.spec.grpc_schema import PROTO_2_1_0, EnumValue, ProtoEnum

CODE = ProtoEnum("Code", "outcome of a call (Status.code)", (
    EnumValue("CODE_UNSPECIFIED", 0),
    EnumValue("OK", 20000, "success"),
    EnumValue("MULTIPLE_RESULTS", 30000, "entries of a batch ended differently: look at each entry"),
    EnumValue("BAD_REQUEST", 40000, "a required field is missing or malformed"),
    EnumValue("ILLEGAL_ACCESS_POINT", 40001, "access point is malformed"),
    EnumValue("ILLEGAL_TOPIC", 40002, "topic name is malformed, or a system topic"),
    EnumValue("ILLEGAL_CONSUMER_GROUP", 40003, "group name is malformed, or a system group"),
    EnumValue("ILLEGAL_MESSAGE_TAG", 40004, "tag is blank, holds '|' or a control character"),
    EnumValue("ILLEGAL_MESSAGE_KEY", 40005, "key is blank or holds a control character"),
    EnumValue("ILLEGAL_MESSAGE_GROUP", 40006, "message group is blank, too long or holds a control "
              "character"),
    EnumValue("ILLEGAL_MESSAGE_PROPERTY_KEY", 40007, "user property key is reserved or holds a control "
              "character"),
    EnumValue("INVALID_TRANSACTION_ID", 40008, "transaction id is unknown or malformed"),
    EnumValue("ILLEGAL_MESSAGE_ID", 40009, "message id is empty"),
    EnumValue("ILLEGAL_FILTER_EXPRESSION", 40010, "filter expression does not parse"),
    EnumValue("ILLEGAL_INVISIBLE_TIME", 40011, "invisible duration out of range"),
    EnumValue("ILLEGAL_DELIVERY_TIME", 40012, "delivery timestamp too far ahead"),
    EnumValue("INVALID_RECEIPT_HANDLE", 40013, "receipt handle malformed or expired"),
    EnumValue("MESSAGE_PROPERTY_CONFLICT_WITH_TYPE", 40014, "message type not accepted by the topic"),
    EnumValue("UNRECOGNIZED_CLIENT_TYPE", 40015, "no settings known for the client, or an unknown type"),
    EnumValue("MESSAGE_CORRUPTED", 40016, "no message, or messages of different topics in one send"),
    EnumValue("CLIENT_ID_REQUIRED", 40017, "x-mq-client-id metadata missing"),
    EnumValue("ILLEGAL_POLLING_TIME", 40018, "long-polling timeout out of range"),
    EnumValue("ILLEGAL_OFFSET", 40019, "offset out of range"),
    EnumValue("ILLEGAL_LITE_TOPIC", 40020, "lite topic malformed", since=PROTO_2_1_0),
    EnumValue("UNAUTHORIZED", 40100, "authentication failed"),
    EnumValue("PAYMENT_REQUIRED", 40200, "account suspended"),
    EnumValue("FORBIDDEN", 40300, "not permitted (no writable or readable queue, ACL)"),
    EnumValue("NOT_FOUND", 40400, "resource not found"),
    EnumValue("MESSAGE_NOT_FOUND", 40401, "no message (an empty receive)"),
    EnumValue("TOPIC_NOT_FOUND", 40402, "topic does not exist"),
    EnumValue("CONSUMER_GROUP_NOT_FOUND", 40403, "group does not exist"),
    EnumValue("OFFSET_NOT_FOUND", 40404, "offset not found"),
    EnumValue("REQUEST_TIMEOUT", 40800, "client-side timeout"),
    EnumValue("PAYLOAD_TOO_LARGE", 41300, "request too large"),
    EnumValue("MESSAGE_BODY_TOO_LARGE", 41301, "body over the server's maximum"),
    EnumValue("MESSAGE_BODY_EMPTY", 41302, "empty body"),
    EnumValue("PRECONDITION_FAILED", 42800, "a precondition is not met"),
    EnumValue("TOO_MANY_REQUESTS", 42900, "throttled (remoting SYSTEM_BUSY)"),
    EnumValue("LITE_TOPIC_QUOTA_EXCEEDED", 42901, "lite topic quota exceeded", since=PROTO_2_1_0),
    EnumValue("LITE_SUBSCRIPTION_QUOTA_EXCEEDED", 42902, "lite subscription quota exceeded",
              since=PROTO_2_1_0),
    EnumValue("REQUEST_HEADER_FIELDS_TOO_LARGE", 43100, "metadata too large"),
    EnumValue("MESSAGE_PROPERTIES_TOO_LARGE", 43101, "too many or too large user properties"),
    EnumValue("INTERNAL_ERROR", 50000, "unexpected condition"),
    EnumValue("INTERNAL_SERVER_ERROR", 50001, "server failure, or a broker refusal without a mapping"),
    EnumValue("HA_NOT_AVAILABLE", 50002, "no slave to replicate to (SLAVE_NOT_AVAILABLE)"),
    EnumValue("NOT_IMPLEMENTED", 50100, "the server does not serve this (REQUEST_CODE_NOT_SUPPORTED)"),
    EnumValue("PROXY_TIMEOUT", 50400, "the broker did not answer the proxy in time"),
    EnumValue("MASTER_PERSISTENCE_TIMEOUT", 50401, "flush to disk timed out (FLUSH_DISK_TIMEOUT)"),
    EnumValue("SLAVE_PERSISTENCE_TIMEOUT", 50402, "replication timed out (FLUSH_SLAVE_TIMEOUT)"),
    EnumValue("UNSUPPORTED", 50500, "unsupported operation"),
    EnumValue("VERSION_UNSUPPORTED", 50501, "not in this version"),
    EnumValue("VERIFY_FIFO_MESSAGE_UNSUPPORTED", 50502, "verifying a FIFO message is not allowed"),
    EnumValue("FAILED_TO_CONSUME_MESSAGE", 60000, "the client failed to consume (verify-message answer)"),
))

# Code: the values above as an enum class (``rocketmq_spec.spec.enums``, written from them by
# ``python -m rocketmq_spec.spec.enum_source``), for code that builds or judges a Status.


@dataclass(frozen=True)
class CodeMapping:
    remoting: str
    code: str
    meaning: str


REMOTING_TO_CODE: tuple[CodeMapping, ...] = (
    CodeMapping(ResponseCode.SUCCESS.name, "OK", "the broker did it"),
    CodeMapping(ResponseCode.SYSTEM_BUSY.name, "TOO_MANY_REQUESTS", "the broker is flow-controlling"),
    CodeMapping(ResponseCode.REQUEST_CODE_NOT_SUPPORTED.name, "NOT_IMPLEMENTED",
                "the broker lacks the command"),
    CodeMapping(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST.name, "CONSUMER_GROUP_NOT_FOUND", "unknown group"),
    CodeMapping(ResponseCode.TOPIC_NOT_EXIST.name, "TOPIC_NOT_FOUND",
                "unknown topic (name server or broker)"),
)
"""``ResponseBuilder.RESPONSE_CODE_MAPPING`` plus ``TopicRouteHelper.isTopicNotExistError``: a broker's
answer becomes these Codes; any other non-success answer is INTERNAL_SERVER_ERROR with its remark."""

FALLBACK_CODE = "INTERNAL_SERVER_ERROR"


def code_for_remoting(response_code: int) -> Code:
    """The Code a proxy answers for a broker's ResponseCode."""
    for row in REMOTING_TO_CODE:
        if ResponseCode[row.remoting] == response_code:
            return Code[row.code]
    return Code[FALLBACK_CODE]
