"""Fixtures of the broker cases: a client on a fresh connection to the broker under test, and the broker
under test as the ACL policy's accounts see it, and a gRPC client of the proxy with a remoting client of
its broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Endpoint, Wire

from .acl_support import AclTarget
from .grpc_support import connected
from .messaging import Client
from .store_support import by_offset, fixed, index_files, raw, scan, store  # noqa: F401  (the store cases' fixtures)


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


@pytest.fixture
def proxy_client(proxy: Endpoint, wire: Wire) -> Iterator[ProxyClient]:
    yield from connected(proxy, wire.tls)


@pytest.fixture
def admin(broker: Server, wire: Wire, check: Check) -> Client:
    """A remoting client of the proxy's broker, to create typed topics."""
    return Client(wire.connect(broker.endpoint), check)
