"""pytest fixture ``rocketmq_spec.rocketmq_rust``: a rocketmq-rust name server and broker for one test.

The release is the fixture's parameter, else ``RMQ_RUST_VERSION``, else :data:`DEFAULT_VERSION`. Its
binaries take about an hour of two cores to build, so the fixture never builds them: where they are not
installed (``rmq-rust install VERSION``) or cargo is missing, the test is skipped with that reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.rocketmq_rust.cargo import NotInstalled, require_installed
from rocketmq_spec.rocketmq_rust.cluster import RocketMQRust
from rocketmq_spec.rocketmq_rust.releases import Release, release

DEFAULT_VERSION = "1.0.0"


def missing(row: Release) -> str | None:
    """Why a test cannot run ``row`` here (None: it can)."""
    try:
        require_installed(row)
    except NotInstalled as exc:
        return str(exc)
    return None


@pytest.fixture
def rocketmq_rust(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RocketMQRust]:
    """Yields a started :class:`RocketMQRust` (``namesrv_addr``, ``broker_addr``, ``store_path``, ...)."""
    row = release(getattr(request, "param", None) or os.environ.get("RMQ_RUST_VERSION") or DEFAULT_VERSION)
    if reason := missing(row):
        pytest.skip(reason)
    with RocketMQRust(row, home=tmp_path / row.target_name) as servers:
        yield servers
