"""What the ``auth`` cases share: AUTH_* requests with JSON bodies, the users and ACLs they make (and
remove), and when a target keeps no tables to judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.spec.auth import AUTH_RELEASES
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.releases import release_of_version

from .messaging import Client
from .pop_support import broker_setting
from .support import expect_code, expect_success, unique

C = RequestCode
PROVIDER_KEYS = ("authenticationMetadataProvider", "authorizationMetadataProvider")


def require_release(client: Client) -> None:
    """UNSUPPORTED on a release before 5.3.0, which has no AUTH_* commands."""
    version = client.target_version()
    if not AUTH_RELEASES.holds_for_version(version):
        found = release_of_version(version)
        raise Unsupported(f"ACL 2.0 commands came with 5.3.0; the target announces version {version} "
                          f"({found.name if found else 'older than 4.9.0'}) (RMQ-AUTH-4X)",
                          expected="a 5.3.0+ target", actual=version)


def missing_providers(client: Client) -> list[str]:
    """The metadata provider settings the target's broker.conf leaves unset."""
    return [key for key in PROVIDER_KEYS if not broker_setting(client, key)]


def require_tables(client: Client) -> None:
    """UNSUPPORTED unless the target is 5.3.0+ and keeps user and ACL tables (names both providers)."""
    require_release(client)
    missing = missing_providers(client)
    if missing:
        raise Unsupported(f"the target names no {' / '.join(missing)}: it keeps no users or ACLs "
                          "(RMQ-AUTH-PROVIDERS)", expected="metadata providers", actual="none")


def ask(client: Client, code: int, header: dict[str, str], body: Any = None) -> RemotingCommand:
    return client.call(code, header, json.dumps(body).encode() if body is not None else None)


def json_body(check: Check, what: str, response: RemotingCommand) -> Any:
    expect_success(check, what, response)
    check.that(f"{what}: has a body", bool(response.body), expected="a JSON body", actual=response.body)
    return json.loads(response.body or b"null")


def refused(check: Check, what: str, response: RemotingCommand, code: int, remark: str) -> None:
    expect_code(check, what, response, code)
    check.remark(f"{what}: remark", remark, response.remark)


def new_user(client: Client, check: Check, name: str | None = None) -> str:
    name = name or unique("auth-user")
    expect_success(check, "create user", ask(client, C.AUTH_CREATE_USER, {"username": name},
                                              {"password": "secret-1"}))
    return name


def acl_body(resource: str = "topic:auth-t*", actions: tuple[str, ...] = ("pub", "Sub"),
             decision: str | None = "allow", source_ips: list[str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"resource": resource, "actions": list(actions), "decision": decision}
    if source_ips is not None:
        entry["sourceIps"] = source_ips
    return {"policies": [{"entries": [entry]}]}


def entries(*entries: tuple[str, str, str]) -> dict[str, Any]:
    """One Custom policy of (resource, action, decision) entries."""
    return {"policies": [{"policyType": "Custom", "entries": [
        {"resource": resource, "actions": [action], "decision": decision}
        for resource, action, decision in entries]}]}


def forget(client: Client, *names: str) -> None:
    for name in names:
        ask(client, C.AUTH_DELETE_USER, {"username": name})


@contextmanager
def user_with_acl(client: Client, check: Check, acl: dict[str, Any]) -> Iterator[str]:
    """The subject key of a fresh user holding ``acl``; the user, and so its ACL, is deleted afterwards."""
    name = new_user(client, check)
    try:
        expect_success(check, "create acl", ask(client, C.AUTH_CREATE_ACL, {"subject": f"User:{name}"}, acl))
        yield f"User:{name}"
    finally:
        forget(client, name)


def resources(acls: list[dict[str, Any]]) -> list[str]:
    return [entry["resource"] for acl in acls for policy in acl["policies"] for entry in policy["entries"]]
