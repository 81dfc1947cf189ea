"""Registry rows of the drivers for Apache's Java remoting client and the four 5.x gRPC SDKs.

A row is plain data: the driver's ``name`` (what ``rmq-conformance client --driver NAME`` takes), the
``protocol`` it speaks (``remoting`` or ``grpc``), an ``install`` command that provisions it ahead of time
(a run provisions on first use anyway, and caches) and the ``argv`` the suite runs with the scenario
appended.

- ``java-4.9.7``, ``java-5.5.0``: the release's client jars from Maven Central, with the project's
  ``ClientDriver`` compiled against them (:mod:`rocketmq_spec.apache.client_driver`), cached under
  ``~/.cache/rocketmq-spec/apache``.
- ``sdk5-java``, ``sdk5-python``, ``sdk5-node``, ``sdk5-go``: Apache's rocketmq-clients from Maven Central,
  PyPI, npm and the Go module proxy, installed by ``interop/sdk5/install.py`` into
  ``~/.cache/rocketmq-spec/sdk5`` with their drivers built there. Those drivers' sources live in the
  checkout's ``interop/sdk5`` (beside the interop tests that share them), so these four rows need a
  checkout, not just the installed package.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

SDK5_INSTALLER = Path(__file__).resolve().parents[3] / "interop" / "sdk5" / "install.py"

JAVA_RELEASES = ("4.9.7", "5.5.0")
"""The newest 4.x release, and the 5.x release whose client offers pop (clientRebalance=false)."""

SDK5 = ("java", "python", "node", "go")


class DriverRow(NamedTuple):
    name: str
    protocol: str
    install: tuple[str, ...]
    argv: tuple[str, ...]


def _java(version: str) -> DriverRow:
    launcher = (sys.executable, "-m", "rocketmq_spec.apache.client_driver", version)
    return DriverRow(f"java-{version}", "remoting", (*launcher, "--install"), launcher)


def _sdk5(sdk: str) -> DriverRow:
    installer = (sys.executable, str(SDK5_INSTALLER))
    return DriverRow(f"sdk5-{sdk}", "grpc", (*installer, sdk), (*installer, "run", sdk))


DRIVERS: tuple[DriverRow, ...] = (*map(_java, JAVA_RELEASES), *map(_sdk5, SDK5))
