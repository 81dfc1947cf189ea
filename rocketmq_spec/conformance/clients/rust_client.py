"""rocketmq-client-rust (crates.io) as a client driver: the project's driver crate, built against it by cargo.

rocketmq-rust's client is a library crate, so the driver is a small binary crate of the project's
(``rust_driver/``: ``Cargo.toml``, ``src/main.rs``) whose ``Cargo.lock`` is the client crate's own published
lock file, extended by the driver's package: ``cargo build --locked`` then compiles exactly the
dependency versions rocketmq-rust released with. The build is long (about 350 crates: half an hour or
more on two cores), so it happens at first use only, into ``~/.cache/rocketmq-spec/rust-client``
(``$RMQ_RUST_CLIENT_CACHE``), as the 5.x SDKs' drivers are built into theirs; its ``target/`` is kept, so a
change of the driver's source recompiles the driver alone. A stamp of the driver's files says when the
built binary is stale (:mod:`.built`).

    python -m rocketmq_spec.conformance.clients.rust_client      # build (if needed), say whether it runs
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from rocketmq_spec.apache.maven import ProvisionError, project_cache
from rocketmq_spec.conformance.clients.built import BuiltProgram
from rocketmq_spec.conformance.clients.driver_row import DriverRow
from rocketmq_spec.rocketmq_rust.cargo import JOBS_ENV, cargo_command

CRATE = "rocketmq-client-rust"
VERSION = "1.0.0"
"""The newest release on crates.io (the pin is in ``rust_driver/Cargo.toml`` and its lock file)."""
NAME = f"rust-client-{VERSION}"
DRIVER_DIR = Path(__file__).resolve().with_name("rust_driver")
INPUTS = ("Cargo.toml", "Cargo.lock", "src/main.rs")
"""The files of the driver crate; the built binary is stale when one of them changed."""
BINARY = "rust-client-driver"
CACHE_DIR = project_cache("rust-client", "RMQ_RUST_CLIENT_CACHE")
LOG_FILE = CACHE_DIR / "cargo-build.log"
BUILD_TIMEOUT_S = 3 * 3600.0
"""Bounds a hung build only: a cold one takes most of an hour on a busy two-core machine."""


PROGRAM = BuiltProgram(CACHE_DIR, BINARY, tuple(DRIVER_DIR / name for name in INPUTS),
                       lambda: f"{CRATE} {VERSION}")


def binary() -> Path:
    return PROGRAM.binary


def build_command(cargo: str) -> list[str]:
    return [cargo, "build", "--release", "--locked", "--jobs", os.environ.get(JOBS_ENV, "2"),
            "--manifest-path", str(DRIVER_DIR / "Cargo.toml")]


def _cargo_build(cargo: str, output: Path) -> None:
    """Compile the driver crate into the cache's ``target/`` (kept, so a changed driver recompiles alone)
    and copy the binary to ``output``."""
    target = CACHE_DIR / "target"
    with LOG_FILE.open("wb") as log:
        try:
            done = subprocess.run(build_command(cargo), stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=BUILD_TIMEOUT_S, check=False,
                                  env={**os.environ, "CARGO_TARGET_DIR": str(target)})
        except subprocess.TimeoutExpired:
            raise ProvisionError(f"cargo build of the {CRATE} driver did not finish within "
                                 f"{BUILD_TIMEOUT_S:.0f} s (log: {LOG_FILE})",
                                 expected="a finished build", seen="timeout") from None
    built = target / "release" / BINARY
    if done.returncode != 0 or not built.is_file():
        lines = LOG_FILE.read_text(encoding="utf-8", errors="replace").splitlines()
        last = ([line for line in lines if line.startswith("error")] or lines or ["(no output)"])[-1]
        raise ProvisionError(f"cargo build of the {CRATE} driver failed with status {done.returncode}: "
                             f"{last} (log: {LOG_FILE})",
                             expected="the driver built", seen=f"exit {done.returncode}")
    shutil.copy2(built, output)


def install(*, progress: bool = False) -> Path:
    """The built driver, building it first when it is missing or stale (:class:`ProvisionError` if not)."""
    if PROGRAM.built():
        return PROGRAM.binary
    cargo = cargo_command()

    def build(output: Path) -> None:
        if progress:
            print(f"building the {CRATE} {VERSION} driver with cargo into {CACHE_DIR} (half an hour or more "
                  f"on two cores; log: {LOG_FILE})", file=sys.stderr, flush=True)
        _cargo_build(cargo, output)

    return PROGRAM.ensure(build)


def _install_reason() -> str | None:
    try:
        install(progress=True)
    except ProvisionError as exc:
        return str(exc)
    return None


ROW = DriverRow(NAME, "remoting", _install_reason, lambda: [str(binary())], dict,
                f"rocketmq-rust's client ({CRATE} {VERSION}, crates.io): DefaultMQProducer, "
                "TransactionMQProducer, DefaultMQPushConsumer (pop mode for consume-pop), "
                "DefaultLitePullConsumer")
"""The registry row: ``rmq-conformance client --driver rust-client-1.0.0``."""


def main() -> int:
    reason = _install_reason()
    print(f"{NAME}: {'ok ' + str(binary()) if reason is None else 'UNAVAILABLE: ' + reason}")
    return 0 if reason is None else 1


if __name__ == "__main__":
    sys.exit(main())
