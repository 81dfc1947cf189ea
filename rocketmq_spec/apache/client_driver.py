"""The Apache Java remoting client of one release as a driver of the client conformance suite.

    python -m rocketmq_spec.apache.client_driver VERSION SCENARIO
    python -m rocketmq_spec.apache.client_driver VERSION --install

resolves the release's jars from Maven Central and compiles the project's ``ClientDriver`` against them on
first use (both cached, :mod:`rocketmq_spec.apache.drivers`), then replaces itself with the JVM running
the scenario, so the suite's signals and exit status reach the client directly; ``--install`` only
provisions and compiles (a cold resolution of a 5.x release takes minutes). The JVM's home, logs and
any file the client writes by default go to ``RMQ_WORKDIR`` (a fresh temporary directory without it).

Exit 2 when the release cannot be provisioned here (no Java or Maven, the artifact not served): the
driver itself failed, which the contract keeps apart from an unsupported scenario (3).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from rocketmq_spec.apache.drivers import driver_command
from rocketmq_spec.apache.maven import ProvisionError
from rocketmq_spec.apache.releases import UnknownRelease

DRIVER_PROGRAM = "ClientDriver"
PROVISION_FAILED = 2


def command(version: str, scenario: str, workdir: Path) -> list[str]:
    """The JVM command running ``scenario`` on ``version``'s client (compiling the driver on first use)."""
    return driver_command(version, DRIVER_PROGRAM, scenario, home=workdir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="an Apache RocketMQ release of rocketmq_spec.apache.releases")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("scenario", nargs="?", help="a scenario of the driver contract (produce, ...)")
    what.add_argument("--install", action="store_true", help="provision and compile only, then exit")
    args = parser.parse_args(argv)
    workdir = Path(os.environ.get("RMQ_WORKDIR") or tempfile.mkdtemp(prefix="rmq-java-driver-"))
    try:
        argv_java = command(args.version, args.scenario or "install", workdir)
    except (ProvisionError, UnknownRelease) as exc:
        print(f"cannot run Apache RocketMQ {args.version}'s client: {exc}", file=sys.stderr)
        return PROVISION_FAILED
    if args.install:
        return 0
    sys.stdout.flush()
    os.execv(argv_java[0], argv_java)
    raise AssertionError("unreachable: os.execv does not return")  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
