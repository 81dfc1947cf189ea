"""ACL 2.0 authentication (``authenticationEnabled``): every request is signed by a known, enabled user.

The check runs at the same dispatch point as ACL 1.0's guard, before any handler, and uses the same
HMAC-SHA1 signing (``rocketmq_spec.codec.acl``); only the key (the user's password) and the refusals differ
(RMQ-AUTH-AUTHENTICATE). Codes listed in ``authenticationWhitelist`` pass unsigned, as in Java. gRPC calls
are checked by the same users and refusals (RMQ-GRPC-AUTHENTICATE): their signature covers only the
``x-mq-date-time`` metadata, and the whitelist names them by their request message's full name.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocketmq_spec.codec.acl import signature, signed_content
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc_auth import read_authorization
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.acl import ACCESS_KEY, SIGNATURE, UNIQUE_KEY_QUERY
from rocketmq_spec.spec.auth import UNIQUE_KEY_SIGNED_AFTER, AuthenticationRemark, UserStatus
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.grpc_auth import AUTHORIZATION, DATE_TIME, DATE_TIME_MISSING
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

    def password(self, username: str | None) -> str:
        """The password of a known, enabled user; Refused with Java's remark otherwise."""
        if not self.metadata.users_on:
            raise _refused(AuthenticationRemark.NO_PROVIDER)
        if not username:
            raise _refused(AuthenticationRemark.NO_USERNAME)
        user = self.metadata.users.get(username)
        if user is None:
            raise _refused(AuthenticationRemark.USER_NOT_FOUND.format(username=username))
        if user["userStatus"] == UserStatus.DISABLE.value:
            raise _refused(AuthenticationRemark.USER_DISABLED.format(username=username))
        return str(user["password"])

    def check(self, command: RemotingCommand, peer: str) -> None:
        """Let the request through or raise Refused with Java's remark (``DefaultAuthenticationHandler``)."""
        if str(command.code) in self.whitelisted:
            return
        fields = command.ext_fields or {}
        password = self.password(fields.get(ACCESS_KEY))
        left_out = [SIGNATURE]
        if command.version <= ordinal(UNIQUE_KEY_SIGNED_AFTER):
            left_out.append(UNIQUE_KEY_QUERY)
        expected = signature(signed_content(fields, command.body, left_out), password)
        if fields.get(SIGNATURE) != expected:
            raise _refused(AuthenticationRemark.SIGNATURE)

    def check_call(self, metadata: Mapping[str, str], request_name: str) -> str | None:
        """A gRPC call (its metadata, its request message's full name): the user it is signed by (None
        for a whitelisted request), or Refused with the remark Java's proxy answers UNAUTHORIZED with
        (RMQ-GRPC-AUTHENTICATE)."""
        if request_name in self.whitelisted:
            return None
        authorization = metadata.get(AUTHORIZATION)
        date_time = metadata.get(DATE_TIME, "")
        if authorization and not date_time:
            raise _refused(DATE_TIME_MISSING)
        read = read_authorization(authorization) if authorization else None
        password = self.password(read.username if read else None)
        if read is None or read.signature != signature(date_time.encode("utf-8"), password):
            raise _refused(AuthenticationRemark.SIGNATURE)
        return read.username
