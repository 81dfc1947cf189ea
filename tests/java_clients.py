"""Apache RocketMQ's Java client in tests, through the project's own driver programs.

:func:`driver` returns the command running a driver (``rocketmq_spec.apache.drivers``) on a release's client,
compiling it on first use; where Java, ``javac`` or Maven is missing, or the Maven repository does not
serve the release, the test is skipped with that reason. The releases are the newest of each line the
project's Maven repository serves (``rocketmq_spec.targets.PROJECT_TARGETS``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.apache import NotServed, ToolMissing
from rocketmq_spec.apache.drivers import driver_command
from rocketmq_spec.targets import APACHE_PREFIX, PROJECT_TARGETS

CLIENT_RELEASES = tuple(name.removeprefix(APACHE_PREFIX) for name in PROJECT_TARGETS
                        if name.startswith(APACHE_PREFIX))
FOUR_X = CLIENT_RELEASES[0]
"""The 4.x client: the only line with ACL 1.0 signing in its client."""
FIVE_X = CLIENT_RELEASES[-1]


def driver(version: str, program: str, *args: str, home: Path) -> list[str]:
    try:
        return driver_command(version, program, *args, home=home)
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
