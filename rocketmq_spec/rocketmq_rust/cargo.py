"""Installing a release's binaries with ``cargo install``, into a per-version cache.

Cargo does the work (resolution pinned by the crates' own ``Cargo.lock`` through ``--locked``, download,
build): the project only names the crates and the directory. The build is long — about an hour of two
cores for both binaries — so it happens once per version and machine; its log is kept beside the
binaries, and a file lock keeps parallel test workers from building twice. A binary appears in
``bin/`` only once cargo has finished building it, so a present binary is a complete one.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rocketmq_spec.apache.maven import ProvisionError, ToolMissing, project_cache
from rocketmq_spec.rocketmq_rust.releases import Release

CACHE_ENV = "RMQ_RUST_CACHE"
"""Where releases are installed; default ``$XDG_CACHE_HOME/rocketmq-spec/rocketmq-rust`` (``~/.cache``)."""

CARGO_ENV = "RMQ_CARGO"
"""The ``cargo`` to run, when it is not the one on ``PATH`` (or ``~/.cargo/bin``)."""

JOBS_ENV = "RMQ_CARGO_JOBS"
"""Parallel rustc jobs of the build (default 2: the build shares the machine with whatever else runs)."""

INSTALL_TIMEOUT = 4 * 3600.0
"""Both binaries and their ~450 dependencies on a busy two-core machine; bounds a hung build only."""

LOG_FILE = "cargo-install.log"


def cache_root() -> Path:
    return project_cache("rocketmq-rust", CACHE_ENV)


def release_dir(release: Release) -> Path:
    return cache_root() / release.version


def binary_path(release: Release, name: str) -> Path:
    return release_dir(release) / "bin" / name


def installed(release: Release) -> bool:
    return all(binary_path(release, binary.name).is_file() for binary in release.binaries)


class NotInstalled(ProvisionError):
    """The release's binaries are not built yet; building them is asked for explicitly, never implied."""


def require_installed(release: Release) -> Path:
    """The release's directory, or :class:`NotInstalled` naming the command that builds it."""
    if not installed(release):
        raise NotInstalled(f"rocketmq-rust {release.version} is not installed in {release_dir(release)} "
                           f"(`rmq-rust install {release.version}` builds it, about an hour on two cores)",
                           expected="both binaries", seen="none")
    return release_dir(release)


def cargo_command() -> str:
    found = (os.environ.get(CARGO_ENV) or shutil.which("cargo")
             or shutil.which("cargo", path=str(Path.home() / ".cargo" / "bin")))
    if not found:
        raise ToolMissing("cargo is not installed: it builds rocketmq-rust's binaries from crates.io "
                          f"(install Rust 1.95 or newer with rustup, or point {CARGO_ENV} at cargo)",
                          expected="cargo on PATH", seen="none")
    return found


def install_command(release: Release, cargo: str) -> list[str]:
    """``cargo install`` of both crates at the release's version, pinned to their published lock files."""
    return [cargo, "install", "--locked", "--jobs", os.environ.get(JOBS_ENV, "2"),
            "--root", str(release_dir(release)),
            *(f"{binary.crate}@{release.version}" for binary in release.binaries)]


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(release: Release, *, progress: bool = False) -> Path:
    """The directory holding ``bin/`` with both binaries, building them first when they are missing."""
    directory = release_dir(release)
    if installed(release):
        return directory
    cargo = cargo_command()
    with _locked(directory):
        if installed(release):  # another worker finished the build while this one waited
            return directory
        if progress:
            print(f"building rocketmq-rust {release.version} with cargo into {directory} (about an hour on "
                  f"two cores; log: {directory / LOG_FILE})", file=sys.stderr, flush=True)
        command = install_command(release, cargo)
        with (directory / LOG_FILE).open("wb") as log:
            try:
                done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      timeout=INSTALL_TIMEOUT, check=False,
                                      env={**os.environ, "CARGO_TARGET_DIR": str(directory / "target")})
            except subprocess.TimeoutExpired:
                raise ProvisionError(f"cargo install of rocketmq-rust {release.version} did not finish "
                                     f"within {INSTALL_TIMEOUT:.0f} s (log: {directory / LOG_FILE})",
                                     expected="a finished build", seen="timeout") from None
        if done.returncode != 0 or not installed(release):
            raise ProvisionError(f"cargo install of rocketmq-rust {release.version} failed with status "
                                 f"{done.returncode}: {_last_error(directory / LOG_FILE)}",
                                 expected="both binaries built", seen=f"exit {done.returncode}")
        shutil.rmtree(directory / "target", ignore_errors=True)  # gigabytes of objects, never used again
    return directory


def _last_error(log: Path) -> str:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    errors = [line for line in lines if line.startswith("error")]
    return (errors or lines or ["(no output)"])[-1]
