"""The ``authorization`` metadata of a signed gRPC call (``rocketmq_spec.spec.grpc_auth``): made by a
client, read back by a proxy."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from rocketmq_spec.spec.grpc_auth import (
    ALGORITHM,
    AUTHORIZATION,
    CREDENTIAL,
    CREDENTIAL_SEPARATOR,
    DATE_TIME,
    SIGNATURE,
    SIGNED_HEADERS,
)


def hex_signature(secret: str, date_time: str) -> str:
    """HmacSHA1 of the date-time text keyed with the secret, in upper-case hex (the Java SDK's)."""
    return hmac.new(secret.encode(), date_time.encode(), hashlib.sha1).hexdigest().upper()


def signed_metadata(access_key: str, secret: str, date_time: str) -> list[tuple[str, str]]:
    """The two metadata entries a 5.x SDK adds to every call (``Signature.sign`` of the Java SDK)."""
    authorization = (f"{ALGORITHM} {CREDENTIAL}={access_key}, {SIGNED_HEADERS}={DATE_TIME}, "
                     f"{SIGNATURE}={hex_signature(secret, date_time)}")
    return [(DATE_TIME, date_time), (AUTHORIZATION, authorization)]


@dataclass(frozen=True)
class Authorization:
    """What a proxy reads from ``authorization``: the user name and the signature in Base64 (None when
    absent or not hexadecimal)."""

    username: str | None
    signature: str | None


def read_authorization(text: str) -> Authorization:
    """``DefaultAuthenticationContextBuilder``'s reading: the algorithm word is skipped unchecked, then
    comma-separated ``key=value`` items; the credential up to its first '/' is the user name, the hex
    signature (either case) is kept as Base64, as the remoting signature is compared."""
    _, _, items = text.partition(" ")
    username = signature = None
    for item in items.split(","):
        key, _, value = item.strip().partition("=")
        if key == CREDENTIAL:
            username = value.split(CREDENTIAL_SEPARATOR)[0]
        elif key == SIGNATURE:
            try:
                signature = base64.b64encode(bytes.fromhex(value)).decode("ascii")
            except (ValueError, binascii.Error):
                signature = None
    return Authorization(username, signature)
