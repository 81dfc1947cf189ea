"""The ACL admin commands (``rocketmq_spec.spec.acl_file.ACL_ADMIN_COMMANDS``), rewriting plain_acl.yml as
Java does.

Java's quirks are kept because clients and mqadmin see them: a created or updated account is in force at
once (memory is built from the request alone), a deleted one is forgotten at once, while a new global
whitelist only takes effect when the file watcher reloads the rewritten file. Successes are written by
the processor itself in Java, so they go out in the server's own serialization with no extFields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.acl import parse_permission
from rocketmq_spec.spec.acl_file import KEY_MIN_LENGTH
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CREATE_ACCESS_CONFIG_REQUEST

from . import plain_file
from .guard import AccessGuard
from .plain_file import AclFileError

_CREATE_KEYS = {f.key for f in CREATE_ACCESS_CONFIG_REQUEST.fields}


def java_split(text: str | None) -> list[str] | None:
    """``UtilAll.split(text, ",")``: Java's ``String.split`` drops trailing empty strings."""
    if text is None:
        return None
    parts = text.split(",")
    if text == "":
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def check_resource_perms(entries: list[str] | None) -> None:
    """``Permission.checkResourcePerms``: each entry ``name=PERM`` with a known permission name."""
    for entry in entries or []:
        items = [item for item in entry.split("=") if item]
        if len(items) != 2:
            raise AclFileError(remarks.ACL_RESOURCE_FORMAT.format(entry=entry))
        if items[1].strip() != "DENY" and parse_permission(items[1]) == parse_permission("DENY"):
            raise AclFileError(remarks.ACL_RESOURCE_PERMISSION.format(entry=entry))


def account_entry(existing: dict[str, Any] | None, wanted: dict[str, Any]) -> dict[str, Any]:
    """``createAclAccessConfigMap``: the file's map for an account, the request's values laid over it."""
    entry = existing if existing is not None else {}
    access_key = wanted.get("accessKey") or ""
    if len(access_key) <= KEY_MIN_LENGTH:
        raise AclFileError(remarks.ACL_ACCESS_KEY_SHORT.format(access_key=access_key))
    entry["accessKey"] = access_key
    if wanted.get("secretKey"):
        entry["secretKey"] = wanted["secretKey"]
    if wanted.get("whiteRemoteAddress") is not None:
        entry["whiteRemoteAddress"] = wanted["whiteRemoteAddress"]
    entry["admin"] = bool(wanted.get("admin"))
    for key in ("defaultTopicPerm", "defaultGroupPerm"):
        if wanted.get(key):
            entry[key] = wanted[key]
    for key in ("topicPerms", "groupPerms"):
        if wanted.get(key) is not None:
            entry[key] = wanted[key]
    return entry


class AclAdminHandlers:
    def __init__(self, guard: AccessGuard, config: BrokerConfig) -> None:
        self.policy = guard.policy
        self.config = config

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.UPDATE_AND_CREATE_ACL_CONFIG: self.update_account,
            RequestCode.DELETE_ACL_CONFIG: self.delete_account,
            RequestCode.GET_BROKER_CLUSTER_ACL_INFO: self.versions,
            RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: self.update_global_whites,
        }

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        self.policy.file_versions[path] = plain_file.write(path, data)

    async def update_account(self, request: Request) -> Any:
        header = request.header()
        wanted = {key: header.get(key) for key in _CREATE_KEYS}
        wanted["topicPerms"] = java_split(header.get("topicPerms"))
        wanted["groupPerms"] = java_split(header.get("groupPerms"))
        try:
            plain_file.check_keys(wanted["accessKey"], wanted["secretKey"])
            check_resource_perms(wanted["topicPerms"])
            check_resource_perms(wanted["groupPerms"])
            account = plain_file.build_account(wanted)
            path = self.policy.file_of(account.access_key)
            data = plain_file.read_raw(path)
            accounts = data.get("accounts")
            if not isinstance(accounts, list):
                accounts = []
            existing = next((a for a in accounts if isinstance(a, dict)
                             and str(a.get("accessKey")) == account.access_key), None)
            if existing is not None:
                accounts.remove(existing)
            accounts.append(account_entry(existing, wanted))
            data["accounts"] = accounts
            self._write(path, data)
        except (AclFileError, OSError) as exc:
            return request.reply(ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED, str(exc))
        self.policy.put(account)
        return request.reply(direct=True)

    async def delete_account(self, request: Request) -> Any:
        access_key = request.header()["accessKey"]
        failed = request.reply(ResponseCode.DELETE_ACL_CONFIG_FAILED,
                               remarks.ACL_DELETE_FAILED.format(access_key=access_key))
        if not access_key or access_key not in self.policy.owner:
            return failed
        path = self.policy.file_of(access_key)
        try:
            data = plain_file.read_raw(path)
        except AclFileError as exc:
            return request.reply(ResponseCode.DELETE_ACL_CONFIG_FAILED, str(exc))
        if not data:
            return request.reply(direct=True)
        accounts = [a for a in data.get("accounts") or [] if isinstance(a, dict)]
        kept = [a for a in accounts if str(a.get("accessKey")) != access_key]
        if len(kept) == len(accounts):
            return failed
        del self.policy.owner[access_key]
        data["accounts"] = kept
        self._write(path, data)
        return request.reply(direct=True)

    async def update_global_whites(self, request: Request) -> Any:
        header = request.header()
        addresses = java_split(header["globalWhiteAddrs"]) or []
        path = Path(header.get("aclFileFullPath") or self.policy.default)
        remark = remarks.ACL_WHITE_UPDATE_FAILED.format(addresses=header["globalWhiteAddrs"])
        failed = request.reply(ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, remark)
        if path not in self.policy.paths():
            return failed  # Java: the file must exist below rocketmq.home.dir
        try:
            data = plain_file.read_raw(path)
        except AclFileError as exc:
            return request.reply(ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, str(exc))
        data["globalWhiteRemoteAddresses"] = addresses
        self._write(path, data)
        return request.reply(direct=True)

    async def versions(self, request: Request) -> Any:
        return request.reply(header={
            "version": self.policy.version.to_json(),
            "allAclFileVersion": "{" + ",".join(f"{json.dumps(str(path))}:{version.to_json()}"
                                                for path, version in self.policy.file_versions.items()) + "}",
            "brokerName": self.config.broker_name,
            "brokerAddr": self.config.broker_addr,
            "clusterName": self.config.broker_cluster_name,
        })
