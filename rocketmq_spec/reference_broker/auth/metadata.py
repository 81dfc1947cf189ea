"""The broker's ACL 2.0 tables (users, ACLs) with the rules of Java's metadata managers.

Apache keeps the tables in RocksDB (``config/users``, ``config/acls`` under the store root), a format of
its own that no other implementation reads; the reference broker keeps the same records as JSON
(``config/users.json``, ``config/acls.json``, written through the broker's config-file writer), so
neither side takes over the other's users and ACLs. Every change is written before it is answered, as
Java flushes RocksDB's WAL, so the tables survive a restart.

Users are stored as UserInfo beans, ACLs as AclInfo beans whose resource keys are canonical; an ACL's
policies and entries keep Java's order (merged entries stay in place, new ones are appended).
"""

from __future__ import annotations

import json
from typing import Any

from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.spec.auth import (
    SUBJECT_USER,
    Action,
    Decision,
    PolicyType,
    Remark,
    UserStatus,
    UserType,
)
from rocketmq_spec.spec.auth_resource import is_valid_ip_or_cidr, parse_resource
from rocketmq_spec.spec.codes import ResponseCode

USERS_FILE = "users.json"
ACLS_FILE = "acls.json"

User = dict[str, Any]
Acl = dict[str, Any]


class AuthRefused(Exception):
    """A refusal with the code and remark Java answers it with."""

    def __init__(self, remark: str, code: int = ResponseCode.NO_PERMISSION) -> None:
        super().__init__(remark)
        self.code = code
        self.remark = remark


def _by_name(enum_type: Any, name: object) -> Any:
    """Java's ``getByName``: the constant whose name equals ``name`` ignoring case, else None."""
    if not isinstance(name, str):
        return None
    return next((member for member in enum_type if member.value.lower() == name.lower()), None)


def subject_user(subject: str | None) -> str | None:
    """``Subject.of``: the user name of ``User:<name>``, None for any other kind of subject."""
    if subject is None:
        return None
    kind, _, name = subject.partition(":")
    return name if kind.lower() == SUBJECT_USER.lower() else None


def subject_key(username: str) -> str:
    return f"{SUBJECT_USER}:{username}"


BODY_OF_ACL_NULL = ("org.apache.rocketmq.auth.authorization.exception.AuthorizationException: "
                    + Remark.BODY_OF_ACL_NULL)
NO_AUTHORIZATION_PROVIDER = ("java.lang.IllegalStateException: The authorizationMetadataProvider is not "
                             "configured.")
"""Thrown out of the processor, so answered 1 with the exception as remark (Java adds a stack frame)."""


def convert_acl(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The processor's body check and ``AclConverter.convertAcl`` with the manager's ``initAcl``: the
    body's policies with canonical resource keys and names; policies without entries are dropped."""
    if not info.get("policies"):
        raise AuthRefused(BODY_OF_ACL_NULL, ResponseCode.SYSTEM_ERROR)
    policies = []
    for policy in info.get("policies") or []:
        entries = policy.get("entries") or []
        if not entries:
            continue
        kind = _by_name(PolicyType, policy.get("policyType")) or PolicyType.CUSTOM
        policies.append({"policyType": kind.value, "entries": [_entry(entry) for entry in entries]})
    return policies


def validate_policies(policies: list[dict[str, Any]]) -> None:
    """The manager's ``validate``: AuthRefused with the first failure (RMQ-AUTH-ACL-VALIDATE)."""
    if not policies:
        raise AuthRefused(Remark.POLICIES_EMPTY)
    for policy in policies:
        for entry in policy["entries"]:
            _validate(entry)


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    if entry.get("actions") is None:  # Java dereferences the list: NullPointerException
        raise AuthRefused("java.lang.NullPointerException", ResponseCode.SYSTEM_ERROR)
    resource = parse_resource(entry.get("resource"))
    actions = [a for a in (_by_name(Action, name) for name in entry["actions"]) if a is not None]
    decision = _by_name(Decision, entry.get("decision"))
    return {"resource": resource.key if resource else None, "actions": [a.value for a in actions],
            "sourceIps": entry.get("sourceIps") or None, "decision": decision.value if decision else None}


def _validate(entry: dict[str, Any]) -> None:
    if entry["resource"] is None:
        raise AuthRefused(Remark.RESOURCE_NULL)
    if not entry["actions"]:
        raise AuthRefused(Remark.ACTIONS_EMPTY)
    if Action.ANY.value in entry["actions"]:
        raise AuthRefused(Remark.ACTIONS_ANY)
    for ip in entry["sourceIps"] or []:
        if not ip.strip():
            raise AuthRefused(Remark.SOURCE_IP_EMPTY)
        if not is_valid_ip_or_cidr(ip):
            raise AuthRefused(Remark.SOURCE_IP_INVALID)
    if entry["decision"] is None:
        raise AuthRefused(Remark.DECISION_NULL)


def merge_policies(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """``Acl.updatePolicy``: each new policy joins the old one of its type entry by entry."""
    for policy in new:
        same = next((p for p in old if p["policyType"] == policy["policyType"]), None)
        if same is None:
            old.append(policy)
            continue
        for entry in policy["entries"]:
            found = next((e for e in same["entries"] if e["resource"] == entry["resource"]), None)
            if found is None:
                same["entries"].append(entry)
            else:
                found.update(actions=entry["actions"], sourceIps=entry["sourceIps"],
                             decision=entry["decision"])


class AuthMetadata:
    """Users and ACLs; ``users_on`` / ``acls_on`` say whether broker.conf names each metadata provider
    (RMQ-AUTH-PROVIDERS)."""

    def __init__(self, files: ConfigFiles, users_on: bool, acls_on: bool) -> None:
        self._files = files
        self.users_on = users_on
        self.acls_on = acls_on
        self.users: dict[str, User] = files.load(USERS_FILE) or {}
        self.acls: dict[str, Acl] = files.load(ACLS_FILE) or {}

    # -- users (AuthenticationMetadataManagerImpl) -----------------------------------------------------

    def _user_table(self) -> dict[str, User]:
        if not self.users_on:
            raise AuthRefused(Remark.SYSTEM_ERROR, ResponseCode.SYSTEM_ERROR)
        return self.users

    def _acl_table(self) -> dict[str, Acl]:
        if not (self.users_on and self.acls_on):
            raise AuthRefused(Remark.SYSTEM_ERROR, ResponseCode.SYSTEM_ERROR)
        return self.acls

    def get_user(self, username: str | None) -> User | None:
        if username is None or not username.strip():
            raise AuthRefused(Remark.USERNAME_CAN_NOT_BE_BLANK)
        return self._user_table().get(username)

    def create_user(self, info: dict[str, Any]) -> None:
        username, password = info.get("username"), info.get("password")
        if username is None or not username.strip():
            raise AuthRefused(Remark.USERNAME_CAN_NOT_BE_BLANK)
        if password is None or not password.strip():
            raise AuthRefused(Remark.PASSWORD_BLANK)
        users = self._user_table()
        if username in users:
            raise AuthRefused(Remark.USER_EXISTS)
        kind = _by_name(UserType, info.get("userType")) or UserType.NORMAL
        status = _by_name(UserStatus, info.get("userStatus")) or UserStatus.ENABLE
        users[username] = {"username": username, "password": password, "userType": kind.value,
                           "userStatus": status.value}
        self._save_users()

    def update_user(self, info: dict[str, Any]) -> None:
        """``updateUser``: only what the body gives changes."""
        old = self.get_user(info.get("username"))
        if old is None:
            raise AuthRefused(Remark.USER_NOT_EXIST)
        if info.get("password") and info["password"].strip():
            old["password"] = info["password"]
        for key, kind in (("userType", UserType), ("userStatus", UserStatus)):
            found = _by_name(kind, info.get(key))
            if found is not None:
                old[key] = found.value
        self._save_users()

    def delete_user(self, username: str) -> None:
        """``deleteUser``: the user and its ACL."""
        self._acl_table()
        self.users.pop(username, None)
        self.acls.pop(subject_key(username), None)
        self._save_users()
        self._save_acls()

    def list_users(self, name_filter: str | None) -> list[User]:
        return [user for name, user in sorted(self._user_table().items(), key=lambda i: i[0].encode())
                if not (name_filter and name_filter.strip()) or name_filter in name]

    def init_user(self, text: str) -> None:
        """``initUser``: the initAuthenticationUser JSON becomes a Super user unless it exists; anything
        wrong stops the start, as Java's "Init authentication user error."."""
        try:
            info = json.loads(text)
            if self.get_user(info.get("username")) is None:
                self.create_user({**info, "userType": UserType.SUPER.value})
        except (ValueError, AttributeError, AuthRefused) as exc:
            raise ValueError(f"initAuthenticationUser {text!r}: {exc}") from exc

    def is_super(self, username: str) -> bool:
        user = self.users.get(username)
        return user is not None and user["userType"] == UserType.SUPER.value

    # -- ACLs (AuthorizationMetadataManagerImpl) -------------------------------------------------------

    def put_acl(self, subject: str | None, info: dict[str, Any]) -> None:
        """``createAcl`` / ``updateAcl`` (the same rules, RMQ-AUTH-ACL-CREATE)."""
        policies = convert_acl(info)
        username = subject_user(info.get("subject")) or subject_user(subject)
        if username is None:  # Java: NullPointerException inside the future
            raise AuthRefused(Remark.SYSTEM_ERROR, ResponseCode.SYSTEM_ERROR)
        validate_policies(policies)
        acls = self._acl_table()
        if username not in self.users:
            raise AuthRefused(Remark.SUBJECT_OF_NOT_EXIST.format(subject=subject_key(username)))
        old = acls.get(subject_key(username))
        if old is None:
            acls[subject_key(username)] = {"subject": subject_key(username), "policies": policies}
        else:
            merge_policies(old["policies"], policies)
        self._save_acls()

    def delete_acl(self, subject: str | None, policy_type: str | None, resource_key: str | None) -> None:
        """``deleteAcl`` (RMQ-AUTH-ACL-DELETE)."""
        username = subject_user(subject)
        if username is None:
            raise AuthRefused(Remark.SUBJECT_NULL)
        kind = (_by_name(PolicyType, policy_type) or PolicyType.CUSTOM).value
        acls = self._acl_table()
        if username not in self.users:
            raise AuthRefused(Remark.SUBJECT_NOT_EXIST)
        acl = acls.get(subject_key(username))
        if acl is None:
            raise AuthRefused(Remark.ACL_NOT_EXIST)
        resource = parse_resource(resource_key)
        if resource is not None:
            for policy in [p for p in acl["policies"] if p["policyType"] == kind][:1]:
                policy["entries"] = [e for e in policy["entries"] if e["resource"] != resource.key]
                if not policy["entries"]:
                    acl["policies"].remove(policy)
        if resource is None or not acl["policies"]:
            del acls[subject_key(username)]
        self._save_acls()

    def get_acl(self, subject: str | None) -> Acl | None:
        username = subject_user(subject)
        if username is None:
            raise AuthRefused(Remark.SYSTEM_ERROR, ResponseCode.SYSTEM_ERROR)
        acls = self._acl_table()
        if username not in self.users:
            raise AuthRefused(Remark.SUBJECT_NOT_EXIST)
        return acls.get(subject_key(username))

    def list_acls(self, subject_filter: str | None, resource_filter: str | None) -> list[Acl]:
        """``LocalAuthorizationMetadataProvider.listAcl`` (RMQ-AUTH-ACL-GET)."""
        if not self.acls_on:  # Java throws it out of the processor, unlike the other commands
            raise AuthRefused(NO_AUTHORIZATION_PROVIDER, ResponseCode.SYSTEM_ERROR)
        found = []
        for key, acl in sorted(self._acl_table().items(), key=lambda i: i[0].encode()):
            if subject_filter and subject_filter.strip() and subject_filter not in key:
                continue
            policies = []
            for policy in acl["policies"]:
                entries = policy["entries"]
                if resource_filter and resource_filter.strip() and resource_filter not in key:
                    entries = [e for e in entries if resource_filter in e["resource"]]
                if entries:
                    policies.append({**policy, "entries": entries})
            if policies:
                found.append({"subject": key, "policies": policies})
        return found

    def _save_users(self) -> None:
        self._files.save(USERS_FILE, self.users)

    def _save_acls(self) -> None:
        self._files.save(ACLS_FILE, self.acls)

