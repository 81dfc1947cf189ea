"""The drivers ``rmq-conformance client --driver NAME`` knows by name: a table a row can be added to.

A row says which protocol the driver speaks, how to make it runnable here (install its client into the
cache and say why it cannot run, if it cannot) and the command line the suite runs it with (the
scenario is appended). Anything else given to ``--driver`` is a path to an executable of one's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.conformance.clients import drivers_java, go_v2, install, rust_client
from rocketmq_spec.conformance.clients.driver_row import DriverRow

CONTRACT = install.DRIVERS_DIR / "contract.py"


def _installed(client: str) -> Callable[[], str | None]:
    def ensure() -> str | None:
        found = {row.client: row.reason for row in install.install()}
        return found.get(client, f"{client} is not installed by this package")

    return ensure


def _contract_argv(client: str) -> Callable[[], list[str]]:
    return lambda: [sys.executable, str(CONTRACT), client]


def _node_and_python_env() -> dict[str, str]:
    env = {k: v for k, v in install.node_env().items() if k == "NODE_PATH"}
    env["PYTHONPATH"] = install.python_env()["PYTHONPATH"]
    node = install.node_executable()
    if node:
        env["RMQ_NODE"] = node
    return env


DRIVERS: dict[str, DriverRow] = {
    row.name: row
    for row in (
        DriverRow(
            install.PY_ROCKETMQ,
            "remoting",
            _installed(install.PY_ROCKETMQ),
            _contract_argv(install.PY_ROCKETMQ),
            _node_and_python_env,
            "PyPI rocketmq 0.4.4: ctypes over the bundled C++ client 1.2.x",
        ),
        DriverRow(
            install.ALI_ONS,
            "remoting",
            _installed(install.ALI_ONS),
            _contract_argv(install.ALI_ONS),
            _node_and_python_env,
            "npm ali-ons 3.12.0: a JavaScript client",
        ),
        DriverRow(
            install.ROCKETMQ_NODEJS,
            "remoting",
            _installed(install.ROCKETMQ_NODEJS),
            _contract_argv(install.ROCKETMQ_NODEJS),
            _node_and_python_env,
            "npm rocketmq-nodejs 1.1.2: N-API addon around the C++ client 2.x",
        ),
        *drivers_java.DRIVERS,
        *go_v2.DRIVERS,
        rust_client.ROW,
    )
}


class UnknownDriver(ValueError):
    def __init__(self, text: str) -> None:
        super().__init__(
            f"--driver {text!r} is neither a known driver ({', '.join(sorted(DRIVERS))}) "
            "nor a path to an executable"
        )


@dataclass(frozen=True)
class Resolved:
    name: str
    argv: list[str]
    environment: dict[str, str]
    unavailable: str | None = None


def resolve(text: str) -> Resolved:
    """A registry row by name (installed if needed), or an executable by path."""
    row = DRIVERS.get(text)
    if row is not None:
        reason = row.install()
        return Resolved(row.name, row.argv(), row.environment() if reason is None else {}, reason)
    path = Path(text)
    if os.sep in text or path.exists():
        return Resolved(text, [str(path.resolve())], {})
    raise UnknownDriver(text)
