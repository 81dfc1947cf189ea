"""Signing and verifying requests the way ACL 1.0 does (``rocketmq_spec.spec.acl``: RMQ-ACL-SIGN-*).

``sign`` is what ``AclClientRPCHook.doBeforeRequest`` does to a request just before it is written, so a
test can send signed requests to any broker; ``verify`` is the broker's half, over the fields received.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.spec.acl import ACCESS_KEY, SECURITY_TOKEN, SERVER_UNSIGNED_KEYS, SIGNATURE


@dataclass(frozen=True)
class Credentials:
    """``SessionCredentials``: what a client signs with."""

    access_key: str
    secret_key: str
    security_token: str | None = None


def _java_string_order(key: str) -> bytes:
    """Java's ``String.compareTo`` orders by UTF-16 code units, which big-endian UTF-16 bytes reproduce."""
    return key.encode("utf-16-be", errors="surrogatepass")


def signed_content(ext_fields: Mapping[str, str] | None, body: bytes | None,
                   left_out: Iterable[str] = (SIGNATURE,)) -> bytes:
    """The bytes a signature covers: field values sorted by key (``left_out`` keys skipped), then the body.

    Java encodes the concatenation with ``String.getBytes(UTF_8)``, which writes ``?`` for a lone
    surrogate; ``errors="replace"`` does the same.
    """
    skipped = set(left_out)
    fields = ext_fields or {}
    values = "".join(fields[key] for key in sorted(fields, key=_java_string_order) if key not in skipped)
    return values.encode("utf-8", errors="replace") + (body or b"")


def signature(content: bytes, secret_key: str) -> str:
    """Base64 of HmacSHA1(content) keyed with the secret's UTF-8 bytes (``AclSigner.calSignature``)."""
    digest = hmac.new(secret_key.encode("utf-8", errors="replace"), content, hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def sign(command: RemotingCommand, credentials: Credentials) -> RemotingCommand:
    """Add AccessKey (and SecurityToken) and the Signature over every field and the body, in place.

    A Signature already present is replaced, as Java's hook overwrites it; the command is returned so a
    call can be chained.
    """
    fields = command.ext_fields if command.ext_fields is not None else {}
    fields[ACCESS_KEY] = credentials.access_key
    if credentials.security_token is not None:
        fields[SECURITY_TOKEN] = credentials.security_token
    fields[SIGNATURE] = signature(signed_content(fields, command.body), credentials.secret_key)
    command.ext_fields = fields
    return command


def verify(command: RemotingCommand, secret_key: str) -> bool:
    """Whether the request's Signature is the one the broker computes over what it received."""
    fields = command.ext_fields or {}
    expected = signature(signed_content(fields, command.body, SERVER_UNSIGNED_KEYS), secret_key)
    return fields.get(SIGNATURE) == expected
