"""ACL 2.0 users and ACLs for ``rmq-admin``: mqadmin's createUser ... listAcl (5.3.0+ brokers).

Each command sends the AUTH_* request the spec declares (``rocketmq_spec.spec.auth.AUTH_COMMANDS``) with the
body mqadmin builds (``UserInfo.of``, ``AclInfo.of``: one policy without a type, one entry per resource, all
with the same actions, source IPs and decision), to ``-b``'s broker or every master of ``-c``'s cluster.
Answers come back as rows with mqadmin's columns (``#UserName #Password #UserType #UserStatus``,
``#Subject #PolicyType #Resource #Actions #SourceIp #Decision``); a list cell is written as Java prints a
list (``[Pub, Sub]``), an absent one as ``null``.
"""

from __future__ import annotations

import json
from typing import Any

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.spec.bodies import BodySpec
from rocketmq_spec.spec.codes import RequestCode

C = RequestCode


def _java(value: Any) -> str:
    """``String.valueOf`` of a bean field as mqadmin's printf shows it."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(map(_java, value)) + "]"
    return str(value)


def _split(text: str | None) -> list[str] | None:
    """``StringUtils.split(text, ',')`` with each part trimmed; None when the option is absent."""
    return None if text is None else [part.strip() for part in text.split(",") if part]


def user_info(username: str, password: str | None, user_type: str | None,
              user_status: str | None = None) -> dict[str, Any]:
    """``UserInfo.of``: the fields mqadmin was given (null ones are left out of the JSON)."""
    found = {"username": username, "password": password, "userType": user_type, "userStatus": user_status}
    return {key: value for key, value in found.items() if value is not None}


def acl_info(subject: str | None, resources: str | None, actions: str | None, source_ips: str | None,
             decision: str | None) -> dict[str, Any]:
    """``AclInfo.of``: one policy (no type: Custom) with an entry per resource."""
    entry = {"actions": _split(actions), "sourceIps": _split(source_ips), "decision": decision}
    entries = [{"resource": resource, **{k: v for k, v in entry.items() if v is not None}}
               for resource in _split(resources) or []]
    return {"policies": [{"entries": entries}], **({"subject": subject} if subject is not None else {})}


def user_rows(users: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"UserName": _java(user.get("username")), "Password": _java(user.get("password")),
             "UserType": _java(user.get("userType")), "UserStatus": _java(user.get("userStatus"))}
            for user in users]


def acl_rows(acls: list[dict[str, Any]]) -> list[dict[str, str]]:
    """``printAcl``: a row per entry; an ACL without policies is one row of its subject alone."""
    rows = []
    for acl in acls:
        policies = acl.get("policies") or []
        if not policies:
            rows.append({"Subject": _java(acl.get("subject")), **dict.fromkeys(
                ("PolicyType", "Resource", "Actions", "SourceIp", "Decision"), "")})
        rows += [{"Subject": _java(acl.get("subject")), "PolicyType": _java(policy.get("policyType")),
                  "Resource": _java(entry.get("resource")), "Actions": _java(entry.get("actions")),
                  "SourceIp": _java(entry.get("sourceIps")), "Decision": _java(entry.get("decision"))}
                 for policy in policies for entry in policy.get("entries") or []]
    return rows


class AuthAdmin:
    """The AUTH_* commands over an :class:`Admin` session."""

    def __init__(self, admin: Admin) -> None:
        self.admin = admin

    def change(self, command: str, code: RequestCode, header: dict[str, Any], body: dict[str, Any] | None,
               spec: BodySpec | None, *, broker: str | None, cluster: str | None) -> list[str]:
        """Send one change to each target broker; returns them in order."""
        targets = self.admin.targets(broker, cluster, command)
        payload = encode_body(spec, body) if spec is not None and body is not None else None
        for addr in targets:
            with self.admin.connected(addr) as connection:
                connection.call(code, header, payload)
        return targets

    def read(self, command: str, code: RequestCode, header: dict[str, Any], *, broker: str | None,
             cluster: str | None) -> list[Any]:
        """Each target broker's answer body as JSON (None when it sent none)."""
        found = []
        for addr in self.admin.targets(broker, cluster, command):
            with self.admin.connected(addr) as connection:
                body = connection.call(code, header).command.body
                found.append(json.loads(body) if body else None)
        return found



def beans(found: list[Any], spec: BodySpec) -> list[dict[str, Any]]:
    """The UserInfo or AclInfo beans of every answer (a GET's one bean, a LIST's array), typed through the
    spec's table."""
    return [decode_body(spec, json.dumps(item).encode()) for answer in found if answer
            for item in (answer if isinstance(answer, list) else [answer])]
