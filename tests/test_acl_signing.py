"""Signing and verifying (``rocketmq_spec.codec.acl``) against signatures real clients computed.

The C++ client behind PyPI ``rocketmq`` 0.4.4 signs every request, with an empty access and secret key
when none is set: its captured frames are signed requests whose content rule can be checked byte for byte.
"""

from __future__ import annotations

import json

import pytest

from rocketmq_spec.codec.acl import Credentials, sign, signature, signed_content, verify
from rocketmq_spec.codec.command import RemotingCommand, decode
from rocketmq_spec.spec.acl import ACCESS_KEY, SECURITY_TOKEN, SIGNATURE, UNIQUE_KEY_QUERY
from rocketmq_spec.spec.golden import CLIENT_FRAMES

CPP_CLIENT = CLIENT_FRAMES / "py-rocketmq-0.4.4"


def _signed_golden_frames() -> list[RemotingCommand]:
    frames = []
    for index in sorted(CPP_CLIENT.glob("*/INDEX.json")):
        for entry in json.loads(index.read_text()):
            if SIGNATURE in (entry.get("extFields") or {}):
                frames.append(decode((index.parent / entry["file"]).read_bytes()))
    return frames


SIGNED = _signed_golden_frames() if CPP_CLIENT.is_dir() else []


def test_golden_frames_found() -> None:
    if not CPP_CLIENT.is_dir():
        pytest.skip(f"golden client frames not found at {CPP_CLIENT}")
    assert len(SIGNED) > 100
    assert any(cmd.body for cmd in SIGNED), "some signed frames carry a body (sends, heartbeats)"


def test_cpp_client_signatures_verify() -> None:
    """RMQ-ACL-SIGN-CONTENT and RMQ-ACL-SIGN-HMAC: each captured Signature is the one computed here."""
    if not SIGNED:
        pytest.skip("no golden frames")
    for command in SIGNED:
        assert verify(command, ""), command.ext_fields
        assert not verify(command, "another-secret")


def test_resigning_a_golden_frame_reproduces_it() -> None:
    if not SIGNED:
        pytest.skip("no golden frames")
    command = next(cmd for cmd in SIGNED if cmd.body)
    original = dict(command.ext_fields or {})
    copy = RemotingCommand(command.code, ext_fields={k: v for k, v in original.items() if k != SIGNATURE},
                           body=command.body)
    sign(copy, Credentials("", ""))
    assert copy.ext_fields == original


def test_java_vector() -> None:
    """The sheet's JDK-computed example: HmacSHA1("RocketMQ", key "12345678")."""
    assert signature(b"RocketMQ", "12345678") == "IUc8rrO/0gDch8CjObLQsW2rsiA="


def test_content_is_values_sorted_by_key_then_body() -> None:
    fields = {"b": "2", ACCESS_KEY: "ak", "a": "1", SIGNATURE: "ignored", "Z": "z"}
    assert signed_content(fields, b"BODY") == b"akz12BODY"  # AccessKey < Z < a < b


def test_order_is_utf16_code_units() -> None:
    """Java's TreeMap orders U+FF61 after U+10000's surrogates (D800) though its code point is smaller."""
    fields = {"\uff61": "x", "\U00010000": "y"}
    assert signed_content(fields, None) == b"yx"


def test_sign_adds_keys_and_token() -> None:
    command = RemotingCommand.request(10, {"topic": "T"}, b"hello")
    sign(command, Credentials("RocketMQ", "12345678", "token-1"))
    fields = command.ext_fields or {}
    assert fields[ACCESS_KEY] == "RocketMQ" and fields[SECURITY_TOKEN] == "token-1"
    assert fields[SIGNATURE] == signature(b"RocketMQtoken-1Thello", "12345678")
    assert verify(command, "12345678")


def test_verifier_ignores_unique_key_query_but_not_other_late_fields() -> None:
    command = sign(RemotingCommand.request(12, {"topic": "T"}), Credentials("RocketMQ", "12345678"))
    assert command.ext_fields is not None
    command.ext_fields[UNIQUE_KEY_QUERY] = "true"
    assert verify(command, "12345678")
    command.ext_fields["other"] = "x"
    assert not verify(command, "12345678")


def test_sign_replaces_an_old_signature() -> None:
    command = RemotingCommand.request(10, {"topic": "T", SIGNATURE: "stale"})
    sign(command, Credentials("RocketMQ", "12345678"))
    assert verify(command, "12345678")
