"""Run real RocketMQ clients (PyPI `rocketmq` 0.4.4, npm `ali-ons` 3.12.0, npm `rocketmq-nodejs` 1.1.2)
against a broker under test.

Each call runs one driver program from `rocketmq_spec/conformance/clients/drivers/` in its own process
with a hard timeout and
returns the JSON events it printed.  A process per run keeps a crashing C++ client from taking the test
session down, and keeps each client's global state (the C++ clients share one instance per process and
group) out of the next run.  Usage:

    clients = ensure_installed()
    if not clients.available(PY_ROCKETMQ): pytest.skip(clients.reason(PY_ROCKETMQ))
    sent = run_producer(PY_ROCKETMQ, "127.0.0.1:9876", "T", [{"tags": "A", "body_b64": "aGk="}], "sync")
    got = run_consumer(PY_ROCKETMQ, "127.0.0.1:9876", "G", "T", "A", expect=1, timeout=60)

Message dicts: `tags`, `keys` (space-separated), `properties` (str → str), `body_b64`, and for orderly
sends `shardingKey` (int; queue = shardingKey % queue count).  Events are described in interop/README.md.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance.clients import install as _install
from tests import process_tree

DRIVERS_DIR = _install.DRIVERS_DIR



def load_program(path: Path, name: str) -> ModuleType:
    """interop/ is a folder of programs, not a package: load one by path under ``name``, which must not
    collide with anything importable."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


PY_ROCKETMQ = _install.PY_ROCKETMQ
ALI_ONS = _install.ALI_ONS
ROCKETMQ_NODEJS = _install.ROCKETMQ_NODEJS

# Send modes each client offers (orderly = queue chosen by a MessageQueueSelector in the client).
PRODUCER_MODES: dict[str, frozenset[str]] = {
    PY_ROCKETMQ: frozenset({"sync", "async", "oneway", "batch", "orderly"}),
    ALI_ONS: frozenset({"sync", "async"}),
    ROCKETMQ_NODEJS: frozenset({"sync", "async"}),
}
# Consumer kinds each client offers; all push consumers run in clustering mode.
CONSUMER_KINDS: dict[str, frozenset[str]] = {
    PY_ROCKETMQ: frozenset({"push", "pull"}),
    ALI_ONS: frozenset({"push"}),
    ROCKETMQ_NODEJS: frozenset({"push"}),
}
# The C++ clients log under $HOME; every run gets its own $HOME, and this much of the log is quoted
# when a run fails.
LOG_TAIL_CHARS = 4000
STDERR_TAIL_CHARS = 4000
# A producer run starts a client, resolves the route and sends; on loopback that is a few seconds, so
# this bound only catches a hung client or broker.
PRODUCER_TIMEOUT_S = 120.0
# Consumer drivers stop by themselves once `idle` seconds pass without a message; the process gets this
# much on top of the caller's timeout to shut the client down (unregister, flush offsets) and exit.
SHUTDOWN_ALLOWANCE_S = 20.0


class InteropError(RuntimeError):
    """A driver failed: carries what was expected, what was seen, and the driver's own diagnostics."""

    def __init__(self, client: str, expected: str, seen: str, diagnostics: str) -> None:
        super().__init__(f"{client}: expected {expected}, seen {seen}\n{diagnostics}")
        self.client = client
        self.expected = expected
        self.seen = seen
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class Clients:
    """Which clients can run on this machine, with the reason for each one that cannot."""

    reasons: dict[str, str | None]

    def available(self, client: str) -> bool:
        return client in self.reasons and self.reasons[client] is None

    def reason(self, client: str) -> str:
        return self.reasons.get(client) or f"{client} is available"

    @property
    def names(self) -> list[str]:
        return [client for client, reason in self.reasons.items() if reason is None]


def ensure_installed() -> Clients:
    """Install the pinned clients into `.cache/interop/` if needed (quick when already done)."""
    return Clients({r.client: r.reason for r in _install.install()})


def _driver_command(client: str, arguments: list[str]) -> tuple[list[str], dict[str, str]]:
    if client == PY_ROCKETMQ:
        return [sys.executable, str(DRIVERS_DIR / "py_rocketmq.py"), *arguments], _install.python_env()
    scripts = {ALI_ONS: "ali_ons.js", ROCKETMQ_NODEJS: "rocketmq_nodejs.js"}
    node = _install.node_executable()
    if client not in scripts or node is None:
        raise InteropError(client, "a known client with its runtime on PATH",
                           f"client {client!r}, node {node!r}", "")
    return [node, str(DRIVERS_DIR / scripts[client]), *arguments], _install.node_env()


def _log_tail(home: Path) -> str:
    logs = sorted((home / "logs").rglob("*.log*")) if (home / "logs").exists() else []
    text = "".join(path.read_text(errors="replace") for path in logs)
    return text[-LOG_TAIL_CHARS:]


def parse_events(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Split driver output into events and stray lines (a native library may print to stdout too)."""
    events: list[dict[str, Any]] = []
    stray: list[str] = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            event = None
        if isinstance(event, dict) and "event" in event:
            events.append(event)
        elif line.strip():
            stray.append(line)
    return events, stray


def _run_driver(client: str, arguments: list[str], timeout: float, input_files: dict[str, Any]
                ) -> list[dict[str, Any]]:
    """Run one driver; return its events, or raise with its stderr, stray output and client log."""
    with tempfile.TemporaryDirectory(prefix="rmq-interop-") as scratch:
        home = Path(scratch)
        for name, content in input_files.items():
            (home / name).write_text(json.dumps(content))
        argv, env = _driver_command(client, arguments)
        env["HOME"] = str(home)
        try:
            completed = process_tree.run(argv, env=env, cwd=home, capture_output=True, text=True,
                                         timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
            raise InteropError(client, f"driver exit within {timeout:g} s", "still running",
                               _diagnostics(stdout or "", stderr or "", home)) from exc
        events, _ = parse_events(completed.stdout)
        if completed.returncode != 0 or not any(e["event"] == "done" for e in events):
            raise InteropError(client, "exit status 0 and a done event",
                               f"exit status {completed.returncode}",
                               _diagnostics(completed.stdout, completed.stderr, home))
        return events


def _diagnostics(stdout: str, stderr: str, home: Path) -> str:
    events, stray = parse_events(stdout)
    return "\n".join([
        "events: " + json.dumps(events)[-STDERR_TAIL_CHARS:],
        "stray stdout: " + "\n".join(stray)[-STDERR_TAIL_CHARS:],
        "stderr tail: " + stderr[-STDERR_TAIL_CHARS:],
        "client log tail: " + _log_tail(home),
    ])


def _credentials(credentials: Credentials | None) -> list[str]:
    """Driver flags that make the client sign its requests (ACL 1.0)."""
    if credentials is None:
        return []
    return ["--access-key", credentials.access_key, "--secret-key", credentials.secret_key]


def run_producer(client: str, namesrv: str, topic: str, messages: Sequence[dict[str, Any]], mode: str,
                 *, group: str | None = None, timeout: float = PRODUCER_TIMEOUT_S,
                 credentials: Credentials | None = None) -> list[dict[str, Any]]:
    """Send `messages` and return the `sent` events (one per message; one per batch in batch mode)."""
    if mode not in PRODUCER_MODES.get(client, frozenset()):
        raise InteropError(client, f"one of {sorted(PRODUCER_MODES.get(client, ()))}", f"mode {mode!r}", "")
    arguments = ["produce", "--namesrv", namesrv, "--topic", topic, "--mode", mode,
                 "--messages", "messages.json"]
    if group:
        arguments += ["--group", group]
    arguments += _credentials(credentials)
    events = _run_driver(client, arguments, timeout, {"messages.json": list(messages)})
    return [event for event in events if event["event"] == "sent"]


def run_consumer(client: str, namesrv: str, group: str, topic: str, expression: str, expect: int,
                 timeout: float, *, kind: str = "push", property_keys: Sequence[str] = (),
                 retry_times: int = 0, credentials: Credentials | None = None) -> list[dict[str, Any]]:
    """Consume until `expect` messages were accepted or `timeout` seconds passed without a delivery;
    return the `received` events (every delivery, `accepted` telling which).  Raises when fewer than
    `expect` were accepted.

    `property_keys` names user properties to read back: rocketmq 0.4.4 can only look properties up by
    name (the JavaScript clients report all of them anyway).  `retry_times` (push only) makes the
    consumer answer "consume later" until a message has come back that many times, which drives
    CONSUMER_SEND_MSG_BACK and the group's retry topic; each retry waits for the broker's delay level.
    """
    if kind not in CONSUMER_KINDS.get(client, frozenset()):
        raise InteropError(client, f"one of {sorted(CONSUMER_KINDS.get(client, ()))}", f"kind {kind!r}", "")
    arguments = [kind, "--namesrv", namesrv, "--group", group, "--topic", topic, "--expression", expression,
                 "--expect", str(expect), "--idle-timeout", f"{timeout:g}"]
    for key in property_keys:
        arguments += ["--property-key", key]
    if retry_times:
        arguments += ["--retry-times", str(retry_times)]
    arguments += _credentials(credentials)
    events = _run_driver(client, arguments, timeout + SHUTDOWN_ALLOWANCE_S, {})
    return [event for event in events if event["event"] == "received"]
