"""ACL 2.0 authentication (``authenticationEnabled``): every request is signed by a known, enabled user.

The check runs at the same dispatch point as ACL 1.0's guard, before any handler, and uses the same
HMAC-SHA1 signing (``rocketmq_spec.codec.acl``); only the key (the user's password) and the refusals differ
(RMQ-AUTH-AUTHENTICATE). Codes listed in ``authenticationWhitelist`` pass unsigned, as in Java.
"""

from __future__ import annotations

from rocketmq_spec.codec.acl import signature, signed_content
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.acl import ACCESS_KEY, SIGNATURE, UNIQUE_KEY_QUERY
from rocketmq_spec.spec.auth import UNIQUE_KEY_SIGNED_AFTER, AuthenticationRemark, UserStatus
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.releases import ordinal


def whitelist(text: str | None) -> frozenset[str]:
    """``authenticationWhitelist``: request codes separated by commas (blanks trimmed)."""
    return frozenset(part.strip() for part in (text or "").split(",") if part.strip())


def _refused(remark: str) -> Refused:
    return Refused(ResponseCode.NO_PERMISSION, remark)


class Authenticator:
    def __init__(self, metadata: AuthMetadata, whitelisted: frozenset[str]) -> None:
        self.metadata = metadata
        self.whitelisted = whitelisted

    def check(self, command: RemotingCommand, peer: str) -> None:
        """Let the request through or raise Refused with Java's remark (``DefaultAuthenticationHandler``)."""
        if str(command.code) in self.whitelisted:
            return
        if not self.metadata.users_on:
            raise _refused(AuthenticationRemark.NO_PROVIDER)
        fields = command.ext_fields or {}
        username = fields.get(ACCESS_KEY)
        if not username:
            raise _refused(AuthenticationRemark.NO_USERNAME)
        user = self.metadata.users.get(username)
        if user is None:
            raise _refused(AuthenticationRemark.USER_NOT_FOUND.format(username=username))
        if user["userStatus"] == UserStatus.DISABLE.value:
            raise _refused(AuthenticationRemark.USER_DISABLED.format(username=username))
        left_out = [SIGNATURE]
        if command.version <= ordinal(UNIQUE_KEY_SIGNED_AFTER):
            left_out.append(UNIQUE_KEY_QUERY)
        expected = signature(signed_content(fields, command.body, left_out), user["password"])
        if fields.get(SIGNATURE) != expected:
            raise _refused(AuthenticationRemark.SIGNATURE)
