"""The plain_acl.yml an ACL target must be started with, and the accounts the ``acl`` cases sign with.

``rmq-conformance acl-file PATH`` writes it. The target must read exactly this policy (Java: put it at
``$ROCKETMQ_HOME/conf/plain_acl.yml`` and set ``aclEnable=true``); the suite connects from 127.0.0.1,
which only ``LOCAL`` whitelists. Cases that change the policy (admin commands, hot reload, the global
whitelist) put it back before they end.
"""

from __future__ import annotations

from pathlib import Path

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.codec.acl import Credentials

ACL_RELEASE = "4.9.8"
"""What the embedded broker answers as for the ACL cases: ACL 1.0's baseline (Apache RocketMQ removed ACL
1.0 in 5.3.3, ``Rule.ACL_V1``)."""
ADMIN = Credentials("rmqAdminKey", "rmqAdminSecret")
"""admin: true with no perms lists: every code and resource."""
USER = Credentials("rmqUserKey", "rmqUserSecret")
"""Not admin; per-topic and per-group entries over defaults DENY (topics) and SUB (groups)."""
OPEN = Credentials("rmqOpenKey", "rmqOpenSecret")
"""Not admin; defaults PUB|SUB for topics and groups."""
LOCAL = Credentials("rmqLocalKey", "rmqLocalSecret")
"""whiteRemoteAddress 127.0.0.1 (the suite's address): let in unsigned and unchecked; defaults DENY."""
RELOADED = Credentials("rmqReloadKey", "rmqReloadSecret")
"""Absent from the file: the hot-reload case adds it by editing the file, then removes it."""
IN_DIRECTORY = Credentials("rmqDirKey", "rmqDirSecret")
"""Defined by a file the directory case puts below ``conf/acl`` beside the policy file for a while."""

TOPIC_PUB, TOPIC_SUB, TOPIC_BOTH, TOPIC_DENY = "aclTopicPub", "aclTopicSub", "aclTopicBoth", "aclTopicDeny"
GROUP_SUB, GROUP_DENY = "aclGroupSub", "aclGroupDeny"
GLOBAL_WHITES = ("10.10.103.*", "192.168.0.1-2")
"""Patterns that parse but never match loopback: the global-whitelist case swaps in 127.0.0.1 for a while.
No ``{a,b}`` set here: UPDATE_GLOBAL_WHITE_ADDRS_CONFIG splits its list at every comma, which would break
one (Java too), so the set form is tried in an account's whiteRemoteAddress instead."""

ACL_FILE_TEXT = f"""\
# plain_acl.yml for rmq-conformance's acl cases (write it with: rmq-conformance acl-file PATH)
globalWhiteRemoteAddresses:
  - {GLOBAL_WHITES[0]}
  - {GLOBAL_WHITES[1]}

accounts:
  - accessKey: {ADMIN.access_key}
    secretKey: {ADMIN.secret_key}
    admin: true
  - accessKey: {USER.access_key}
    secretKey: {USER.secret_key}
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - {TOPIC_PUB}=PUB
      - {TOPIC_SUB}=SUB
      - {TOPIC_BOTH}=PUB|SUB
      - {TOPIC_DENY}=DENY
    groupPerms:
      - {GROUP_SUB}=SUB
      - {GROUP_DENY}=DENY
  - accessKey: {OPEN.access_key}
    secretKey: {OPEN.secret_key}
    admin: false
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: PUB|SUB
    whiteRemoteAddress: 192.168.1.{{10,11}}
  - accessKey: {LOCAL.access_key}
    secretKey: {LOCAL.secret_key}
    whiteRemoteAddress: 127.0.0.1
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
"""

RELOADED_ACCOUNT = {"accessKey": RELOADED.access_key, "secretKey": RELOADED.secret_key, "admin": False,
                    "defaultTopicPerm": "PUB|SUB", "defaultGroupPerm": "PUB|SUB"}
"""Appended to the accounts list by the hot-reload case."""


def missing_accounts(path: Path) -> list[str]:
    """Access keys of the policy that the file at ``path`` does not define (all of them if unreadable)."""
    wanted = [c.access_key for c in (ADMIN, USER, OPEN, LOCAL)]
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        defined = {str(a.get("accessKey")) for a in data.get("accounts") or [] if isinstance(a, dict)}
    except (OSError, yaml.YAMLError, AttributeError):
        return wanted
    return [key for key in wanted if key not in defined]


def write_acl_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ACL_FILE_TEXT, encoding="utf-8")
    return path
