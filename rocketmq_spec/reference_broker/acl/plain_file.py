"""plain_acl.yml read into accounts and whitelists, and rewritten as the ACL admin commands do.

The file's keys are ``rocketmq_spec.spec.acl_file.PLAIN_ACL_FILE``. Reading is all-or-nothing: an account Java
would refuse (a short key, an unreadable pattern or ``topic=PERM`` entry) makes the whole file unusable,
raised as ``AclFileError`` with one line saying why, so a broker never runs on half a policy. """

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.reference_broker.acl.addresses import AddressMatcher, AddressPatternError, compile_pattern
from rocketmq_spec.spec.acl import Permission, parse_permission
from rocketmq_spec.spec.acl_file import KEY_MIN_LENGTH
from rocketmq_spec.spec.system_topics import RETRY_PREFIX


class AclFileError(ValueError):
    """An ACL file that cannot be used, or an account the admin commands cannot accept."""


@dataclass(frozen=True)
class Account:
    access_key: str
    secret_key: str
    white_address: AddressMatcher
    admin: bool
    default_topic_perm: Permission
    default_group_perm: Permission
    resource_perms: dict[str, Permission] | None
    """Topic names and ``%RETRY%<group>`` names; None when the account lists neither (Java's null map)."""


@dataclass
class DataVersion:
    counter: int = 0
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))

    def to_json(self) -> str:
        """fastjson's form of ``DataVersion``: properties in alphabetical order."""
        return f'{{"counter":{self.counter},"timestamp":{self.timestamp}}}'


@dataclass
class PlainAcl:
    global_whites: list[AddressMatcher]
    accounts: dict[str, Account]
    version: DataVersion


def _text(value: object) -> str | None:
    """fastjson's conversion of a YAML scalar to a String field (12345678 -> "12345678")."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_keys(access_key: str | None, secret_key: str | None) -> None:
    """``checkPlainAccessConfig``: both keys present and longer than six characters."""
    if access_key is None or secret_key is None or len(access_key) <= KEY_MIN_LENGTH \
            or len(secret_key) <= KEY_MIN_LENGTH:
        raise AclFileError(f"The accessKey={access_key} and secretKey={secret_key} cannot be null and length "
                           "should longer than 6")


def parse_resource_perms(entries: object, *, group: bool) -> dict[str, Permission]:
    """``Permission.parseResourcePerms``: ``name=PERM`` entries, groups renamed ``%RETRY%<group>``."""
    perms: dict[str, Permission] = {}
    if entries is not None and not isinstance(entries, list):
        raise AclFileError(f"{'groupPerms' if group else 'topicPerms'} is not a list: {entries!r}")
    for entry in entries or []:
        items = [item for item in str(entry).split("=") if item]
        if len(items) != 2:
            kind = "group" if group else "topic"
            raise AclFileError(f"Parse resource permission failed for {kind}:{entry}")
        name = items[0].strip()
        perms[RETRY_PREFIX + name if group else name] = parse_permission(items[1])
    return perms


def build_account(raw: dict[str, Any]) -> Account:
    access_key, secret_key = _text(raw.get("accessKey")), _text(raw.get("secretKey"))
    check_keys(access_key, secret_key)
    assert access_key is not None and secret_key is not None
    perms = {**parse_resource_perms(raw.get("groupPerms"), group=True),
             **parse_resource_perms(raw.get("topicPerms"), group=False)}
    try:
        white = compile_pattern(raw.get("whiteRemoteAddress"))
    except AddressPatternError as exc:
        raise AclFileError(f"account {access_key}: whiteRemoteAddress: {exc}") from exc
    admin = _text(raw.get("admin")) == "true"
    return Account(access_key, secret_key, white, admin, parse_permission(raw.get("defaultTopicPerm")),
                   parse_permission(raw.get("defaultGroupPerm")), perms or None)


def read_raw(path: Path) -> dict[str, Any]:
    """The file as a map (an empty file is an empty map)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AclFileError(f"cannot read ACL file {path}: {str(exc).splitlines()[0]}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AclFileError(f"ACL file {path} is not a YAML map")
    return data


def parse(data: dict[str, Any], path: Path) -> PlainAcl:
    try:
        whites = [compile_pattern(p) for p in data.get("globalWhiteRemoteAddresses") or []]
    except AddressPatternError as exc:
        raise AclFileError(f"ACL file {path}: globalWhiteRemoteAddresses: {exc}") from exc
    accounts: dict[str, Account] = {}
    for raw in data.get("accounts") or []:
        if not isinstance(raw, dict):
            raise AclFileError(f"ACL file {path}: an account is not a map: {raw!r}")
        account = build_account(raw)
        accounts.setdefault(account.access_key, account)
    versions = data.get("dataVersion") or []
    version = DataVersion()
    if versions and isinstance(versions[0], dict):
        version = DataVersion(int(versions[0].get("counter", 0)), int(versions[0].get("timestamp", 0)))
    return PlainAcl(whites, accounts, version)


def load(path: Path) -> PlainAcl:
    if not path.is_file():
        raise AclFileError(f"ACL file {path} does not exist")
    return parse(read_raw(path), path)


def write(path: Path, data: dict[str, Any]) -> DataVersion:
    """Rewrite the file with its dataVersion stepped (``updateAclConfigFileVersion``); returns the version."""
    versions = data.get("dataVersion") or []
    counter = int(versions[0].get("counter", 0)) if versions and isinstance(versions[0], dict) else 0
    version = DataVersion(counter + 1)
    data["dataVersion"] = [{"counter": version.counter, "timestamp": version.timestamp}]
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(yaml.safe_dump(data, default_flow_style=False, sort_keys=False), encoding="utf-8")
    temporary.replace(path)
    return version
