"""The ``ROCKETMQ_HOME`` a provisioned release runs in, and its configuration files.

Each running instance gets a directory of its own: ``conf/`` (logging, ``namesrv.conf``, ``broker.conf``),
``logs/``, and by default ``store/``. Java's ``user.home`` is pointed at it as well, so nothing the release
writes by default (``~/logs/rocketmqlogs``, ``~/store``, ``~/namesrv/kvConfig.json``) lands in the user's
home directory, and two instances never share a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.releases import Logging, Release

LOG_ROLES = ("namesrv", "broker", "tools")

_LOGBACK = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by rocketmq-spec: 4.x refuses to start without conf/logback_{role}.xml. One file per role. -->
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%d{{yyyy-MM-dd HH:mm:ss.SSS}} %-5p [%t] %c{{1}} - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


def write_home(home: Path, release: Release) -> Path:
    """Create ``home`` with what ``release`` needs before its name server or broker starts."""
    (home / "conf").mkdir(parents=True, exist_ok=True)
    (home / "logs").mkdir(exist_ok=True)
    if release.logging is Logging.LOGBACK_CONF:
        for role in LOG_ROLES:
            text = _LOGBACK.format(role=role, log=home / "logs" / f"{role}.log")
            (home / "conf" / f"logback_{role}.xml").write_text(text, encoding="utf-8")
    return home


def read_properties(path: Path) -> dict[str, str]:
    """A ``broker.conf`` as ``Properties.load`` reads its simple form: ``key=value``, ``#`` comments."""
    values: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            key, _, value = line.partition(":")
        values[key.strip()] = value.strip()
    return values


def write_properties(path: Path, values: Mapping[str, object]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()), encoding="utf-8")
    return path
