"""Fixtures of the broker cases: a client on a fresh connection to the broker under test."""

from __future__ import annotations

import pytest

from conformance.checks import Check
from conformance.target import Server
from conformance.wire import Wire

from .messaging import Client
from .store_support import by_offset, fixed, index_files, raw, scan, store  # noqa: F401  (the store cases' fixtures)


@pytest.fixture
def client(broker: Server, wire: Wire, check: Check) -> Client:
    return Client(wire.connect(broker.endpoint), check)
