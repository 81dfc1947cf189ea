"""Registry rows of the drivers for Apache's Java remoting client and the four 5.x gRPC SDKs.

Each row has the fields of the suite's driver registry (:mod:`.registry`): the ``name`` that
``rmq-conformance client --driver NAME`` takes, the ``protocol`` the judging server must speak, ``install``
(make the driver runnable here: None, or why it cannot run), ``argv`` (the command line, the scenario is
appended), ``environment`` (variables besides the contract's) and a ``description``.

- ``java-4.9.7``, ``java-5.5.0``: the release's client jars from Maven Central, with the project's
  ``ClientDriver`` compiled against them (:mod:`rocketmq_spec.apache.client_driver`), cached under
  ``~/.cache/rocketmq-spec/apache``.
- ``sdk5-java``, ``sdk5-python``, ``sdk5-node``, ``sdk5-go``: Apache's rocketmq-clients from Maven Central,
  PyPI, npm and the Go module proxy, with their drivers built (:mod:`.sdk5`), cached under
  ``~/.cache/rocketmq-spec/sdk5``.

Both installs take minutes the first time (a 5.x release resolves ~150 jars; the Go SDK builds gRPC).
"""

from __future__ import annotations

import sys

from rocketmq_spec.apache.drivers import compiled
from rocketmq_spec.apache.maven import CACHE_ENV, ProvisionError, cache_root
from rocketmq_spec.conformance.clients import sdk5
from rocketmq_spec.conformance.clients.driver_row import DriverRow

JAVA_RELEASES = ("4.9.7", "5.5.0")
"""The newest 4.x release, and a 5.x release whose push consumer offers pop (clientRebalance=false)."""


def _java_cache() -> dict[str, str]:
    """The cache the row installed into, named to the driver: the suite sets ``HOME`` to each scenario's
    work directory, and a cache found through ``HOME`` there would be empty (a 5.x release is then
    provisioned again, for longer than the suite's first probe waits)."""
    return {CACHE_ENV: str(cache_root())}


def _sdk5_cache() -> dict[str, str]:
    """As :func:`_java_cache`, for the SDKs' cache."""
    return {sdk5.CACHE_ENV: str(sdk5.CACHE_DIR)}


def _java(version: str) -> DriverRow:
    def install() -> str | None:
        try:
            compiled(version)
        except ProvisionError as exc:
            return str(exc)
        return None

    return DriverRow(f"java-{version}", "remoting", install,
                     lambda: [sys.executable, "-m", "rocketmq_spec.apache.client_driver", version],
                     _java_cache,
                     f"Apache RocketMQ {version}'s Java client (Maven Central): DefaultMQProducer, "
                     "TransactionMQProducer, DefaultMQPushConsumer, DefaultLitePullConsumer")


def _sdk5(sdk: sdk5.Sdk) -> DriverRow:
    def install() -> str | None:
        (result,) = sdk5.install((sdk.name,))
        return result.reason

    return DriverRow(f"sdk5-{sdk.name}", "grpc", install,
                     lambda: [sys.executable, "-m", sdk5.__name__, "run", sdk.name],
                     _sdk5_cache, f"Apache RocketMQ's 5.x {sdk.name} SDK ({sdk.package})")


DRIVERS: tuple[DriverRow, ...] = (*map(_java, JAVA_RELEASES), *map(_sdk5, sdk5.SDKS))
