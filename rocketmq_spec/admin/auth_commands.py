"""``rmq-admin``'s ACL 2.0 commands: mqadmin's createUser ... listAcl with its option letters
(``tools/command/auth/*SubCommand``), over :mod:`rocketmq_spec.admin.auth`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rocketmq_spec.admin.auth import AuthAdmin, acl_info, acl_rows, beans, user_info, user_rows
from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.options import BROKER_OR_CLUSTER, Options, Runner
from rocketmq_spec.spec.auth import ACL_INFO, USER_INFO
from rocketmq_spec.spec.codes import RequestCode


def _done(verb: str, targets: list[str]) -> list[dict[str, Any]]:
    """mqadmin's "<verb> to <addr> success." per broker, as rows."""
    return [{"broker": addr, "result": f"{verb} success"} for addr in targets]


def _user_change(verb: str, code: RequestCode) -> Runner:
    def run(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
        body = user_info(args.username, getattr(args, "password", None), getattr(args, "user_type", None),
                         getattr(args, "user_status", None))
        return _done(verb, AuthAdmin(admin).change(args.command, code, {"username": args.username},
                                                   body if code != RequestCode.AUTH_DELETE_USER else None,
                                                   USER_INFO, broker=args.broker, cluster=args.cluster))
    return run


def _acl_change(verb: str, code: RequestCode) -> Runner:
    def run(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
        body = acl_info(args.subject, args.resources, args.actions, args.source_ip, args.decision)
        return _done(verb, AuthAdmin(admin).change(args.command, code, {"subject": args.subject}, body,
                                                   ACL_INFO, broker=args.broker, cluster=args.cluster))
    return run


def _delete_acl(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    header = {"subject": args.subject, "resource": args.resources}
    done = AuthAdmin(admin).change(args.command, RequestCode.AUTH_DELETE_ACL, header, None, None,
                                   broker=args.broker, cluster=args.cluster)
    return _done("delete acl", done)


def _read(code: RequestCode, header: Callable[[argparse.Namespace], dict[str, Any]], users: bool) -> Runner:
    def run(admin: Admin, args: argparse.Namespace) -> list[dict[str, str]]:
        found = AuthAdmin(admin).read(args.command, code, header(args), broker=args.broker,
                                      cluster=args.cluster)
        return user_rows(beans(found, USER_INFO)) if users else acl_rows(beans(found, ACL_INFO))
    return run


def _option(letter: str, name: str, dest: str,
            required: bool = False) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An mqadmin option: ``-letter`` / ``--longName``."""
    return (f"-{letter}", f"--{name}"), {"dest": dest, "required": required}


USER = [*BROKER_OR_CLUSTER, _option("u", "username", "username", True)]
SUBJECT = _option("s", "subject", "subject", True)
RESOURCES = _option("r", "resources", "resources")
ACL = [*BROKER_OR_CLUSTER, SUBJECT, RESOURCES, _option("a", "actions", "actions"),
       _option("i", "sourceIp", "source_ip"), _option("d", "decision", "decision")]
C = RequestCode
AUTH_COMMANDS: dict[str, tuple[str, Options, Runner]] = {
    "createUser": ("create an ACL 2.0 user (5.3.0+)", [
        *USER, _option("p", "password", "password", True), _option("t", "userType", "user_type")],
                   _user_change("create user", C.AUTH_CREATE_USER)),
    "updateUser": ("change a user's password, type or status", [
        *USER, _option("p", "password", "password"), _option("t", "userType", "user_type"),
        _option("s", "userStatus", "user_status")], _user_change("update user", C.AUTH_UPDATE_USER)),
    "deleteUser": ("delete a user and its ACL", USER, _user_change("delete user", C.AUTH_DELETE_USER)),
    "getUser": ("a user as the broker keeps it", USER,
                _read(C.AUTH_GET_USER, lambda args: {"username": args.username}, True)),
    "listUser": ("the users whose name contains a filter",
                 [*BROKER_OR_CLUSTER, _option("f", "filter", "filter")],
                 _read(C.AUTH_LIST_USER, lambda args: {"filter": args.filter}, True)),
    "createAcl": ("give a subject (User:name) entries for resources", ACL,
                  _acl_change("create acl", C.AUTH_CREATE_ACL)),
    "updateAcl": ("change or add a subject's entries", ACL, _acl_change("update acl", C.AUTH_UPDATE_ACL)),
    "deleteAcl": ("delete a subject's ACL, or its entry for one resource",
                  [*BROKER_OR_CLUSTER, SUBJECT, RESOURCES], _delete_acl),
    "getAcl": ("a subject's ACL, one row per entry", [*BROKER_OR_CLUSTER, SUBJECT],
               _read(C.AUTH_GET_ACL, lambda args: {"subject": args.subject}, False)),
    "listAcl": ("the ACLs whose subject (and entries whose resource) contain the filters", [
        *BROKER_OR_CLUSTER, _option("s", "subject", "subject"), _option("r", "resource", "resource")],
                _read(C.AUTH_LIST_ACL,
                      lambda args: {"subjectFilter": args.subject, "resourceFilter": args.resource}, False)),
}
"""mqadmin's ACL 2.0 commands, summary, options and what runs them."""
