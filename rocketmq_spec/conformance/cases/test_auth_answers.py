"""ACL 2.0: the shape of AUTH_* answers, resource keys as the broker writes them back, and what the
metadata providers decide.

Like ``test_auth``, these apply to 5.3.0+ targets (RMQ-AUTH-4X) and make users of their own, removed at
the end.
"""

from __future__ import annotations

from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.auth import Remark
from rocketmq_spec.spec.codes import ResponseCode

from .auth_support import (
    C,
    ask,
    entries,
    forget,
    json_body,
    missing_providers,
    new_user,
    refused,
    require_release,
    require_tables,
    resources,
    user_with_acl,
)
from .messaging import Client
from .pop_support import broker_setting
from .support import expect_success, unique

"""The remark ``RemotingCommand.createResponseCommand`` starts a response with; AUTH_* successes keep it."""


@case("RMQ-AUTH-ANSWER", "AUTH_* answers carry no extFields; a success keeps the remark \"not set any "
      "response code\", a GET of nothing answers SUCCESS with no body, a refusal 16 with the reason.")
def test_answer_shape(client: Client, check: Check) -> None:
    require_tables(client)
    name = unique("auth-answer")
    try:
        created = ask(client, C.AUTH_CREATE_USER, {"username": name}, {"password": "secret-1"})
        expect_success(check, "create user", created)
        check.equal("create: remark", remarks.UNSET.template, created.remark)
        nothing = expect_success(check, "get unknown user",
                                 ask(client, C.AUTH_GET_USER, {"username": unique("nobody")}))
        check.equal("get unknown user: body", None, nothing.body)
        again = ask(client, C.AUTH_CREATE_USER, {"username": name}, {"password": "secret-2"})
        refused(check, "create again", again, ResponseCode.NO_PERMISSION, Remark.USER_EXISTS)
        for what, answer in (("create", created), ("get unknown", nothing), ("create again", again)):
            check.equal(f"{what}: extFields", {}, answer.ext_fields or {})
    finally:
        forget(client, name)


@case("RMQ-AUTH-RESOURCE-KEY", "Resource keys in any letter case read back canonical: \"*\", Type:* for "
      "any name, Type:prefix* and Type:name, with Type capitalised.")
def test_resource_keys_canonical(client: Client, check: Check) -> None:
    require_tables(client)
    written = entries(("*", "Get", "Allow"), ("CLUSTER:*", "Get", "Allow"),
                      ("namespace:auth-ns", "Get", "Allow"), ("topic:auth-t-prefix*", "Pub", "Allow"),
                      ("gRoUp:auth-g", "Sub", "Deny"))
    with user_with_acl(client, check, written) as subject:
        read = json_body(check, "get acl", ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("resource keys", sorted(["*", "Cluster:*", "Namespace:auth-ns", "Topic:auth-t-prefix*",
                                             "Group:auth-g"]), sorted(resources([read])))


@case("RMQ-AUTH-PROVIDERS", "With both metadata providers named the AUTH_* commands keep users whether "
      "authenticationEnabled is on or not; without them AUTH_GET_USER answers 1 \"An system error "
      "occurred, please try again later.\"")
def test_tables_follow_providers(client: Client, check: Check) -> None:
    require_release(client)
    missing = missing_providers(client)
    if missing:
        refused(check, f"get user without {' / '.join(missing)}",
                ask(client, C.AUTH_GET_USER, {"username": unique("auth-none")}), ResponseCode.SYSTEM_ERROR,
                Remark.SYSTEM_ERROR)
        return
    check.note("authenticationEnabled", broker_setting(client, "authenticationEnabled") or "(unset)")
    name = new_user(client, check)
    try:
        got = json_body(check, "get the user", ask(client, C.AUTH_GET_USER, {"username": name}))
        check.equal("username", name, got.get("username"))
    finally:
        forget(client, name)
