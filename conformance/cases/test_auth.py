"""ACL 2.0 users and ACLs (5.3.0+): the AUTH_* admin commands judged over the wire.

The cases create, read, change and delete users and ACLs of their own (unique names, removed at the end)
and judge the refusals Apache's managers make, remark included. They apply by the target's version word:
a release before 5.3.0 has no such commands (RMQ-AUTH-4X), and a target whose broker.conf names no
metadata providers keeps no tables (RMQ-AUTH-PROVIDERS): both are reported UNSUPPORTED with the reason.
The suite's own targets name them (``conformance.cli.AUTH_TABLES``, ``conformance.embedded``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from codec.command import RemotingCommand
from conformance.case import Row, case, table
from conformance.checks import Check
from conformance.verdict import Unsupported
from spec.auth import AUTH_RELEASES, Remark
from spec.codes import RequestCode, ResponseCode
from spec.releases import release_of_version

from .messaging import Client
from .pop_support import broker_setting
from .support import expect_code, expect_success, unique

C = RequestCode
PROVIDER_KEYS = ("authenticationMetadataProvider", "authorizationMetadataProvider")


def _require_tables(client: Client) -> None:
    version = client.target_version()
    if not AUTH_RELEASES.holds_for_version(version):
        found = release_of_version(version)
        raise Unsupported(f"ACL 2.0 commands came with 5.3.0; the target announces version {version} "
                          f"({found.name if found else 'older than 4.9.0'}) (RMQ-AUTH-4X)",
                          expected="a 5.3.0+ target", actual=version)
    missing = [key for key in PROVIDER_KEYS if not broker_setting(client, key)]
    if missing:
        raise Unsupported(f"the target names no {' / '.join(missing)}: it keeps no users or ACLs "
                          "(RMQ-AUTH-PROVIDERS)", expected="metadata providers", actual="none")


def _ask(client: Client, code: int, header: dict[str, str], body: Any = None) -> RemotingCommand:
    return client.call(code, header, json.dumps(body).encode() if body is not None else None)


def _json(check: Check, what: str, response: RemotingCommand) -> Any:
    expect_success(check, what, response)
    check.that(f"{what}: has a body", bool(response.body), expected="a JSON body", actual=response.body)
    return json.loads(response.body or b"null")


def _refused(check: Check, what: str, response: RemotingCommand, code: int, remark: str) -> None:
    expect_code(check, what, response, code)
    check.equal(f"{what}: remark", remark, response.remark)


def _user(client: Client, check: Check, name: str | None = None) -> str:
    name = name or unique("auth-user")
    expect_success(check, "create user", _ask(client, C.AUTH_CREATE_USER, {"username": name},
                                              {"password": "secret-1"}))
    return name


def _acl(resource: str = "topic:auth-t*", actions: tuple[str, ...] = ("pub", "Sub"),
         decision: str | None = "allow", source_ips: list[str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"resource": resource, "actions": list(actions), "decision": decision}
    if source_ips is not None:
        entry["sourceIps"] = source_ips
    return {"policies": [{"entries": [entry]}]}


def _entries(*entries: tuple[str, str, str]) -> dict[str, Any]:
    """One Custom policy of (resource, action, decision) entries."""
    return {"policies": [{"policyType": "Custom", "entries": [
        {"resource": resource, "actions": [action], "decision": decision}
        for resource, action, decision in entries]}]}


def _forget(client: Client, *names: str) -> None:
    for name in names:
        _ask(client, C.AUTH_DELETE_USER, {"username": name})


@contextmanager
def _user_with_acl(client: Client, check: Check, acl: dict[str, Any]) -> Iterator[str]:
    """The subject key of a fresh user holding ``acl``; the user, and so its ACL, is deleted afterwards."""
    name = _user(client, check)
    try:
        expect_success(check, "create acl", _ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"}, acl))
        yield f"User:{name}"
    finally:
        _forget(client, name)


def _resources(acls: list[dict[str, Any]]) -> list[str]:
    return [entry["resource"] for acl in acls for policy in acl["policies"] for entry in policy["entries"]]


@case("RMQ-AUTH-4X", "Releases before 5.3.0 answer AUTH_LIST_USER 3 REQUEST_CODE_NOT_SUPPORTED; 5.3.0+ serve "
      "it (whatever their providers).")
def test_served_by_release(client: Client, check: Check) -> None:
    answer = _ask(client, C.AUTH_LIST_USER, {})
    if AUTH_RELEASES.holds_for_version(client.target_version()):
        check.that("served", answer.code != ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                   expected="not 3", actual=f"{answer.code} {answer.remark}")
    else:
        check.equal("code", ResponseCode.REQUEST_CODE_NOT_SUPPORTED, answer.code)


@case("RMQ-AUTH-USER-CREATE", "A created user reads back with userType Normal and userStatus enable; "
      "creating it again answers 16 \"The user is existed\"; a Super type is read case-insensitively.")
def test_user_created_with_defaults(client: Client, check: Check) -> None:
    _require_tables(client)
    name = _user(client, check)
    boss = unique("auth-super")
    try:
        user = _json(check, "get user", _ask(client, C.AUTH_GET_USER, {"username": name}))
        check.equal("user", {"password": "secret-1", "userStatus": "enable", "userType": "Normal",
                             "username": name}, user)
        _refused(check, "create again", _ask(client, C.AUTH_CREATE_USER, {"username": name},
                                             {"password": "other"}),
                 ResponseCode.NO_PERMISSION, Remark.USER_EXISTS)
        expect_success(check, "create super", _ask(client, C.AUTH_CREATE_USER, {"username": boss},
                                                   {"password": "pw", "userType": "super"}))
        got = _json(check, "get super", _ask(client, C.AUTH_GET_USER, {"username": boss}))
        check.equal("userType", "Super", got.get("userType"))
    finally:
        _forget(client, name, boss)


@case("RMQ-AUTH-USER-UPDATE", "AUTH_UPDATE_USER changes what the body gives and keeps the rest; an unknown "
      "user answers 16 \"The user is not exist\".")
def test_user_updated(client: Client, check: Check) -> None:
    _require_tables(client)
    name = _user(client, check)
    try:
        expect_success(check, "update status", _ask(client, C.AUTH_UPDATE_USER, {"username": name},
                                                    {"userStatus": "disable"}))
        user = _json(check, "get user", _ask(client, C.AUTH_GET_USER, {"username": name}))
        check.equal("user", {"password": "secret-1", "userStatus": "disable", "userType": "Normal",
                             "username": name}, user)
        _refused(check, "update unknown", _ask(client, C.AUTH_UPDATE_USER, {"username": unique("nobody")},
                                               {"password": "x"}),
                 ResponseCode.NO_PERMISSION, Remark.USER_NOT_EXIST)
    finally:
        _forget(client, name)


@case("RMQ-AUTH-USER-GET", "AUTH_LIST_USER with a filter answers the users whose name contains it, ordered "
      "by name; AUTH_GET_USER of an unknown user answers SUCCESS without a body.")
def test_users_listed_by_filter(client: Client, check: Check) -> None:
    _require_tables(client)
    prefix = unique("auth-list")
    names = [_user(client, check, f"{prefix}-{n}") for n in ("b", "a")]
    try:
        listed = _json(check, "list", _ask(client, C.AUTH_LIST_USER, {"filter": prefix}))
        found = [user["username"] for user in listed if user["username"] in names]
        check.equal("listed users", sorted(names), found)
        none = expect_success(check, "list no match",
                              _ask(client, C.AUTH_LIST_USER, {"filter": unique("auth-none")}))
        check.equal("no match: body", None, none.body)
        unknown = expect_success(check, "get unknown", _ask(client, C.AUTH_GET_USER,
                                                            {"username": unique("nobody")}))
        check.equal("unknown: body", None, unknown.body)
    finally:
        _forget(client, *names)


@case("RMQ-AUTH-USER-DELETE", "AUTH_DELETE_USER removes the user and its ACL; deleting an unknown user "
      "answers SUCCESS.")
def test_user_deleted_with_acl(client: Client, check: Check) -> None:
    _require_tables(client)
    name = _user(client, check)
    expect_success(check, "create acl", _ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"}, _acl()))
    expect_success(check, "delete", _ask(client, C.AUTH_DELETE_USER, {"username": name}))
    gone = expect_success(check, "get deleted", _ask(client, C.AUTH_GET_USER, {"username": name}))
    check.equal("deleted: body", None, gone.body)
    acls = expect_success(check, "list acls", _ask(client, C.AUTH_LIST_ACL, {"subjectFilter": name}))
    check.equal("the user's ACL is gone", None, acls.body)
    expect_success(check, "delete again", _ask(client, C.AUTH_DELETE_USER, {"username": name}))


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
        (C.AUTH_CREATE_ACL, {"subject": "User:auth-nobody-x"}, _acl(), ResponseCode.NO_PERMISSION,
         Remark.SUBJECT_OF_NOT_EXIST.format(subject="User:auth-nobody-x"))),
    Row("get-acl-unknown-subject", "RMQ-AUTH-ACL-GET", "AUTH_GET_ACL for a user that does not exist answers "
        "16 \"The subject is not exist.\"", (C.AUTH_GET_ACL, {"subject": "User:auth-nobody-x"}, None,
                                          ResponseCode.NO_PERMISSION, Remark.SUBJECT_NOT_EXIST)),
])
def test_refusal(client: Client, check: Check, asked: tuple[Any, ...]) -> None:
    _require_tables(client)
    code, header, body, expected, remark = asked
    _refused(check, "answer", _ask(client, code, header, body), expected, remark)


@case("RMQ-AUTH-ACL-CREATE", "An ACL reads back with canonical resource key, action and decision names and "
      "policy type Custom; an update replaces the entry of the same resource in place and appends the "
      "others.")
def test_acl_created_and_merged(client: Client, check: Check) -> None:
    _require_tables(client)
    with _user_with_acl(client, check, _acl(source_ips=["10.0.0.0/8"])) as subject:
        created = _json(check, "get acl", _ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("acl", {"policies": [{"entries": [
            {"actions": ["Pub", "Sub"], "decision": "Allow", "resource": "Topic:auth-t*",
             "sourceIps": ["10.0.0.0/8"]}], "policyType": "Custom"}], "subject": subject}, created)
        update = _entries(("Group:auth-g", "Sub", "Deny"), ("Topic:auth-t*", "Get", "Allow"))
        expect_success(check, "update acl", _ask(client, C.AUTH_UPDATE_ACL, {"subject": subject}, update))
        merged = _json(check, "get merged", _ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("merged entries", [
            {"actions": ["Get"], "decision": "Allow", "resource": "Topic:auth-t*"},
            {"actions": ["Sub"], "decision": "Deny", "resource": "Group:auth-g"}],
            merged["policies"][0]["entries"])


@case("RMQ-AUTH-ACL-GET", "AUTH_LIST_ACL keeps the ACLs whose subject contains subjectFilter and, with a "
      "resourceFilter, only the entries whose resource key contains it.")
def test_acls_listed_by_filter(client: Client, check: Check) -> None:
    _require_tables(client)
    two = _entries(("Topic:auth-t1", "Pub", "Allow"), ("Group:auth-g1", "Sub", "Allow"))
    with _user_with_acl(client, check, two) as subject:
        name = subject.partition(":")[2]
        listed = _json(check, "list", _ask(client, C.AUTH_LIST_ACL, {"subjectFilter": name}))
        check.equal("subjects", [subject], [acl["subject"] for acl in listed])
        narrowed = _json(check, "list by resource", _ask(client, C.AUTH_LIST_ACL,
                                                         {"subjectFilter": name, "resourceFilter": "Group:"}))
        check.equal("entries kept", ["Group:auth-g1"], _resources(narrowed))


@case("RMQ-AUTH-ACL-DELETE", "AUTH_DELETE_ACL with a resource removes that entry; without one the whole ACL, "
      "after which it answers 16 \"The acl is not exist.\"")
def test_acl_deleted(client: Client, check: Check) -> None:
    _require_tables(client)
    two = _entries(("Topic:auth-t1", "Pub", "Allow"), ("Topic:auth-t2", "Pub", "Deny"))
    with _user_with_acl(client, check, two) as subject:
        expect_success(check, "delete one resource", _ask(client, C.AUTH_DELETE_ACL,
                                                          {"subject": subject, "resource": "topic:auth-t1"}))
        left = _json(check, "get acl", _ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("entries left", ["Topic:auth-t2"], _resources([left]))
        expect_success(check, "delete acl", _ask(client, C.AUTH_DELETE_ACL, {"subject": subject}))
        gone = expect_success(check, "get deleted", _ask(client, C.AUTH_GET_ACL, {"subject": subject}))
        check.equal("deleted: body", None, gone.body)
        _refused(check, "delete again", _ask(client, C.AUTH_DELETE_ACL, {"subject": subject}),
                 ResponseCode.NO_PERMISSION, Remark.ACL_NOT_EXIST)


@table("body", [
    Row("no-entries", "RMQ-AUTH-ACL-VALIDATE", "An ACL whose policies have no entries answers 16 \"The "
        "policies is empty.\"", ({"policies": [{"entries": []}]}, Remark.POLICIES_EMPTY)),
    Row("unknown-actions", "RMQ-AUTH-ACL-VALIDATE", "An entry whose actions are all unknown names answers 16 "
        "\"The actions is empty.\"", (_acl(actions=("Fly",)), Remark.ACTIONS_EMPTY)),
    Row("action-any", "RMQ-AUTH-ACL-VALIDATE", "An entry granting Any answers 16 \"The actions can not be "
        "Any.\"", (_acl(actions=("Any",)), Remark.ACTIONS_ANY)),
    Row("unreadable-resource", "RMQ-AUTH-ACL-VALIDATE", "An entry whose resource type is unknown answers 16 "
        "\"The resource is null.\"", (_acl(resource="Queue:q"), Remark.RESOURCE_NULL)),
    Row("bad-source-ip", "RMQ-AUTH-ACL-VALIDATE", "An entry with a source that is neither an IP nor a CIDR "
        "answers 16 \"The source ip is invalid.\"",
        (_acl(source_ips=["999.1.1.1"]), Remark.SOURCE_IP_INVALID)),
    Row("no-decision", "RMQ-AUTH-ACL-VALIDATE", "An entry without a decision answers 16 \"The decision is "
        "null or illegal.\"", (_acl(decision=None), Remark.DECISION_NULL)),
])
def test_acl_refused(client: Client, check: Check, body: tuple[dict[str, Any], str]) -> None:
    _require_tables(client)
    acl, remark = body
    name = _user(client, check)
    try:
        _refused(check, "create acl", _ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"}, acl),
                 ResponseCode.NO_PERMISSION, remark)
        nothing = expect_success(check, "get acl", _ask(client, C.AUTH_GET_ACL, {"subject": f"User:{name}"}))
        check.equal("nothing stored", None, nothing.body)
    finally:
        _forget(client, name)
