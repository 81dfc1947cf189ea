"""ACL 1.0 files: what makes one unusable, judged through a file the case puts below ``conf/acl``.

A broker reloads its ACL files when one appears or changes (RMQ-ACL-RELOAD); an unusable file is not
applied, so none of its accounts is let in, while the same file once made usable is. Runs only against an
ACL target (``--acl``, ``--acl-file``); the directory is the one beside the policy file the broker reads.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.case import Row, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.acl_file import RELOAD_INTERVAL_S
from rocketmq_spec.spec.codes import RequestCode

from .acl_support import AclTarget, acl_message, expect_allowed
from .support import eventually

RELOAD_WAIT = RELOAD_INTERVAL_S * 2 + 5
"""Seconds given a file change to take effect: two watcher periods and slack for a loaded machine."""


def _account(credentials: Credentials, **more: Any) -> dict[str, Any]:
    return {**policy.RELOADED_ACCOUNT, "accessKey": credentials.access_key,
            "secretKey": credentials.secret_key, **more}


def _write(path: Path, accounts: list[dict[str, Any]]) -> None:
    path.write_text(yaml.safe_dump({"accounts": accounts}, sort_keys=False), encoding="utf-8")


@table("spoiler", [
    Row("short-secret", "RMQ-ACL-FILE", "A file holding an account whose secretKey has 6 characters is "
        "unusable: its other account is not let in until the bad one is gone.", {"secretKey": "123456"}),
    Row("short-access-key", "RMQ-ACL-FILE", "A file holding an account whose accessKey has 6 characters is "
        "unusable.", {"accessKey": "rmqSho"}),
    Row("unreadable-pattern", "RMQ-ACL-FILE", "A file holding an account whose whiteRemoteAddress is no "
        "ADDRESS_PATTERNS form is unusable.", {"whiteRemoteAddress": "not-an-address"}),
])
def test_unusable_file(spoiler: dict[str, str], acl: AclTarget, acl_file: Path, check: Check) -> None:
    tag = uuid.uuid4().hex[:8]
    good = Credentials(f"rmqFileGood{tag}", "rmqFileSecret")
    bad = _account(Credentials(f"rmqFileBad{tag}", "rmqFileSecret"), **spoiler)
    extra = acl_file.parent / "acl" / f"rmq-conformance-{tag}.yml"
    extra.parent.mkdir(exist_ok=True)

    def ping() -> RemotingCommand:
        return acl.connect(good).call(RequestCode.GET_ALL_TOPIC_CONFIG)
    try:
        _write(extra, [_account(good), bad])
        time.sleep(RELOAD_WAIT)
        spoiled = ping()
        check.that("the good account of the unusable file: refused by ACL", acl_message(spoiled) is not None,
                   expected="an AclException", actual=f"{spoiled.code} {spoiled.remark}")
        _write(extra, [_account(good)])
        expect_allowed(check, "the same account once the file is usable",
                       eventually(ping, lambda r: r.code == 0, RELOAD_WAIT))
    finally:
        extra.unlink(missing_ok=True)
    eventually(ping, lambda r: acl_message(r) is not None, RELOAD_WAIT)
