"""rocketmq-client-rust (crates.io) as a client driver: the project's driver crate, built against it by cargo.

rocketmq-rust's client is a library crate, so the driver is a small binary crate of the project's
(``rust_driver/``: ``Cargo.toml``, ``src/main.rs``) whose ``Cargo.lock`` is the client crate's own published
lock file, extended by the driver's package: ``cargo build --locked`` then compiles exactly the
dependency versions rocketmq-rust released with. The build is long (about 350 crates: half an hour or
more on two cores), so it happens at first use only, into ``~/.cache/rocketmq-spec/rust-client``
(``$RMQ_RUST_CLIENT_CACHE``), as the 5.x SDKs' drivers are built into theirs; its ``target/`` is kept, so a
change of the driver's source recompiles the driver alone. A stamp of the driver's files says when the
built binary is stale.

    python -m rocketmq_spec.conformance.clients.rust_client      # build (if needed), say whether it runs
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rocketmq_spec.apache.maven import ProvisionError, project_cache
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
STAMP_FILE = CACHE_DIR / "stamp"
LOG_FILE = CACHE_DIR / "cargo-build.log"
BUILD_TIMEOUT_S = 3 * 3600.0
"""Bounds a hung build only: a cold one takes most of an hour on a busy two-core machine."""


def binary() -> Path:
    return CACHE_DIR / "bin" / BINARY


def _stamp() -> str:
    digest = hashlib.sha256(f"{CRATE} {VERSION}".encode())
    for name in INPUTS:
        digest.update((DRIVER_DIR / name).read_bytes())
    return digest.hexdigest()


def built() -> bool:
    """Whether the driver is built from the current sources."""
    return binary().is_file() and STAMP_FILE.is_file() and STAMP_FILE.read_text() == _stamp()


@contextmanager
def _locked() -> Iterator[None]:
    """Parallel test workers may all ask for the driver at once: one builds, the others wait."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE_DIR / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_command(cargo: str) -> list[str]:
    return [cargo, "build", "--release", "--locked", "--jobs", os.environ.get(JOBS_ENV, "2"),
            "--manifest-path", str(DRIVER_DIR / "Cargo.toml")]


def install(*, progress: bool = False) -> Path:
    """The built driver, building it first when it is missing or stale (:class:`ProvisionError` if not)."""
    if built():
        return binary()
    cargo = cargo_command()
    with _locked():
        if built():  # another worker finished the build while this one waited
            return binary()
        if progress:
            print(f"building the {CRATE} {VERSION} driver with cargo into {CACHE_DIR} (half an hour or more "
                  f"on two cores; log: {LOG_FILE})", file=sys.stderr, flush=True)
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
        output = target / "release" / BINARY
        if done.returncode != 0 or not output.is_file():
            lines = LOG_FILE.read_text(encoding="utf-8", errors="replace").splitlines()
            last = ([line for line in lines if line.startswith("error")] or lines or ["(no output)"])[-1]
            raise ProvisionError(f"cargo build of the {CRATE} driver failed with status {done.returncode}: "
                                 f"{last} (log: {LOG_FILE})",
                                 expected="the driver built", seen=f"exit {done.returncode}")
        binary().parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(output, binary())
        STAMP_FILE.write_text(_stamp())
    return binary()


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
