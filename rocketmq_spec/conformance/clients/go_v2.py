"""Apache's Go remoting client (``github.com/apache/rocketmq-client-go/v2``) as a shipped client driver.

The driver's source is package data (``go_v2_driver/``: ``main.go`` and the ``go.mod``/``go.sum`` that pin
the client at the newest version the Go module proxy serves, a pseudo-version of the repository's
default branch after v2.1.2). At first use ``go build`` (under ``nice``: it compiles the client and its
dependencies) writes the binary into the clients cache (:data:`install.CACHE_DIR`), under the cache's
lock, and a stamp records what was built so that a second run only checks (:mod:`.built`). The
module cache (``go env GOMODCACHE``) holds the client's source, which is where a finding's Go file:line
is read.

    python -m rocketmq_spec.conformance.clients.go_v2      # build if needed, print ok or why not
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from rocketmq_spec.conformance.clients import install
from rocketmq_spec.conformance.clients.built import BuiltProgram
from rocketmq_spec.conformance.clients.driver_row import DriverRow

SOURCE_DIR = Path(__file__).resolve().with_name("go_v2_driver")
SOURCES = ("go.mod", "go.sum", "main.go", "../go_contract/go.mod", "../go_contract/contract.go")
"""The driver's module and the contract package it shares with the 5.x Go SDK's driver."""
MODULE = "github.com/apache/rocketmq-client-go/v2"
VERSION = "v2.1.3-0.20251226070945-2173d070fd1b"
"""The go.mod pin: what ``go list -m MODULE@latest`` answers (newer than the last tag, v2.1.2)."""
NAME = f"go-v2-{VERSION.removeprefix('v')}"
BUILD_TIMEOUT_S = 900
"""A cold build downloads the client and its dependencies from the module proxy and compiles them."""


def _toolchain() -> str:
    return subprocess.run(["go", "version"], capture_output=True, text=True, check=False).stdout


PROGRAM = BuiltProgram(install.CACHE_DIR / "go-v2", "driver", tuple(SOURCE_DIR / name for name in SOURCES),
                       _toolchain)


def _build(output: Path) -> None:
    done = subprocess.run(["nice", "-n", "15", "go", "build", "-o", str(output), "."], cwd=SOURCE_DIR,
                          env={**os.environ, "GOFLAGS": "-mod=readonly"}, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise RuntimeError(f"go build exited with {done.returncode}: {tail}")


def ensure() -> str | None:
    """Build the driver unless the cache holds the build of these sources; None when it can run, else why
    not."""
    if shutil.which("go") is None:
        return "no `go` executable on PATH"
    try:
        PROGRAM.ensure(_build)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        return f"building the driver for {MODULE}@{VERSION} failed: {exc}"
    return None


DRIVERS: tuple[DriverRow, ...] = (
    DriverRow(NAME, "remoting", ensure, lambda: [str(PROGRAM.binary)], dict,
              f"Apache's Go remoting client {MODULE}@{VERSION} (Go module proxy, built with go build)"),
)


def main() -> int:
    reason = ensure()
    print(f"{NAME}: {'ok' if reason is None else 'UNAVAILABLE: ' + reason}")
    return 0 if reason is None else 1


if __name__ == "__main__":
    sys.exit(main())
