"""Finding a Java runtime new enough for a release.

A machine may have several JDKs (``JAVA_HOME``, the ``java`` on ``PATH``, more under ``/usr/lib/jvm``);
each JDK states its version in its ``release`` file, so none has to be started to be judged.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.apache.maven import ToolMissing

JVM_DIRS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))


@dataclass(frozen=True)
class Jdk:
    home: Path
    major: int

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"


def _major(home: Path) -> int | None:
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.MULTILINE)
    if match is None:
        return None
    first = int(match.group(1))
    return int(match.group(2) or 0) if first == 1 else first  # "1.8.0" is Java 8


def _candidates() -> list[Path]:
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    for root in JVM_DIRS:
        if root.is_dir():
            homes.extend(sorted(path for path in root.iterdir() if path.is_dir() and not path.is_symlink()))
    return homes


def find_jdk(min_major: int) -> Jdk:
    """The first JDK at ``min_major`` or newer: ``JAVA_HOME``, then ``PATH``, then the usual directories."""
    seen: list[str] = []
    for home in dict.fromkeys(_candidates()):
        major = _major(home)
        if major is None or not (home / "bin" / "java").is_file():
            continue
        if major >= min_major:
            return Jdk(home, major)
        seen.append(f"Java {major} at {home}")
    raise ToolMissing(f"no Java {min_major} or newer is installed (found: {', '.join(seen) or 'none'}); "
                      "set JAVA_HOME to one", expected=f"Java >= {min_major}", seen=", ".join(seen) or "none")
