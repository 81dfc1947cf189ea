"""RocketMQ 5's gRPC protocol (``apache.rocketmq.v2``): how its messages, enums and RPCs are tabulated.

The 5.x SDKs never speak classic remoting: they call ``MessagingService`` of package ``apache.rocketmq.v2``
over HTTP/2 on a proxy (Apache's ``rocketmq-proxy``, gRPC port 8081), which turns each call into remoting
requests to brokers. The interface is published by Apache as ``.proto`` files in rocketmq-apis; the spec
restates it as tables (``grpc_definition``, ``grpc_service``, ``grpc_codes``, ``grpc_rpcs``) with a row per
field, enum value and RPC, each saying the proto release that introduced it. The ``.proto`` text the project
compiles is emitted from these tables (``rocketmq_spec.codec.grpc.emit``), never copied.

Releases of rocketmq-apis: Apache RocketMQ 5.3.3 builds against 2.0.4, 5.5.0 against 2.1.2. Every request
carries the metadata keys below; the outcome of an RPC is the ``Code`` in its response's ``Status``, not a
gRPC status code, which stays OK unless the call itself could not be processed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

PACKAGE = "apache.rocketmq.v2"
"""The protobuf package: message names on the wire are ``apache.rocketmq.v2.<Name>``."""

SERVICE = "MessagingService"
"""The service name: a method's HTTP/2 path is ``/apache.rocketmq.v2.MessagingService/<Rpc>``."""

DEFAULT_PROXY_PORT = 8081
"""``ProxyConfig.grpcServerPort``: where Apache's proxy serves gRPC by default."""

PROTO_2_0_4 = "2.0.4"
PROTO_2_1_0 = "2.1.0"
PROTO_2_1_1 = "2.1.1"
PROTO_2_1_2 = "2.1.2"
PROTO_RELEASES = (PROTO_2_0_4, PROTO_2_1_0, PROTO_2_1_1, PROTO_2_1_2)
"""Releases of rocketmq-apis the tables cover: 2.0.4 is the baseline (Apache RocketMQ 5.3.3), 2.1.2 the
newest (Apache RocketMQ 5.5.0)."""

PROTO_OF_RELEASE = {"5.3.3": PROTO_2_0_4, "5.4.0": PROTO_2_0_4, "5.5.0": PROTO_2_1_2}
"""The rocketmq-proto release each Apache RocketMQ release is built against (its pom's
``rocketmq-proto.version``)."""

_APIS = "apache/rocketmq-apis: apache/rocketmq/v2/"
_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/"


def release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


class File(enum.Enum):
    """The two files of the interface: shared types, and the service with its requests and responses."""

    DEFINITION = "definition"
    SERVICE = "service"


class Label(enum.Enum):
    """How many values a field holds and whether its presence is tracked (proto3 ``optional``)."""

    SINGULAR = ""
    OPTIONAL = "optional"
    REPEATED = "repeated"


@dataclass(frozen=True)
class ProtoField:
    name: str
    number: int
    type: str
    """A scalar (``string``, ``int32`` ...), a message or enum of the package, a well-known type
    (``google.protobuf.Timestamp``) or ``map<string, string>``."""
    meaning: str
    label: Label = Label.SINGULAR
    oneof: str = ""
    """The oneof group the field belongs to, if any."""
    since: str = PROTO_2_0_4


@dataclass(frozen=True)
class ProtoMessage:
    name: str
    meaning: str
    fields: tuple[ProtoField, ...]
    file: File = File.DEFINITION
    since: str = PROTO_2_0_4

    def present_in(self, release: str) -> tuple[ProtoField, ...]:
        """The fields a given proto release declares."""
        return tuple(f for f in self.fields if release_key(f.since) <= release_key(release))


@dataclass(frozen=True)
class EnumValue:
    name: str
    number: int
    meaning: str = ""
    since: str = PROTO_2_0_4


@dataclass(frozen=True)
class ProtoEnum:
    name: str
    meaning: str
    values: tuple[EnumValue, ...]
    file: File = File.DEFINITION
    since: str = PROTO_2_0_4
    parent: str = ""
    """The message an enum is nested in (``OffsetOption.Policy``); empty for a top-level enum."""


@dataclass(frozen=True)
class MetadataKey:
    key: str
    meaning: str
    required: bool = False


REQUEST_METADATA: tuple[MetadataKey, ...] = (
    MetadataKey("x-mq-client-id", "client identity: ties RPCs, the Telemetry stream and the broker's "
                "producer/consumer channel together", required=True),
    MetadataKey("x-mq-language", "SDK language (a Language value name: JAVA, GOLANG, PYTHON, NODE_JS ...)"),
    MetadataKey("x-mq-client-version", "SDK version string"),
    MetadataKey("x-mq-protocol", "protocol version, v2"),
    MetadataKey("x-mq-request-id", "a fresh id per request, for tracing"),
    MetadataKey("x-mq-namespace", "namespace prefixed to topic and group names (empty: none)"),
    MetadataKey("x-mq-date-time", "request time, yyyyMMdd'T'HHmmss'Z', signed with authorization"),
    MetadataKey("authorization", "MQv2-HMAC-SHA1 Credential=AK, SignedHeaders=x-mq-date-time, Signature=..."),
    MetadataKey("x-mq-session-token", "STS session token, when the credentials carry one"),
)
"""gRPC metadata the SDKs send with every call (``GrpcConstants``); all are ASCII strings."""

GRPC_WIRE_NAMES = clause(
    "RMQ-GRPC-WIRE-NAMES", Level.MUST,
    "The service is apache.rocketmq.v2.MessagingService and each RPC is served at "
    "/apache.rocketmq.v2.MessagingService/<Rpc>, with the message and field numbers of the grpc_definition "
    "and grpc_service tables: the official SDKs reach nothing else.",
    source=_APIS + "service.proto")
GRPC_STATUS_IN_BODY = clause(
    "RMQ-GRPC-STATUS-IN-BODY", Level.MUST,
    "A unary RPC that was processed answers gRPC status OK and puts its outcome in the response's "
    "status.code (a Code value) and status.message; a refusal of the request is a Code, not a gRPC error.",
    source=_PROXY + "grpc/v2/GrpcMessagingApplication.java")
GRPC_CLIENT_ID = clause(
    "RMQ-GRPC-CLIENT-ID", Level.MUST,
    "A request without x-mq-client-id metadata is answered with CLIENT_ID_REQUIRED and does nothing.",
    source=_PROXY + "grpc/v2/GrpcMessagingApplication.java")
GRPC_UNKNOWN_FIELDS = clause(
    "RMQ-GRPC-UNKNOWN-FIELDS", Level.MUST,
    "Fields a server does not know (numbers of a newer proto release) are skipped, so a 2.1.x client "
    "is served by a 2.0.4 server for every RPC 2.0.4 declares.",
    source="protobuf encoding: unknown fields")
