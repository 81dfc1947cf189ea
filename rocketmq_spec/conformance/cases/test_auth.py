"""ACL 2.0 users and ACLs (5.3.0+): the AUTH_* admin commands judged over the wire.

The cases create, read, change and delete users and ACLs of their own (unique names, removed at the end)
and judge the refusals Apache's managers make, remark included. They apply by the target's version word:
a release before 5.3.0 has no such commands (RMQ-AUTH-4X), and a target whose broker.conf names no
metadata providers keeps no tables (RMQ-AUTH-PROVIDERS): both are reported UNSUPPORTED with the reason.
The suite's own targets name them (``rocketmq_spec.conformance.embedded.AUTH_TABLES``).
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.auth import AUTH_RELEASES, Remark
from rocketmq_spec.spec.codes import ResponseCode

from .auth_support import (
    C,
    acl_body,
    ask,
    entries,
    forget,
    json_body,
    new_user,
    refused,
    require_tables,
    resources,
    user_with_acl,
)
from .messaging import Client
from .support import expect_success, unique


@case("RMQ-AUTH-4X", "Releases before 5.3.0 answer AUTH_LIST_USER 3 REQUEST_CODE_NOT_SUPPORTED; 5.3.0+ serve "
      "it (whatever their providers).")
def test_served_by_release(client: Client, check: Check) -> None:
    answer = ask(client, C.AUTH_LIST_USER, {})
    if AUTH_RELEASES.holds_for_version(client.target_version()):
        check.that("served", answer.code != ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                   expected="not 3", actual=f"{answer.code} {answer.remark}")
    else:
        check.equal("code", ResponseCode.REQUEST_CODE_NOT_SUPPORTED, answer.code)


@case("RMQ-AUTH-USER-CREATE", "A created user reads back with userType Normal and userStatus enable; "
      "creating it again answers 16 \"The user is existed\"; a Super type is read case-insensitively.")
def test_user_created_with_defaults(client: Client, check: Check) -> None:
    require_tables(client)
    name = new_user(client, check)
    boss = unique("auth-super")
    try:
        user = json_body(check, "get user", ask(client, C.AUTH_GET_USER, {"username": name}))
        check.equal("user", {"password": "secret-1", "userStatus": "enable", "userType": "Normal",
                             "username": name}, user)
        refused(check, "create again", ask(client, C.AUTH_CREATE_USER, {"username": name},
                                             {"password": "other"}),
                 ResponseCode.NO_PERMISSION, Remark.USER_EXISTS)
        expect_success(check, "create super", ask(client, C.AUTH_CREATE_USER, {"username": boss},
                                                   {"password": "pw", "userType": "super"}))
        got = json_body(check, "get super", ask(client, C.AUTH_GET_USER, {"username": boss}))
        check.equal("userType", "Super", got.get("userType"))
    finally:
        forget(client, name, boss)


@case("RMQ-AUTH-USER-UPDATE", "AUTH_UPDATE_USER changes what the body gives and keeps the rest; an unknown "
      "user answers 16 \"The user is not exist\".")
def test_user_updated(client: Client, check: Check) -> None:
    require_tables(client)
    name = new_user(client, check)
    try:
        expect_success(check, "update status", ask(client, C.AUTH_UPDATE_USER, {"username": name},
                                                    {"userStatus": "disable"}))
        user = json_body(check, "get user", ask(client, C.AUTH_GET_USER, {"username": name}))
        check.equal("user", {"password": "secret-1", "userStatus": "disable", "userType": "Normal",
                             "username": name}, user)
        refused(check, "update unknown", ask(client, C.AUTH_UPDATE_USER, {"username": unique("nobody")},
                                               {"password": "x"}),
                 ResponseCode.NO_PERMISSION, Remark.USER_NOT_EXIST)
    finally:
        forget(client, name)


@case("RMQ-AUTH-USER-GET", "AUTH_LIST_USER with a filter answers the users whose name contains it, ordered "
      "by name; AUTH_GET_USER of an unknown user answers SUCCESS without a body.")
def test_users_listed_by_filter(client: Client, check: Check) -> None:
    require_tables(client)
    prefix = unique("auth-list")
    # eight users made in reverse order: a target listing them in an order of its own (a hash map's) is
    # seen out of name order in every run, not in one of two as with two users
    names = [new_user(client, check, f"{prefix}-{n}") for n in "hgfedcba"]
    try:
        listed = json_body(check, "list", ask(client, C.AUTH_LIST_USER, {"filter": prefix}))
        found = [user["username"] for user in listed if user["username"] in names]
        check.equal("listed users", sorted(names), found)
        none = expect_success(check, "list no match",
                              ask(client, C.AUTH_LIST_USER, {"filter": unique("auth-none")}))
        check.equal("no match: body", None, none.body)
        unknown = expect_success(check, "get unknown", ask(client, C.AUTH_GET_USER,
                                                            {"username": unique("nobody")}))
        check.equal("unknown: body", None, unknown.body)
    finally:
        forget(client, *names)


@case("RMQ-AUTH-USER-DELETE", "AUTH_DELETE_USER removes the user and its ACL; deleting an unknown user "
      "answers SUCCESS.")
def test_user_deleted_with_acl(client: Client, check: Check) -> None:
    require_tables(client)
    name = new_user(client, check)
    expect_success(check, "create acl", ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"},
                                            acl_body()))
    expect_success(check, "delete", ask(client, C.AUTH_DELETE_USER, {"username": name}))
    gone = expect_success(check, "get deleted", ask(client, C.AUTH_GET_USER, {"username": name}))
    check.equal("deleted: body", None, gone.body)
    acls = expect_success(check, "list acls", ask(client, C.AUTH_LIST_ACL, {"subjectFilter": name}))
    check.equal("the user's ACL is gone", None, acls.body)
    expect_success(check, "delete again", ask(client, C.AUTH_DELETE_USER, {"username": name}))


@table("asked", [
    Row("get-blank", "RMQ-AUTH-USER-GET", "AUTH_GET_USER without a name answers 29 \"The username is "
        "blank\".",
        (C.AUTH_GET_USER, {}, None, ResponseCode.INVALID_PARAMETER, Remark.USERNAME_BLANK)),
    Row("create-blank", "RMQ-AUTH-USER-CREATE", "AUTH_CREATE_USER without a name answers 29 \"The username "
        "is blank\".", (C.AUTH_CREATE_USER, {}, {"password": "x"}, ResponseCode.INVALID_PARAMETER,
                        Remark.USERNAME_BLANK)),
    Row("create-no-password", "RMQ-AUTH-USER-CREATE", "AUTH_CREATE_USER without a password answers 16 "
        "\"password can not be blank\".", (C.AUTH_CREATE_USER, {"username": "auth-nopw"}, {},
                                           ResponseCode.NO_PERMISSION, Remark.PASSWORD_BLANK)),
    Row("delete-blank", "RMQ-AUTH-USER-DELETE", "AUTH_DELETE_USER without a name answers 16 \"username can "
        "not be blank\".", (C.AUTH_DELETE_USER, {}, None, ResponseCode.NO_PERMISSION,
                            Remark.USERNAME_CAN_NOT_BE_BLANK)),
    Row("acl-unknown-subject", "RMQ-AUTH-ACL-CREATE", "AUTH_CREATE_ACL for a user that does not exist "
        "answers 16 \"The subject of User:<name> is not exist.\"",
        (C.AUTH_CREATE_ACL, {"subject": "User:auth-nobody-x"}, acl_body(), ResponseCode.NO_PERMISSION,
         Remark.SUBJECT_OF_NOT_EXIST.format(subject="User:auth-nobody-x"))),
    Row("get-acl-unknown-subject", "RMQ-AUTH-ACL-GET", "AUTH_GET_ACL for a user that does not exist answers "
        "16 \"The subject is not exist.\"", (C.AUTH_GET_ACL, {"subject": "User:auth-nobody-x"}, None,
                                          ResponseCode.NO_PERMISSION, Remark.SUBJECT_NOT_EXIST)),
])
def test_refusal(client: Client, check: Check, asked: tuple[Any, ...]) -> None:
    require_tables(client)
    code, header, body, expected, remark = asked
    refused(check, "answer", ask(client, code, header, body), expected, remark)


@case("RMQ-AUTH-ACL-CREATE", "An ACL reads back with canonical resource key, action and decision names and "
      "policy type Custom; an update replaces the entry of the same resource in place and appends the "
      "others.")
def test_acl_created_and_merged(client: Client, check: Check) -> None:
    require_tables(client)
    with user_with_acl(client, check, acl_body(source_ips=["10.0.0.0/8"])) as subject:
        created = json_body(check, "get acl", ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("acl", {"policies": [{"entries": [
            {"actions": ["Pub", "Sub"], "decision": "Allow", "resource": "Topic:auth-t*",
             "sourceIps": ["10.0.0.0/8"]}], "policyType": "Custom"}], "subject": subject}, created)
        update = entries(("Group:auth-g", "Sub", "Deny"), ("Topic:auth-t*", "Get", "Allow"))
        expect_success(check, "update acl", ask(client, C.AUTH_UPDATE_ACL, {"subject": subject}, update))
        merged = json_body(check, "get merged", ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        # A null property written out (``"sourceIps": null``) is RMQ-CMD-BODY-BEAN-ORDER's matter, not
        # the merge's: it reads as the absent property fastjson leaves out.
        check.equal("merged entries", [
            {"actions": ["Get"], "decision": "Allow", "resource": "Topic:auth-t*"},
            {"actions": ["Sub"], "decision": "Deny", "resource": "Group:auth-g"}],
            [{key: value for key, value in entry.items() if value is not None}
             for entry in merged["policies"][0]["entries"]])


@case("RMQ-AUTH-ACL-GET", "AUTH_LIST_ACL keeps the ACLs whose subject contains subjectFilter and, with a "
      "resourceFilter, only the entries whose resource key contains it.")
def test_acls_listed_by_filter(client: Client, check: Check) -> None:
    require_tables(client)
    two = entries(("Topic:auth-t1", "Pub", "Allow"), ("Group:auth-g1", "Sub", "Allow"))
    with user_with_acl(client, check, two) as subject:
        name = subject.partition(":")[2]
        listed = json_body(check, "list", ask(client, C.AUTH_LIST_ACL, {"subjectFilter": name}))
        check.equal("subjects", [subject], [acl["subject"] for acl in listed])
        narrowed = json_body(check, "list by resource", ask(client, C.AUTH_LIST_ACL,
                                                         {"subjectFilter": name, "resourceFilter": "Group:"}))
        check.equal("entries kept", ["Group:auth-g1"], resources(narrowed))


@case("RMQ-AUTH-ACL-DELETE", "AUTH_DELETE_ACL with a resource removes that entry; without one the whole ACL, "
      "after which it answers 16 \"The acl is not exist.\"")
def test_acl_deleted(client: Client, check: Check) -> None:
    require_tables(client)
    two = entries(("Topic:auth-t1", "Pub", "Allow"), ("Topic:auth-t2", "Pub", "Deny"))
    with user_with_acl(client, check, two) as subject:
        expect_success(check, "delete one resource", ask(client, C.AUTH_DELETE_ACL,
                                                          {"subject": subject, "resource": "topic:auth-t1"}))
        left = json_body(check, "get acl", ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("entries left", ["Topic:auth-t2"], resources([left]))
        expect_success(check, "delete acl", ask(client, C.AUTH_DELETE_ACL, {"subject": subject}))
        gone = expect_success(check, "get deleted", ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("deleted: body", None, gone.body)
        refused(check, "delete again", ask(client, C.AUTH_DELETE_ACL, {"subject": subject}),
                 ResponseCode.NO_PERMISSION, Remark.ACL_NOT_EXIST)


@table("body", [
    Row("no-entries", "RMQ-AUTH-ACL-VALIDATE", "An ACL whose policies have no entries answers 16 \"The "
        "policies is empty.\"", ({"policies": [{"entries": []}]}, Remark.POLICIES_EMPTY)),
    Row("unknown-actions", "RMQ-AUTH-ACL-VALIDATE", "An entry whose actions are all unknown names answers 16 "
        "\"The actions is empty.\"", (acl_body(actions=("Fly",)), Remark.ACTIONS_EMPTY)),
    Row("action-any", "RMQ-AUTH-ACL-VALIDATE", "An entry granting Any answers 16 \"The actions can not be "
        "Any.\"", (acl_body(actions=("Any",)), Remark.ACTIONS_ANY)),
    Row("unreadable-resource", "RMQ-AUTH-ACL-VALIDATE", "An entry whose resource type is unknown answers 16 "
        "\"The resource is null.\"", (acl_body(resource="Queue:q"), Remark.RESOURCE_NULL)),
    Row("bad-source-ip", "RMQ-AUTH-ACL-VALIDATE", "An entry with a source that is neither an IP nor a CIDR "
        "answers 16 \"The source ip is invalid.\"",
        (acl_body(source_ips=["999.1.1.1"]), Remark.SOURCE_IP_INVALID)),
    Row("no-decision", "RMQ-AUTH-ACL-VALIDATE", "An entry without a decision answers 16 \"The decision is "
        "null or illegal.\"", (acl_body(decision=None), Remark.DECISION_NULL)),
])
def test_acl_refused(client: Client, check: Check, body: tuple[dict[str, Any], str]) -> None:
    require_tables(client)
    acl, remark = body
    name = new_user(client, check)
    try:
        refused(check, "create acl", ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"}, acl),
                 ResponseCode.NO_PERMISSION, remark)
        nothing = expect_success(check, "get acl", ask(client, C.AUTH_GET_ACL, {"subject": f"User:{name}"}))
        check.equal("nothing stored", None, nothing.body)
    finally:
        forget(client, name)
