"""ACL 1.0 address patterns, judged through an account's whiteRemoteAddress.

The suite connects from 127.0.0.1. Each row creates an account whose whiteRemoteAddress is the pattern
(UPDATE_AND_CREATE_ACL_CONFIG, in force at once) and sends an unsigned request carrying only its
AccessKey: a pattern that matches lets it in, one that does not leaves it to the signature check, which
refuses it. The set form goes here and not in the global whitelist, whose admin command splits at every
comma (RMQ-ACL-ADMIN-WHITE). Runs only against an ACL target (``--acl``, ``--acl-file``).
"""

from __future__ import annotations

import uuid

from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.case import Row, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.acl import Refusal
from rocketmq_spec.spec.codes import RequestCode

from .acl_support import AclTarget, expect_acl_refusal, expect_allowed
from .support import expect_success


def _row(id: str, pattern: str, matches: bool) -> Row:
    verdict = "lets 127.0.0.1 in unsigned" if matches else "does not match 127.0.0.1"
    return Row(id, "RMQ-ACL-ADDRESS-PATTERN", f"whiteRemoteAddress {pattern!r} {verdict}.",
               (pattern, matches))


@table("pattern", [
    _row("literal", "127.0.0.1", True),
    _row("other-literal", "127.0.0.2", False),
    _row("blank", "", False),
    _row("all", "*", True),
    _row("all-parts", "*.*.*.*", True),
    _row("comma-list", "10.1.1.1,127.0.0.1", True),
    _row("comma-list-other", "10.1.1.1,127.0.0.2", False),
    _row("set", "127.0.0.{2,1}", True),
    _row("set-other", "127.0.0.{2,3}", False),
    _row("star-parts", "127.0.*.*", True),
    _row("range", "127.0.0.1-9", True),
    _row("range-other", "127.0.0.2-9", False),
])
def test_account_address_pattern(pattern: tuple[str, bool], acl: AclTarget, check: Check) -> None:
    text, matches = pattern
    access_key = f"rmqAddr{uuid.uuid4().hex[:8]}"
    admin = acl.client(policy.ADMIN)
    expect_success(check, "create the account", admin.call(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, {
        "accessKey": access_key, "secretKey": "rmqAddrSecret", "whiteRemoteAddress": text,
        "defaultTopicPerm": "DENY"}))
    try:
        response = acl.connect(access_key=access_key).call(RequestCode.GET_ALL_TOPIC_CONFIG, {})
        if matches:
            expect_allowed(check, "unsigned request from 127.0.0.1", response)
        else:
            expect_acl_refusal(check, "unsigned request from 127.0.0.1", response, Refusal.SIGNATURE,
                               access_key=access_key)
    finally:
        admin.call(RequestCode.DELETE_ACL_CONFIG, {"accessKey": access_key})
