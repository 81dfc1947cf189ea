"""Resolving a release's jars from Maven Central with Maven itself, into a per-version cache.

Maven does the resolution (dependency mediation, exclusions, checksums, its own ``~/.m2`` cache): the
project only writes a throw-away pom naming the release's artifacts and asks ``dependency:copy-dependencies``
to lay the jars out in one directory. Re-implementing a resolver would be plumbing that Maven already does
right. The directory is complete once ``classpath.txt`` is written, which happens last, so an interrupted
resolution is redone rather than trusted; a file lock keeps parallel test workers from resolving twice.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from xml.sax.saxutils import escape

from rocketmq_spec.apache.releases import GROUP_ID, Release

CACHE_ENV = "RMQ_APACHE_CACHE"
"""Where releases are cached; default ``$XDG_CACHE_HOME/rocketmq-spec/apache`` (``~/.cache/...``)."""

MAVEN_ENV = "RMQ_MAVEN"
"""The ``mvn`` to run, when it is not the one on ``PATH``."""

CLASSPATH_FILE = "classpath.txt"

RESOLVE_TIMEOUT = 1800.0
"""A cold resolution downloads ~150 jars (5.x); even a slow mirror finishes well within this."""


class ProvisionError(RuntimeError):
    """A release cannot be provisioned on this machine; the message is one line saying why."""

    def __init__(self, message: str, *, expected: str = "", seen: str = "") -> None:
        super().__init__(message)
        self.expected = expected
        self.seen = seen


class ToolMissing(ProvisionError):
    """Java or Maven is not installed: tests skip with this reason rather than fail."""


class NotServed(ProvisionError):
    """The Maven repository this machine reaches does not serve some artifact of the release."""


def project_cache(name: str, env: str) -> Path:
    """``~/.cache/rocketmq-spec/<name>`` (under ``XDG_CACHE_HOME`` when set), or the directory ``env``
    names: where provisioned releases of one implementation are kept."""
    if os.environ.get(env):
        return Path(os.environ[env]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rocketmq-spec" / name


def cache_root() -> Path:
    return project_cache("apache", CACHE_ENV)


def release_dir(release: Release) -> Path:
    return cache_root() / release.cache_name


def maven_command() -> str:
    found = os.environ.get(MAVEN_ENV) or shutil.which("mvn")
    if not found:
        raise ToolMissing("Maven (mvn) is not installed: it resolves Apache RocketMQ's jars from Maven "
                          f"Central (install it, or point {MAVEN_ENV} at it)",
                          expected="mvn on PATH", seen="none")
    return found


def pom(release: Release) -> str:
    exclusions = ("" if release.transitive else
                  "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>")
    dependencies = "".join(
        f"<dependency><groupId>{GROUP_ID}</groupId><artifactId>{escape(artifact)}</artifactId>"
        f"<version>{escape(release.version)}</version>{exclusions}</dependency>"
        for artifact in release.artifacts)
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            f"<groupId>rocketmq-spec.provision</groupId><artifactId>apache-rocketmq</artifactId>"
            f"<version>{escape(release.version)}</version><packaging>pom</packaging>"
            f"<dependencies>{dependencies}</dependencies></project>\n")


def cached_classpath(release: Release) -> list[Path] | None:
    """The release's jars if an earlier resolution completed and none has gone missing since."""
    listing = release_dir(release) / CLASSPATH_FILE
    if not listing.is_file():
        return None
    jars = [Path(line) for line in listing.read_text(encoding="utf-8").splitlines() if line]
    return jars if jars and all(jar.is_file() for jar in jars) else None


def resolve(release: Release, *, progress: bool = True) -> list[Path]:
    """The release's class path, resolving it into the cache first if needed."""
    jars = cached_classpath(release)
    if jars is not None:
        return jars
    directory = release_dir(release)
    directory.mkdir(parents=True, exist_ok=True)
    with locked(directory / ".lock"):
        jars = cached_classpath(release)  # another process may have finished while we waited
        if jars is None:
            jars = _resolvelocked(release, directory, progress)
    return jars


@contextmanager
def locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _resolvelocked(release: Release, directory: Path, progress: bool) -> list[Path]:
    mvn = maven_command()
    (directory / "pom.xml").write_text(pom(release), encoding="utf-8")
    lib = directory / "lib"
    shutil.rmtree(lib, ignore_errors=True)
    if progress:
        print(f"resolving Apache RocketMQ {release.version} from Maven Central into {directory} ...",
              file=sys.stderr, flush=True)
    command = [mvn, "-B", "-q", "-U", "-f", str(directory / "pom.xml"), "dependency:copy-dependencies",
               f"-DoutputDirectory={lib}", "-DincludeScope=runtime"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ProvisionError(f"Maven did not resolve Apache RocketMQ {release.version} within "
                             f"{RESOLVE_TIMEOUT:.0f} s", expected="a finished resolution",
                             seen="timeout") from None
    (directory / "maven.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise _failure(release, done.stdout + done.stderr, directory / "maven.log")
    jars = sorted(lib.glob("*.jar"))
    if not jars:
        raise ProvisionError(f"Maven resolved no jar for Apache RocketMQ {release.version}",
                             expected="the release's jars", seen=f"an empty {lib}")
    (directory / CLASSPATH_FILE).write_text("".join(f"{jar}\n" for jar in jars), encoding="utf-8")
    return jars


_NOT_FOUND = re.compile(r"Could not find artifact ([\w.\-]+:[\w.\-]+):jar:([\w.\-]+)")
_UNREACHABLE = re.compile(r"(Could not transfer|Unknown host|Network is unreachable|Connection refused|"
                          r"timed out|non-resolvable parent POM)", re.IGNORECASE)


def _failure(release: Release, output: str, log: Path) -> ProvisionError:
    missing = sorted(set(_missing_artifacts(output)))
    if missing:
        return NotServed(f"Apache RocketMQ {release.version} cannot be provisioned: the Maven repository "
                         f"does not serve {', '.join(missing)}", expected=f"every jar of {release.version}",
                         seen=f"missing {', '.join(missing)}")
    if _UNREACHABLE.search(output):
        return ProvisionError(f"Maven Central is not reachable from this machine (see {log})",
                              expected="a reachable Maven repository", seen="no network")
    last = next((line for line in reversed(output.splitlines()) if "ERROR" in line), "Maven failed")
    return ProvisionError(f"Maven could not resolve Apache RocketMQ {release.version}: "
                          f"{last.replace('[ERROR]', '').strip()} (see {log})")


_ARTIFACT = re.compile(r"([\w.\-]+):([\w.\-]+):jar:([\w.\-]+)")


def _missing_artifacts(output: str) -> Iterator[str]:
    """``artifact:version`` of each jar Maven names as unresolvable."""
    for line in output.splitlines():
        if "could not be resolved:" in line:
            # "... could not be resolved: g:a:jar:v, g:a:jar:v: <why the first failed> -> [Help 1]"
            listed = line.split("could not be resolved:", 1)[1]
            for item in listed.split(","):
                match = _ARTIFACT.match(item.strip())
                if match is None:
                    break
                yield f"{match.group(2)}:{match.group(3)}"
        else:
            for match in _NOT_FOUND.finditer(line):
                yield f"{match.group(1).split(':')[1]}:{match.group(2)}"
