"""The signed metadata of a 5.x SDK's gRPC call, and the reference proxy's reading of it."""

from __future__ import annotations

from rocketmq_spec.codec.grpc_auth import hex_signature, read_authorization, signed_metadata
from rocketmq_spec.spec.grpc_auth import AUTHORIZATION, DATE_TIME


def test_signature_test_vector() -> None:
    """HmacSHA1("20250101T000000Z") keyed "secret": the Java SDK's upper-case hex."""
    assert hex_signature("secret", "20250101T000000Z") == "5DD7C3638FC6955495D4B7D3C4D96A20F092C013"


def test_signed_metadata_reads_back() -> None:
    metadata = dict(signed_metadata("alice", "secret", "20250101T000000Z"))
    assert metadata[DATE_TIME] == "20250101T000000Z"
    assert metadata[AUTHORIZATION].startswith(
        "MQv2-HMAC-SHA1 Credential=alice, SignedHeaders=x-mq-date-time, ")
    read = read_authorization(metadata[AUTHORIZATION])
    assert (read.username, read.signature) == ("alice", "XdfDY4/GlVSV1LfTxNlqIPCSwBM=")


def test_go_credential_and_lower_case_hex_read_alike() -> None:
    read = read_authorization("MQv2-HMAC-SHA1 Credential=alice//Rocketmq, SignedHeaders=x-mq-date-time, "
                              "Signature=5dd7c3638fc6955495d4b7d3c4d96a20f092c013")
    assert (read.username, read.signature) == ("alice", "XdfDY4/GlVSV1LfTxNlqIPCSwBM=")


def test_a_signature_that_is_not_hex_reads_as_none() -> None:
    assert read_authorization("MQv2-HMAC-SHA1 Credential=a, Signature=zz").signature is None
