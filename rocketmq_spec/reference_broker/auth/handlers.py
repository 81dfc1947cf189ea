"""The AUTH_* admin commands (``rocketmq_spec.spec.auth.AUTH_COMMANDS``) over the broker's user and ACL
tables.

The checks the processor makes itself (a blank user name, a missing body, who may touch a Super user)
come first, then the managers' (``AuthMetadata``), in Java's order, so each malformed request gets the
answer Apache gives it. Registered for every release: a release without the codes (4.9.8) never
dispatches them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata, AuthRefused
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.acl import ACCESS_KEY
from rocketmq_spec.spec.auth import ACL_INFO, USER_INFO, Remark, UserType
from rocketmq_spec.spec.bodies import BodySpec
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

NULL_BODY = "java.lang.NullPointerException"
"""A user command without a body: Java dereferences the missing UserInfo (its remark adds the frame)."""


def _beans(spec: BodySpec, values: Iterable[dict[str, Any]]) -> bytes | None:
    """fastjson's ``toJSONString(list)``; None for an empty list (Java then sets no body)."""
    encoded = [encode_body(spec, value) for value in values]
    return b"[" + b",".join(encoded) + b"]" if encoded else None


def _answering(handler: Callable[[Request], bytes | None]) -> Handler:
    """SUCCESS with the handler's body, or the refusal's code and remark."""
    async def answer(request: Request) -> RemotingCommand:
        try:
            body = handler(request)
        except AuthRefused as refusal:
            return request.reply(refusal.code, refusal.remark)
        return request.reply(remark=remarks.UNSET.template, body=body)
    return answer


class AuthAdminHandlers:
    def __init__(self, metadata: AuthMetadata) -> None:
        self.metadata = metadata

    def table(self) -> dict[RequestCode, Handler]:
        c = RequestCode
        return {c.AUTH_CREATE_USER: _answering(self.create_user),
                c.AUTH_UPDATE_USER: _answering(self.update_user),
                c.AUTH_DELETE_USER: _answering(self.delete_user),
                c.AUTH_GET_USER: _answering(self.get_user),
                c.AUTH_LIST_USER: _answering(self.list_users),
                c.AUTH_CREATE_ACL: _answering(self.put_acl),
                c.AUTH_UPDATE_ACL: _answering(self.put_acl),
                c.AUTH_DELETE_ACL: _answering(self.delete_acl),
                c.AUTH_GET_ACL: _answering(self.get_acl),
                c.AUTH_LIST_ACL: _answering(self.list_acls)}

    def _not_super_login(self, request: Request) -> bool:
        """``isNotSuperUserLogin``: the request is signed (AccessKey present) by a user that is not Super."""
        access_key = (request.command.ext_fields or {}).get(ACCESS_KEY)
        return bool(access_key and not self.metadata.is_super(access_key))

    def _user_info(self, request: Request, super_remark: str) -> dict[str, Any]:
        """The processor's part of create/update: header name, body, who may make a Super user."""
        username = request.header().get("username")
        if not username:
            raise AuthRefused(Remark.USERNAME_BLANK, ResponseCode.INVALID_PARAMETER)
        if request.command.body is None:
            raise AuthRefused(NULL_BODY, ResponseCode.SYSTEM_ERROR)
        info = {**request.body(USER_INFO), "username": username}
        wants_super = str(info.get("userType") or "").lower() == UserType.SUPER.value.lower()
        if wants_super and self._not_super_login(request):
            raise AuthRefused(super_remark, ResponseCode.SYSTEM_ERROR)
        return info

    def create_user(self, request: Request) -> None:
        """RMQ-AUTH-USER-CREATE."""
        self.metadata.create_user(self._user_info(request, Remark.SUPER_CREATE))

    def update_user(self, request: Request) -> None:
        """RMQ-AUTH-USER-UPDATE."""
        info = self._user_info(request, Remark.SUPER_UPDATE)
        old = self.metadata.get_user(info["username"])
        if old is None:
            raise AuthRefused(Remark.USER_NOT_EXIST)
        if old["userType"] == UserType.SUPER.value and self._not_super_login(request):
            raise AuthRefused(Remark.SUPER_UPDATE)
        self.metadata.update_user(info)

    def delete_user(self, request: Request) -> None:
        """RMQ-AUTH-USER-DELETE."""
        username = request.header().get("username")
        user = self.metadata.get_user(username)
        if user is None:
            return
        if user["userType"] == UserType.SUPER.value and self._not_super_login(request):
            raise AuthRefused(Remark.SUPER_UPDATE)
        self.metadata.delete_user(user["username"])

    def get_user(self, request: Request) -> bytes | None:
        """RMQ-AUTH-USER-GET."""
        username = request.header().get("username")
        if username is None or not username.strip():
            raise AuthRefused(Remark.USERNAME_BLANK, ResponseCode.INVALID_PARAMETER)
        user = self.metadata.get_user(username)
        return encode_body(USER_INFO, user) if user is not None else None

    def list_users(self, request: Request) -> bytes | None:
        return _beans(USER_INFO, self.metadata.list_users(request.header().get("filter")))

    def put_acl(self, request: Request) -> None:
        """RMQ-AUTH-ACL-CREATE, for AUTH_CREATE_ACL and AUTH_UPDATE_ACL alike."""
        info = request.body(ACL_INFO) if request.command.body is not None else {}
        self.metadata.put_acl(request.header().get("subject"), info)

    def delete_acl(self, request: Request) -> None:
        """RMQ-AUTH-ACL-DELETE."""
        header = request.header()
        self.metadata.delete_acl(header.get("subject"), header.get("policyType"), header.get("resource"))

    def get_acl(self, request: Request) -> bytes | None:
        """RMQ-AUTH-ACL-GET."""
        acl = self.metadata.get_acl(request.header().get("subject"))
        return encode_body(ACL_INFO, acl) if acl is not None else None

    def list_acls(self, request: Request) -> bytes | None:
        header = request.header()
        return _beans(ACL_INFO, self.metadata.list_acls(header.get("subjectFilter"),
                                                        header.get("resourceFilter")))
