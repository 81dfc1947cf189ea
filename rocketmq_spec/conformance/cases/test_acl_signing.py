"""ACL 1.0 signatures: which algorithm a broker checks and which extFields it checks it over.

Each row re-signs a request just before it is sent, computing the Signature here from first principles
(``hmac``/``hashlib``/``base64``) rather than with ``rocketmq_spec.codec.acl.signature``, so a broker that
agrees with the codec on a wrong algorithm still fails. Runs only against an ACL target (``--acl``,
``--acl-file``). """

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Iterable

from rocketmq_spec.codec.acl import Credentials, signed_content
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.case import Row, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.acl import ACCESS_KEY, SECURITY_TOKEN, SIGNATURE, Refusal
from rocketmq_spec.spec.codes import RequestCode

from .acl_support import AclTarget, expect_acl_refusal, expect_allowed

Digest = Callable[[bytes, bytes], str]
"""(key bytes, content) -> the Signature text."""


def _hmac_base64(algorithm: str, *, padded: bool = True) -> Digest:
    def digest(key: bytes, content: bytes) -> str:
        text = base64.b64encode(hmac.new(key, content, algorithm).digest()).decode("ascii")
        return text if padded else text.rstrip("=")
    return digest


def _hmac_hex(key: bytes, content: bytes) -> str:
    return hmac.new(key, content, hashlib.sha1).hexdigest()


HMAC_SHA1 = _hmac_base64("sha1")


def _resigned(digest: Digest, left_out: Iterable[str] = ()) -> Callable[[RemotingCommand], None]:
    """Replace the Signature with ``digest`` over the sorted values, ``left_out`` keys skipped too."""
    def change(cmd: RemotingCommand) -> None:
        assert cmd.ext_fields is not None
        content = signed_content(cmd.ext_fields, cmd.body, (SIGNATURE, *left_out))
        cmd.ext_fields[SIGNATURE] = digest(policy.USER.secret_key.encode("utf-8"), content)
    return change


Signing = tuple[Callable[[RemotingCommand], None], bool]
"""How the request is re-signed, and whether the broker must accept it."""


@table("signing", [
    Row("hmac-sha1-base64", "RMQ-ACL-SIGN-HMAC", "A Signature that is the padded standard Base64 of "
        "HmacSHA1 keyed with the secret's UTF-8 bytes, over every extField but itself (AccessKey and "
        "SecurityToken included), is accepted.", (_resigned(HMAC_SHA1), True)),
    Row("hmac-sha256", "RMQ-ACL-SIGN-HMAC", "A Signature made with HmacSHA256 is refused.",
        (_resigned(_hmac_base64("sha256")), False)),
    Row("unpadded-base64", "RMQ-ACL-SIGN-HMAC", "The right HmacSHA1 in Base64 without its '=' padding is "
        "refused.", (_resigned(_hmac_base64("sha1", padded=False)), False)),
    Row("hex-digest", "RMQ-ACL-SIGN-HMAC", "The right HmacSHA1 written in hex is refused.",
        (_resigned(_hmac_hex), False)),
    Row("access-key-left-out", "RMQ-ACL-SIGN-KEYS", "A Signature that leaves the AccessKey's value out is "
        "refused.", (_resigned(HMAC_SHA1, (ACCESS_KEY,)), False)),
    Row("security-token-left-out", "RMQ-ACL-SIGN-KEYS", "A Signature that leaves the SecurityToken's value "
        "out is refused.", (_resigned(HMAC_SHA1, (SECURITY_TOKEN,)), False)),
])
def test_signature_algorithm(signing: Signing, acl: AclTarget, check: Check) -> None:
    change, accepted = signing
    credentials = Credentials(policy.USER.access_key, policy.USER.secret_key, "token-2")
    response = acl.tampered(credentials, RequestCode.GET_ALL_TOPIC_CONFIG, {"zz": "z", "aa": "a"},
                            b"signed body", change=change)
    if accepted:
        expect_allowed(check, "re-signed request", response)
    else:
        expect_acl_refusal(check, "re-signed request", response, Refusal.SIGNATURE,
                           access_key=policy.USER.access_key)
