"""pytest fixture ``rocketmq_spec.apache``: a real Apache RocketMQ name server and broker for one test.

The release is the fixture's parameter (``@pytest.mark.parametrize("apache_rocketmq", ["4.9.7"],
indirect=True)``), else ``RMQ_APACHE_VERSION``, else :data:`DEFAULT_VERSION`. Where Java or Maven is
missing, or the Maven repository does not serve the release, the test is skipped with that reason; any
other failure to start fails it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import NotServed, ToolMissing

DEFAULT_VERSION = "5.5.0"
"""The newest release whose jars Maven Central serves to the project's machines."""


@contextmanager
def running_or_skip(version: str, home: Path, broker_config: Mapping[str, object] | None = None, *,
                    controller: bool = False) -> Iterator[ApacheRocketMQ]:
    """A started release for a test, skipped where Java or Maven is missing or the release is not served;
    ``controller``: its broker in controller mode, with a controller in its name server."""
    cluster = ApacheRocketMQ(version, home=home, broker_config=broker_config, controller=controller)
    try:
        cluster.start()
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def apache_rocketmq(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApacheRocketMQ]:
    """Yields a started :class:`ApacheRocketMQ` (``namesrv_addr``, ``broker_addr``, ``store_path``, ...)."""
    version = getattr(request, "param", None) or os.environ.get("RMQ_APACHE_VERSION") or DEFAULT_VERSION
    with running_or_skip(version, tmp_path / f"apache-{version}") as cluster:
        yield cluster
