"""The project's own small Java programs, compiled at run time against a release's class path.

Sources live in ``tests/java``; each is compiled once per session into a directory of its own, so the
only things taken from a release are its jars. Callers skip when no JDK is at hand, or no Maven to
provision the release with.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rocketmq_spec.apache.maven import NotServed, ToolMissing, resolve
from rocketmq_spec.apache.releases import release as apache_release
from tests import process_tree

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
COMPILE_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 120.0


class JavaUnavailable(RuntimeError):
    """No JDK, or the release's jars are not provisioned on this machine."""


def release_classpath(version: str) -> str:
    """The class path of an Apache RocketMQ release, resolved from Maven Central into the cache when it is
    not there yet, as the project provisions releases everywhere; JavaUnavailable only where Maven is
    missing or does not serve the release."""
    try:
        jars = resolve(apache_release(version), progress=False)
    except (ToolMissing, NotServed) as exc:
        raise JavaUnavailable(f"Apache RocketMQ {version} cannot be provisioned here: {exc}") from None
    return ":".join(str(jar) for jar in jars)


def require_release(version: str) -> None:
    """Provision an Apache RocketMQ release for a test that starts it, or skip the test where Maven cannot
    (a test that found the release missing and skipped would never run on a fresh machine)."""
    try:
        release_classpath(version)
    except JavaUnavailable as exc:
        pytest.skip(str(exc))


def compile_program(name: str, classpath: str, out_dir: Path) -> Path:
    """Compile ``tests/java/<name>.java`` into ``out_dir`` (once) and return the directory."""
    javac = shutil.which("javac")
    if javac is None:
        raise JavaUnavailable("javac is not on PATH")
    if not (out_dir / f"{name}.class").exists():
        out_dir.mkdir(parents=True, exist_ok=True)
        source = JAVA_SOURCES / f"{name}.java"
        process_tree.run([javac, "-nowarn", "-cp", classpath, "-d", str(out_dir), str(source)],
                         check=True, capture_output=True, timeout=COMPILE_TIMEOUT_S)
    return out_dir


def run_program(name: str, classpath: str, classes: Path, *args: str, timeout: float = RUN_TIMEOUT_S,
                java_options: tuple[str, ...] = ("-Xmx256m",), stdin: str | None = None) -> str:
    """Run a compiled program; returns its standard output (CalledProcessError on a non-zero exit)."""
    java = shutil.which("java")
    if java is None:
        raise JavaUnavailable("java is not on PATH")
    done = process_tree.run([java, *java_options, "-cp", f"{classes}:{classpath}", name, *args], check=True,
                            capture_output=True, text=True, timeout=timeout, input=stdin)
    return done.stdout
