"""The project's own Java programs, compiled at run time against a release's class path.

Apache's example programs (``TransactionProducer``, the benchmark ``Producer`` and ``Consumer``) are on
Maven Central for few releases, so tests and benchmarks drive a release's client through small programs
of the project's own, in ``rocketmq_spec/apache/java`` (package ``rmqspec.drivers``; each file says what it
does and how it is called). They use only client API that 4.x and 5.x share.

``javac`` compiles them against the release's jars into the cache, under a directory named by the hash
of the sources and the release, so a changed source is compiled again and an unchanged one never is:

    classes = compiled("5.5.0")
    subprocess.run(driver_command("5.5.0", "Produce", namesrv, topic, "1", "128", "10", "0", home=tmp))
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from rocketmq_spec.apache.cluster import java_options
from rocketmq_spec.apache.home import write_home
from rocketmq_spec.apache.jdk import Jdk, find_jdk
from rocketmq_spec.apache.maven import ProvisionError, ToolMissing, cache_root, locked, resolve
from rocketmq_spec.apache.releases import Release, release

SOURCES = Path(__file__).with_name("java")
PACKAGE = "rmqspec.drivers"
COMPILE_TIMEOUT = 300.0
DONE = ".compiled"
"""Written last, so a compilation cut short is redone rather than trusted."""


class CompileFailed(ProvisionError):
    """javac refused the drivers for a release (its client API lacks something they use)."""


def _digest(row: Release) -> str:
    digest = hashlib.sha256(row.version.encode())
    for source in sorted(SOURCES.glob("*.java")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


def _javac(jdk: Jdk) -> Path:
    javac = jdk.home / "bin" / "javac"
    if not javac.is_file():
        raise ToolMissing(f"the Java at {jdk.home} has no javac (a JDK, not a JRE, compiles the project's "
                          "Java drivers)", expected="javac", seen="none")
    return javac


def compiled(version: str | Release) -> Path:
    """The directory of the drivers' classes for ``version``, compiling them on first use."""
    row = version if isinstance(version, Release) else release(version)
    classes = cache_root() / "drivers" / f"{row.version}-{_digest(row)}"
    if (classes / DONE).is_file():
        return classes
    classes.mkdir(parents=True, exist_ok=True)
    with locked(classes.parent / f"{classes.name}.lock"):
        if not (classes / DONE).is_file():
            _compile(row, classes)
    return classes


def _compile(row: Release, classes: Path) -> None:
    jdk = find_jdk(row.min_java)
    jars = resolve(row, progress=False)
    shutil.rmtree(classes, ignore_errors=True)
    classes.mkdir(parents=True)
    command = [str(_javac(jdk)), "-nowarn", "-encoding", "UTF-8", "--release", str(row.min_java),
               "-cp", os.pathsep.join(map(str, jars)), "-d", str(classes),
               *map(str, sorted(SOURCES.glob("*.java")))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT, check=False)
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if "error:" in line), done.stderr.strip())
        raise CompileFailed(f"javac refused the project's Java drivers for Apache RocketMQ {row.version}: "
                            f"{first}", expected="compiled drivers", seen=f"javac exit {done.returncode}")
    (classes / DONE).write_text("", encoding="utf-8")


def java_command(version: str | Release, main_class: str, *args: str, home: Path, heap_mb: int = 256,
                 extra_classpath: tuple[Path, ...] = ()) -> list[str]:
    """The command running ``main_class`` on ``version``'s class path (a client, a tool such as mqadmin's
    ``org.apache.rocketmq.tools.command.MQAdminStartup``), with ``home`` as its ``ROCKETMQ_HOME`` and home
    directory: logs and any file it writes by default go there."""
    row = version if isinstance(version, Release) else release(version)
    jars = resolve(row, progress=False)
    jdk = find_jdk(row.min_java)
    write_home(home, row)
    classpath = os.pathsep.join(map(str, [*extra_classpath, *jars]))
    return [str(jdk.java), *java_options(row, home, heap_mb), "-cp", classpath, main_class, *args]


def driver_command(version: str | Release, program: str, *args: str, home: Path,
                   heap_mb: int = 256) -> list[str]:
    """The command running driver ``program`` (``Produce``, ``Consume``, ...) on ``version``'s client."""
    return java_command(version, f"{PACKAGE}.{program}", *args, home=home, heap_mb=heap_mb,
                        extra_classpath=(compiled(version),))
