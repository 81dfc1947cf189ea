"""What the ACL 2.0 authorization cases share: a Normal user with a given ACL, made by the target's initial
(Super) user and removed after the case, and the refusal message a context is denied with.

They run only against a target with authentication on (``--authn`` / ``--auth-user``), and judge only one
whose broker also reports authorizationEnabled=true (RMQ-AUTHZ-DECIDE).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import Connection, Wire
from rocketmq_spec.spec import authorization as authz
from rocketmq_spec.spec.codes import RequestCode

from .admin_support import properties
from .support import expect_success

SOURCE_IP = "127.0.0.1"
"""Where the suite calls from (real peers run on loopback)."""
ENABLED = "authorizationEnabled"


def signed(wire: Wire, broker: Server, credentials: Credentials) -> Connection:
    connection = wire.connect(broker.endpoint)
    connection.hook = functools.partial(sign, credentials=credentials)
    return connection


def require_authorization(wire: Wire, broker: Server, root: Credentials) -> None:
    """UNSUPPORTED unless the broker reports authorizationEnabled=true."""
    answer = signed(wire, broker, root).call(RequestCode.GET_BROKER_CONFIG)
    reported = properties(answer.body).get(ENABLED, "")
    if reported.lower() != "true":
        raise Unsupported(f"the target runs with {ENABLED}={reported or '(not reported)'}: no request is "
                          "authorized (RMQ-AUTHZ-DECIDE)", expected=f"{ENABLED}=true", actual=reported)


def entry(resource: str, actions: list[str], decision: str = "Allow",
          source_ips: list[str] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"resource": resource, "actions": actions, "decision": decision}
    return found | ({"sourceIps": source_ips} if source_ips else {})


@contextmanager
def user_with_acl(wire: Wire, broker: Server, root: Credentials, check: Check,
                  entries: list[dict[str, Any]]) -> Iterator[Credentials]:
    """A Normal user whose Custom policy holds ``entries`` (no ACL when empty), deleted afterwards."""
    require_authorization(wire, broker, root)
    user = Credentials(f"authz-{uuid.uuid4().hex[:8]}", "authz-secret")
    admin, named = signed(wire, broker, root), {"username": user.access_key}
    expect_success(check, "create user", admin.call(RequestCode.AUTH_CREATE_USER, named, json.dumps(
        {"username": user.access_key, "password": user.secret_key, "userType": "Normal"}).encode()))
    try:
        if entries:
            subject = f"User:{user.access_key}"
            body = {"subject": subject, "policies": [{"policyType": "Custom", "entries": entries}]}
            expect_success(check, "create ACL", admin.call(RequestCode.AUTH_CREATE_ACL, {"subject": subject},
                                                           json.dumps(body).encode()))
        yield user
    finally:
        admin.call(RequestCode.AUTH_DELETE_USER, named)


def denied(user: Credentials, resource: str, *, deny: bool = False) -> str:
    """The message a context of ``user`` on ``resource`` is refused with."""
    return authz.NO_PERMISSION.format(subject=f"User:{user.access_key}", resource=resource,
                                      source_ip=SOURCE_IP,
                                      detail=authz.DECISION_DENY if deny else authz.NO_MATCHED_POLICIES)
