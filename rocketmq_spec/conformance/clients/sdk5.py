"""Apache RocketMQ's 5.x SDKs (gRPC) as client drivers: installed into the user's cache, built, and run.

Each SDK comes from its own registry at an exact version, so every machine drives a gRPC endpoint with
the same client code: PyPI ``rocketmq-python-client``, Maven Central
``org.apache.rocketmq:rocketmq-client-java`` (the driver is compiled against it with javac), npm
``rocketmq-client-nodejs`` (``npm ci`` of the lock file in ``sdk5_drivers/node``) and the Go module
``github.com/apache/rocketmq-clients/golang/v5`` (the driver is built with ``go build``; go.sum pins it).
They live under ``~/.cache/rocketmq-spec/sdk5/`` (``$RMQ_SDK5_CACHE``), shared by every checkout, because
they are test equipment, not dependencies.

    python -m rocketmq_spec.conformance.clients.sdk5 [--json] [python java node go]
    python -m rocketmq_spec.conformance.clients.sdk5 run SDK SCENARIO

The first form installs and reports; a second run only checks: an SDK is installed again, into a directory
of its own, when its pin or its driver's source changed (the stamp names the directory). An SDK whose tool
is missing (no ``java``, ``npm`` or ``go``) is reported unavailable with the reason. ``run`` is how the
client conformance suite starts a driver: it installs the SDK on first use, then replaces itself with the
driver running SCENARIO (exit 2, the driver failed, when the SDK cannot be installed here). The drivers'
sources are in ``sdk5_drivers/`` (its README says what each scenario does); the interop tests
(tests/test_sdk5_interop.py) run the same drivers.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from rocketmq_spec.apache.maven import project_cache

SDK5_DIR = Path(__file__).resolve().with_name("sdk5_drivers")
CACHE_ENV = "RMQ_SDK5_CACHE"
CACHE_DIR = project_cache("sdk5", CACHE_ENV)
INSTALLED = ".installed"
"""Written into an install directory once its install ended well."""
INSTALL_TIMEOUT_S = 900
"""A cold Go build downloads and compiles gRPC: minutes, not hours."""


@dataclass(frozen=True)
class Sdk:
    name: str
    package: str
    """Registry coordinates at the pinned version."""
    tools: tuple[str, ...]
    """Executables the install and the driver need."""
    inputs: tuple[str, ...]
    """Files under sdk5_drivers whose contents the installed driver depends on."""


PYTHON = Sdk("python", "rocketmq-python-client==5.1.2", (), ("py_driver.py",))
JAVA = Sdk("java", "org.apache.rocketmq:rocketmq-client-java:5.2.0", ("mvn", "javac", "java"),
           ("java/pom.xml", "java/SdkDriver.java"))
NODE = Sdk("node", "rocketmq-client-nodejs@1.0.8", ("npm", "node"),
           ("node/package.json", "node/package-lock.json", "node_driver.js"))
GO = Sdk("go", "github.com/apache/rocketmq-clients/golang/v5@v5.1.4", ("go",),
         ("go/go.mod", "go/go.sum", "go/main.go", "../go_contract/go.mod", "../go_contract/contract.go"))
SDKS = (PYTHON, JAVA, NODE, GO)
SDK_NAMES = tuple(sdk.name for sdk in SDKS)
"""Java's newest release Maven Central serves is 5.2.0; npm has only 1.0.8 of the Node.js SDK; the Go
module proxy serves v5.1.4 of golang/v5."""


@dataclass(frozen=True)
class Availability:
    sdk: str
    available: bool
    reason: str | None


def _target(sdk: Sdk) -> Path:
    """Where this version of the SDK and its driver is installed: one directory per stamp, so checkouts
    whose drivers differ each keep their own install instead of replacing each other's while a driver
    of the other runs from it."""
    return CACHE_DIR / "installs" / f"{sdk.name}-{_stamp(sdk)[:16]}"


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")


def _install_python(target: Path) -> None:
    _run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile", "--target",
          str(target), PYTHON.package])


def _install_java(target: Path) -> None:
    _run(["mvn", "-q", "-B", "-f", str(SDK5_DIR / "java" / "pom.xml"), "dependency:copy-dependencies",
          f"-DoutputDirectory={target / 'lib'}"])
    _run(["javac", "-cp", str(target / "lib" / "*"), "-d", str(target / "classes"),
          str(SDK5_DIR / "java" / "SdkDriver.java")])


def _install_node(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(SDK5_DIR / "node" / name, target / name)
    _run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=target)


def _install_go(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    _run(["go", "build", "-o", str(target / "driver"), "."], cwd=SDK5_DIR / "go",
         env={**os.environ, "GOFLAGS": "-mod=readonly"})


INSTALLERS: dict[str, Callable[[Path], None]] = {
    "python": _install_python, "java": _install_java, "node": _install_node, "go": _install_go}


def driver_command(sdk: Sdk) -> tuple[list[str], dict[str, str]]:
    """The command that runs an installed SDK's driver, and its environment."""
    target, env = _target(sdk), dict(os.environ)
    if sdk is PYTHON:
        env["PYTHONPATH"] = str(target)
        return [sys.executable, str(SDK5_DIR / "py_driver.py")], env
    if sdk is JAVA:
        return ["java", "-Xmx256m", "-cp", f"{target / 'lib' / '*'}{os.pathsep}{target / 'classes'}",
                "SdkDriver"], env
    if sdk is NODE:
        env["NODE_PATH"] = str(target / "node_modules")
        return ["node", str(SDK5_DIR / "node_driver.js")], env
    return [str(target / "driver")], env


def _stamp(sdk: Sdk) -> str:
    digest = hashlib.sha256(f"{sdk.package} {sys.version}".encode())
    for name in sdk.inputs:
        digest.update((SDK5_DIR / name).read_bytes())
    return digest.hexdigest()


@contextmanager
def _locked() -> Iterator[None]:
    """Parallel test workers may all ask for the SDKs at once: one installs, the others wait."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE_DIR / ".install.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install(names: tuple[str, ...] = SDK_NAMES) -> list[Availability]:
    """Install what is missing or stale among ``names``; report which SDKs can be driven and why not."""
    results = []
    with _locked():
        for sdk in (s for s in SDKS if s.name in names):
            missing = [tool for tool in sdk.tools if shutil.which(tool) is None]
            reason = f"no `{missing[0]}` executable on PATH" if missing else None
            target = _target(sdk)
            if reason is None and not (target / INSTALLED).exists():
                shutil.rmtree(target, ignore_errors=True)
                try:
                    INSTALLERS[sdk.name](target)
                    (target / INSTALLED).write_text(sdk.package + "\n")
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                    reason = f"install of {sdk.package} failed: {exc}"
            results.append(Availability(sdk.name, reason is None, reason))
    return results


INSTALL_FAILED = 2
PROG = "python -m rocketmq_spec.conformance.clients.sdk5"


def run(sdk_name: str, scenario: str) -> int:
    """Install ``sdk_name`` if needed, then become its driver running ``scenario``."""
    (result,) = install((sdk_name,))
    if not result.available:
        print(f"the {sdk_name} SDK cannot be driven here: {result.reason}", file=sys.stderr)
        return INSTALL_FAILED
    argv, env = driver_command(next(s for s in SDKS if s.name == sdk_name))
    sys.stdout.flush()
    os.execvpe(argv[0], [*argv, scenario], env)
    raise AssertionError("unreachable: os.execvpe does not return")  # pragma: no cover


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    names = list(SDK_NAMES)
    if argv[:1] == ["run"]:
        runner = argparse.ArgumentParser(prog=f"{PROG} run", description=run.__doc__)
        runner.add_argument("sdk", choices=names)
        runner.add_argument("scenario", help="a scenario of the client driver contract")
        ran = runner.parse_args(argv[1:])
        return run(ran.sdk, ran.scenario)
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("sdks", nargs="*", metavar="SDK", help="python, java, node or go (default: all four)")
    parser.add_argument("--json", action="store_true", help="print the availability report as JSON")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sdks) - set(names))
    if unknown:
        parser.error(f"unknown SDK {unknown[0]!r}: choose from {', '.join(names)}")
    results = install(tuple(args.sdks) or tuple(names))
    if args.json:
        print(json.dumps([asdict(r) for r in results]))
    else:
        for result in results:
            print(f"{result.sdk}: {'ok' if result.available else 'UNAVAILABLE: ' + str(result.reason)}")
    return 0 if all(r.available for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
