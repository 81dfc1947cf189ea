"""Install the pinned real RocketMQ clients the shipped drivers run into a cache, and probe each one.

The clients come from the public registries (PyPI, npm) at exact versions so every machine drives a
broker with the same bytes on the wire.  They live in a cache rather than in the project's environment
because they are test equipment, not dependencies: the PyPI `rocketmq` wheel bundles a C++ shared library
and must not shadow anything the library itself imports.  The cache is `.cache/interop/` of the checkout
when the package runs from one (git-ignored), else `~/.cache/rocketmq-spec/clients`, or `$RMQ_CLIENTS_CACHE`.

`rmq-conformance client --driver NAME` installs at first use; `python -m
rocketmq_spec.conformance.clients.install` (add `--json` for a machine-readable report) installs and
probes by hand.  A second run only re-probes: the install is skipped while the stamp of the pins matches.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

DRIVERS_DIR = Path(__file__).resolve().with_name("drivers")
"""The shipped drivers and the npm manifests that pin their clients (package data)."""
_CHECKOUT = Path(__file__).resolve().parents[3]


def _cache_dir() -> Path:
    if os.environ.get("RMQ_CLIENTS_CACHE"):
        return Path(os.environ["RMQ_CLIENTS_CACHE"])
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / ".cache" / "interop"
    return Path.home() / ".cache" / "rocketmq-spec" / "clients"


CACHE_DIR = _cache_dir()
PYTHON_TARGET = CACHE_DIR / "python"
NODE_PREFIX = CACHE_DIR / "node"
STAMP_FILE = CACHE_DIR / "stamp.json"
LOCK_FILE = CACHE_DIR / ".install.lock"

# Exact pin: 0.4.4 is the last release whose manylinux1 wheel bundles librocketmq (C++ client 1.2.x),
# so it needs no system package; later releases of the binding expect a system-wide C++ client.
PYTHON_CLIENT_PIN = "rocketmq==0.4.4"
NODE_MANIFESTS = ("package.json", "package-lock.json")

# A cold install downloads about 3 MB from each registry; anything slower than this is a broken
# network rather than a slow one, and the caller should get a reason instead of a hang.
INSTALL_TIMEOUT_S = 300
# Loading a client module (including the C++ shared library) takes well under a second.
PROBE_TIMEOUT_S = 30

# Client names shared with the drivers, the driver registry and tests/interop_clients.py.
PY_ROCKETMQ = "py-rocketmq-0.4.4"
ALI_ONS = "ali-ons-3.12.0"
ROCKETMQ_NODEJS = "rocketmq-nodejs-1.1.2"


@dataclass(frozen=True)
class Availability:
    """Whether one client can be driven here; `reason` says why not, so a skipped test is explained."""

    client: str
    available: bool
    reason: str | None


def node_executable() -> str | None:
    return shutil.which("node")


def npm_executable() -> str | None:
    return shutil.which("npm")


def python_env() -> dict[str, str]:
    """Environment that makes the cached `rocketmq` package importable without touching site-packages."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_TARGET), env.get("PYTHONPATH")) if p)
    return env


def node_env() -> dict[str, str]:
    """Environment that lets the drivers `require` the cached npm packages from outside their folder."""
    env = dict(os.environ)
    modules = NODE_PREFIX / "node_modules"
    env["NODE_PATH"] = os.pathsep.join(p for p in (str(modules), env.get("NODE_PATH")) if p)
    return env


def _digest(*parts: bytes) -> str:
    """Stamp of everything that changes what gets installed; a different stamp forces a reinstall."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def _python_digest() -> str:
    # The interpreter version is part of it: `--target` installs are tied to the interpreter.
    return _digest(PYTHON_CLIENT_PIN.encode(), sys.version.encode())


def _node_digest() -> str:
    return _digest(*((DRIVERS_DIR / name).read_bytes() for name in NODE_MANIFESTS))


@contextmanager
def _install_lock() -> Iterator[None]:
    """Serialise installs: parallel test workers may all call the installer at once."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with LOCK_FILE.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str], cwd: Path | None = None) -> None:
    completed = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
    )
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip()[-2000:]
        raise RuntimeError(f"{' '.join(argv)} exited with {completed.returncode}: {tail}")


def _install_python_client() -> None:
    """Install into a fresh directory and swap it in, so an interrupted run never leaves half a package."""
    staging = Path(tempfile.mkdtemp(prefix="python-", dir=CACHE_DIR))
    try:
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-deps",
                # Only the wheel bundles librocketmq; the sdist would need the C++ client built system-wide.
                "--only-binary=:all:",
                "--no-compile",
                "--target",
                str(staging),
                PYTHON_CLIENT_PIN,
            ]
        )
        shutil.rmtree(PYTHON_TARGET, ignore_errors=True)
        staging.rename(PYTHON_TARGET)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _install_node_clients(npm: str) -> None:
    """`npm ci` installs exactly the lock file, which is what keeps the JavaScript clients pinned."""
    NODE_PREFIX.mkdir(parents=True, exist_ok=True)
    for name in NODE_MANIFESTS:
        shutil.copyfile(DRIVERS_DIR / name, NODE_PREFIX / name)
    _run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=NODE_PREFIX)


def _probe(argv: list[str], env: dict[str, str]) -> str | None:
    """Load the client for real: a present package can still fail on this libc or Node ABI."""
    try:
        completed = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return f"loading the client did not finish within {PROBE_TIMEOUT_S} s"
    if completed.returncode == 0:
        return None
    return completed.stderr.strip()[-1000:] or f"exit status {completed.returncode}"


def _probe_all(install_errors: dict[str, str]) -> list[Availability]:
    node = node_executable()
    probes: dict[str, tuple[list[str], dict[str, str]] | str] = {
        PY_ROCKETMQ: ([sys.executable, "-c", "import rocketmq.client"], python_env()),
    }
    for client, module in ((ALI_ONS, "ali-ons"), (ROCKETMQ_NODEJS, "rocketmq-nodejs")):
        if node is None:
            probes[client] = "no `node` executable on PATH"
        else:
            probes[client] = ([node, "-e", f"require({module!r})"], node_env())
    results = []
    for client, probe in probes.items():
        reason = install_errors.get(client)
        if reason is None:
            reason = probe if isinstance(probe, str) else _probe(*probe)
        results.append(Availability(client, reason is None, reason))
    return results


def install() -> list[Availability]:
    """Install what is missing, then report which clients load here and why the others do not."""
    errors: dict[str, str] = {}
    with _install_lock():
        stamp = json.loads(STAMP_FILE.read_text()) if STAMP_FILE.exists() else {}
        if stamp.get("python") != _python_digest():
            try:
                _install_python_client()
                stamp["python"] = _python_digest()
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                errors[PY_ROCKETMQ] = f"install failed: {exc}"
        if stamp.get("node") != _node_digest():
            npm = npm_executable()
            try:
                if npm is None:
                    raise RuntimeError("no `npm` executable on PATH")
                _install_node_clients(npm)
                stamp["node"] = _node_digest()
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                errors[ALI_ONS] = errors[ROCKETMQ_NODEJS] = f"install failed: {exc}"
        STAMP_FILE.write_text(json.dumps(stamp, indent=2))
    return _probe_all(errors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the availability report as JSON")
    args = parser.parse_args(argv)
    results = install()
    if args.json:
        print(json.dumps([asdict(r) for r in results]))
    else:
        for result in results:
            print(f"{result.client}: {'ok' if result.available else 'UNAVAILABLE: ' + str(result.reason)}")
    return 0 if all(r.available for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
