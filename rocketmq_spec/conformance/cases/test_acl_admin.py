"""ACL 1.0 admin commands judged by what they leave in the policy file and by the codes 4.9.8 lacks.

Runs only against an ACL target (``--acl``, ``--acl-file``); the file must be the one the broker reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule

from .acl_support import AclTarget, acl_message
from .support import expect_success

EXTRA_WHITE = "10.20.30.40"
"""An address no test client has: adding it changes nothing but the file."""


def _file_whites(acl_file: Path) -> Any:
    return (yaml.safe_load(acl_file.read_text(encoding="utf-8")) or {}).get("globalWhiteRemoteAddresses")


@case("RMQ-ACL-ADMIN-WHITE", "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG with an empty aclFileFullPath answers 0 and "
      "replaces the default file's globalWhiteRemoteAddresses with the list given, split at its commas.")
def test_global_whites_replaced(acl: AclTarget, acl_file: Path, check: Check) -> None:
    widened = [*policy.GLOBAL_WHITES, EXTRA_WHITE]
    try:
        expect_success(check, "set three patterns", acl.set_global_whites(widened))
        check.equal("the file's globalWhiteRemoteAddresses", widened, _file_whites(acl_file))
    finally:
        expect_success(check, "set the policy's two", acl.set_global_whites(list(policy.GLOBAL_WHITES)))
    check.equal("the file's globalWhiteRemoteAddresses, replaced", list(policy.GLOBAL_WHITES),
                _file_whites(acl_file))


@case("RMQ-ACL-CONFIG-54", "GET_BROKER_CLUSTER_ACL_CONFIG (54) signed by the admin account passes the ACL "
      "check and is answered 3 REQUEST_CODE_NOT_SUPPORTED (SUCCESS by the releases that still had it).")
def test_cluster_acl_config_unsupported(acl: AclTarget, check: Check) -> None:
    admin = acl.client(policy.ADMIN)
    response = admin.connection.call(RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG, {})
    check.that("not refused by ACL", acl_message(response) is None, expected="no AclException",
               actual=response.remark)
    served = admin.follows(Rule.ACL_CONFIG_54_SERVED)
    expected = ResponseCode.SUCCESS if served else ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    check.equal("response code", expected, response.code)
