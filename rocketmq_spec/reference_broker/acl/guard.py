"""The broker's one ACL check, run at dispatch before any handler (Java's server RPC hook).

``AccessGuard.check`` walks ``rocketmq_spec.spec.acl.ACL_CHECK_ORDER``: it reads the resources the request
code needs (``rocketmq_spec.spec.acl.RESOURCE_NEEDS``), then the whitelists, the access key, the signature,
the admin codes and the permissions, raising ``AclRefused`` with Java's remark at the first step that refuses.
The guard also owns the policy's life: reloading the file when its modification time changes, as
``AclFileWatchService`` does. """

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from rocketmq_spec.codec.acl import verify
from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.acl import (
    ACCESS_KEY,
    ADMIN_CODES,
    RESOURCE_NEEDS,
    AclRefusal,
    Permission,
    Refusal,
    Resource,
    ResourceNeed,
    permits,
    resource_label,
)
from rocketmq_spec.spec.acl_file import DEFAULT_ACL_FILE, ROCKETMQ_HOME_ENV
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.properties import java_hashmap_order
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.system_topics import RETRY_PREFIX, TRACE_TOPIC

from .plain_file import Account, AclFileError
from .policy import AclPolicy

log = logging.getLogger(__name__)

_NEEDS: dict[int, tuple[ResourceNeed, ...]] = {}
for _need in RESOURCE_NEEDS:
    _NEEDS[_need.code] = (*_NEEDS.get(_need.code, ()), _need)
_ADMIN = frozenset(int(code) for code in ADMIN_CODES)
NULL_BODY_MESSAGE = 'Cannot read the array length because "bytes" is null'
"""Java 17's message for the NullPointerException of decoding an absent HEART_BEAT body."""


class AclRefused(Refused):
    """The request is refused with Java's answer: SYSTEM_ERROR and the AclException as remark."""

    def __init__(self, refusal: AclRefusal, **values: object) -> None:
        super().__init__(ResponseCode.SYSTEM_ERROR, refusal.remark(**values))
        self.refusal = refusal


def client_ip(peer: str) -> str:
    """The remote address without its ``:port``: text after the last colon removed."""
    return peer.rpartition(":")[0] if ":" in peer else peer


def _heartbeat_names(body: bytes | None) -> Iterator[tuple[Resource, str]]:
    data = decode_body(HEARTBEAT_DATA, body or b"")
    for consumer in data.get("consumerDataSet") or []:
        yield Resource.GROUP, consumer.get("groupName")
        for subscription in consumer.get("subscriptionDataSet") or []:
            yield Resource.TOPIC, subscription.get("topic")


def needed_resources(command: RemotingCommand) -> dict[str, Permission]:
    """Resource name -> permission the request needs, in the order Java's HashMap iterates them."""
    needs: dict[str, Permission] = {}

    def add(resource: Resource, name: object, perm: Permission) -> None:
        if name is not None:
            needs[f"{RETRY_PREFIX}{name}" if resource is Resource.GROUP else str(name)] = perm

    if command.code == RequestCode.HEART_BEAT:
        if not command.body:
            raise AclRefused(Refusal.UNREADABLE_REQUEST, detail=NULL_BODY_MESSAGE)
        try:
            for resource, name in _heartbeat_names(command.body):
                add(resource, name, Permission.SUB)
        except (RocketMQSpecError, ValueError, AttributeError, TypeError) as exc:
            raise AclRefused(Refusal.UNREADABLE_REQUEST, detail=str(exc)) from exc
    elif command.code in _NEEDS:
        fields = command.ext_fields or {}
        topic_key = next((n.field for n in _NEEDS[command.code]
                          if n.when and n.resource is Resource.TOPIC), None)
        retry = topic_key is not None and str(fields.get(topic_key, "")).startswith(RETRY_PREFIX)
        for need in _NEEDS[command.code]:
            if not need.when or (need.resource is Resource.GROUP) == retry:
                add(need.resource, fields.get(need.field), need.needed)
    return {name: needs[name] for name in java_hashmap_order(needs)}


def acl_file_path(config: BrokerConfig) -> Path:
    """Where the broker reads its ACL file: ``aclFile``, else Java's ``$ROCKETMQ_HOME/conf/plain_acl.yml``."""
    if config.acl_file:
        return Path(config.acl_file)
    home = os.environ.get(ROCKETMQ_HOME_ENV)
    if home:
        return Path(home) / DEFAULT_ACL_FILE
    raise AclFileError("aclEnable=true but no ACL file: set aclFile (or ROCKETMQ_HOME for "
                       f"$ROCKETMQ_HOME/{DEFAULT_ACL_FILE})")


def access_guard(config: BrokerConfig, release_version: int) -> AccessGuard | None:
    """The broker's ACL 1.0 check: on with ``aclEnable`` in a release that has ACL 1.0 (``Rule.ACL_V1``).
    From 5.3.3 Apache RocketMQ has no acl module and nothing reads ``aclEnable``: a broker answering as
    such a release starts and serves unsigned requests, as Apache's does, and says so in its log."""
    if not config.acl_enable:
        return None
    if not holds(Rule.ACL_V1, release_version):
        log.warning("aclEnable=true is read by nothing in the release this broker answers as (%s): ACL 1.0 "
                    "left Apache RocketMQ in 5.3.3; authenticationEnabled (ACL 2.0) took its place",
                    config.wire_release)
        return None
    return AccessGuard(acl_file_path(config))


class AccessGuard:
    """The loaded policy (``AclPolicy``) and the check every request goes through."""

    def __init__(self, path: Path) -> None:
        self.policy = AclPolicy(path)
        self._mtimes = self._modified()

    @property
    def path(self) -> Path:
        return self.policy.default

    def _modified(self) -> dict[Path, float | None]:
        times: dict[Path, float | None] = {}
        for path in self.policy.paths():
            try:
                times[path] = path.stat().st_mtime
            except OSError:
                times[path] = None
        return times

    # -- the check -------------------------------------------------------------------------------------

    def check(self, command: RemotingCommand, peer: str) -> None:
        """Let the request through or raise ``AclRefused`` (``rocketmq_spec.spec.acl.ACL_CHECK_ORDER``)."""
        ip = client_ip(peer)
        needs = needed_resources(command) if command.ext_fields is not None else {}
        if any(white(ip) for white in self.policy.global_whites):
            return
        fields = command.ext_fields or {}
        access_key = fields.get(ACCESS_KEY)
        if access_key is None:
            raise AclRefused(Refusal.NO_ACCESS_KEY)
        if access_key not in self.policy.owner:
            raise AclRefused(Refusal.UNKNOWN_ACCESS_KEY, access_key=access_key)
        account = self.policy.account(access_key)
        if account is None:
            raise AclRefused(Refusal.ACCOUNT_GONE, access_key=access_key)
        if account.white_address(ip):
            return
        if not verify(command, account.secret_key):
            raise AclRefused(Refusal.SIGNATURE, access_key=access_key)
        if needs.get(TRACE_TOPIC) == Permission.PUB:
            return
        self._check_permissions(command.code, account, needs)

    @staticmethod
    def _check_permissions(code: int, account: Account, needs: dict[str, Permission]) -> None:
        if code in _ADMIN and not account.admin:
            raise AclRefused(Refusal.NOT_ADMIN, code=code, access_key=account.access_key)
        owned = account.resource_perms
        if not needs or (owned is None and account.admin):
            return
        for resource, needed in needs.items():
            group = resource.startswith(RETRY_PREFIX)
            label = resource_label(resource)
            if owned is None or resource not in owned:
                default = account.default_group_perm if group else account.default_topic_perm
                if not permits(needed, default):
                    raise AclRefused(Refusal.NO_DEFAULT_PERMISSION, resource=label)
            elif not permits(needed, owned[resource]):
                raise AclRefused(Refusal.NO_PERMISSION, resource=label)

    # -- the policy's life -----------------------------------------------------------------------------

    def reload_if_changed(self) -> bool:
        """Apply what changed on disk, as ``AclFileWatchService`` does: a file added or removed reloads
        every file, a file whose modification time moved is read again. A file that became unusable is
        logged and the policy in force kept."""
        now = self._modified()
        before, self._mtimes = self._mtimes, now
        if now == before:
            return False
        try:
            if set(now) != set(before):
                self.policy.load_all()
            else:
                for path in (p for p, t in now.items() if t is not None and t != before[p]):
                    self.policy.reload(path)
        except AclFileError as exc:
            log.warning("ACL file changed but cannot be used; keeping the policy in force: %s", exc)
            return False
        log.info("ACL files reloaded: %d accounts", len(self.policy.owner))
        return True
