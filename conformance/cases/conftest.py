"""Fixtures of the broker cases: a client on a fresh connection to the broker under test, and the broker
under test as the ACL policy's accounts see it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import acl_policy as policy
from conformance.checks import Check
from conformance.target import Server
from conformance.wire import Wire

from .acl_support import AclTarget
from .messaging import Client


@pytest.fixture
def client(broker: Server, wire: Wire, check: Check) -> Client:
    return Client(wire.connect(broker.endpoint), check)


@pytest.fixture
def acl(broker: Server, wire: Wire, check: Check, acl_file: Path) -> AclTarget:
    missing = policy.missing_accounts(acl_file)
    if missing:
        pytest.fail(f"{acl_file} is not the suite's policy (no account {', '.join(missing)}): write it with "
                    "rmq-conformance acl-file PATH and start the broker on it")
    return AclTarget(broker, wire, check)
