"""The project's own small Java programs, compiled at run time against a release's class path.

Sources live in ``tests/java``; each is compiled once per session into a directory of its own, so the
only things taken from a release are its jars. Callers skip when no JDK or no provisioned release is at
hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rocketmq_spec.apache.maven import cached_classpath
from rocketmq_spec.apache.releases import release as apache_release
from tests import process_tree

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
COMPILE_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 120.0


class JavaUnavailable(RuntimeError):
    """No JDK, or the release's jars are not provisioned on this machine."""


def release_classpath(version: str) -> str:
    """The provisioned class path of an Apache RocketMQ release, or JavaUnavailable."""
    jars = cached_classpath(apache_release(version))
    if jars is None:
        raise JavaUnavailable(f"Apache RocketMQ {version} is not provisioned "
                              f"(run: rmq-apache classpath {version})")
    return ":".join(str(jar) for jar in jars)


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
