"""ACL 2.0 authentication (``authenticationEnabled``): who a broker lets in before any processor runs.

These cases run only against a broker started with authenticationEnabled=true and an
initAuthenticationUser (``--authn``, or ``--broker H:P --auth-user NAME:PASSWORD``), and only they do: such
a broker refuses the unsigned requests of every other case. Requests are signed as ACL 1.0's client signs
them (``rocketmq_spec.codec.acl.sign``), with the username as AccessKey and the password as secret.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Connection, Wire
from rocketmq_spec.spec.auth import AuthenticationRemark
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

from .support import expect_code, expect_success

PROBE = RequestCode.AUTH_LIST_USER
"""A code no authenticationWhitelist of the suite's targets holds."""


def _connect(wire: Wire, broker: Server, credentials: Credentials | None) -> Connection:
    connection = wire.connect(broker.endpoint)
    if credentials is not None:
        connection.hook = functools.partial(sign, credentials=credentials)
    return connection


def _json_call(connection: Connection, code: int, header: dict[str, str], body: object) -> RemotingCommand:
    return connection.call(code, header, json.dumps(body).encode())


def _disabled_user(wire: Wire, broker: Server, check: Check, root: Credentials) -> Credentials:
    """A user the initial (Super) user creates and then disables."""
    user = Credentials(f"authn-{uuid.uuid4().hex[:8]}", "authn-secret")
    admin, named = _connect(wire, broker, root), {"username": user.access_key}
    expect_success(check, "create user", _json_call(admin, RequestCode.AUTH_CREATE_USER, named,
                                                    {"password": user.secret_key}))
    expect_success(check, "disable user", _json_call(admin, RequestCode.AUTH_UPDATE_USER, named,
                                                     {"userStatus": "disable"}))
    return user


Who = Callable[[Wire, Server, Check, Credentials], Credentials | None]


@table("refused", [
    Row("unsigned", "RMQ-AUTH-AUTHENTICATE", "A request without AccessKey is refused 16 \"username cannot "
        "be null.\"", (lambda wire, broker, check, root: None, AuthenticationRemark.NO_USERNAME)),
    Row("unknown-user", "RMQ-AUTH-AUTHENTICATE", "A request signed as an unknown user is refused 16 "
        "\"User:<name> is not found.\"", (lambda wire, broker, check, root: Credentials("authn-nobody", "x"),
                                         AuthenticationRemark.USER_NOT_FOUND)),
    Row("wrong-password", "RMQ-AUTH-AUTHENTICATE", "A request signed with the wrong password is refused 16 "
        "\"check signature failed.\"",
        (lambda wire, broker, check, root: Credentials(root.access_key, "not-the-password"),
         AuthenticationRemark.SIGNATURE)),
    Row("disabled-user", "RMQ-AUTH-AUTHENTICATE", "A request signed by a disabled user is refused 16 "
        "\"User:<name> is disabled.\"", (_disabled_user, AuthenticationRemark.USER_DISABLED)),
])
def test_refused(refused: tuple[Who, str], auth_user: Credentials, broker: Server, wire: Wire,
                 check: Check) -> None:
    who, remark = refused
    credentials = who(wire, broker, check, auth_user)
    answer = _connect(wire, broker, credentials).call(PROBE)
    expect_code(check, "refused", answer, ResponseCode.NO_PERMISSION)
    name = credentials.access_key if credentials else ""
    check.remark("remark", remark.format(username=name), answer.remark)


@case("RMQ-AUTH-AUTHENTICATE", "The initAuthenticationUser exists as a Super user, and a request it signs "
      "is served.")
def test_initial_user_served(auth_user: Credentials, broker: Server, wire: Wire, check: Check) -> None:
    answer = _connect(wire, broker, auth_user).call(RequestCode.AUTH_GET_USER,
                                                    {"username": auth_user.access_key})
    expect_success(check, "AUTH_GET_USER signed by the initial user", answer)
    user = json.loads(answer.body or b"{}")
    check.equal("userType", "Super", user.get("userType"))
