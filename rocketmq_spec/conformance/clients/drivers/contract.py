"""Runs a shipped driver under the client-driver contract: ``contract.py CLIENT SCENARIO``.

The shipped drivers (py_rocketmq.py, ali_ons.js, rocketmq_nodejs.js) keep the command line the interop
tests use; this wrapper reads the contract's RMQ_* variables, turns the scenario into that command line,
and turns the driver's events into the contract's (a batch's one ``sent`` with ``indexes`` into one per
message, a ``ready`` once the client is up). Scenarios a client cannot do exit 3 with the reason.
Package data, run by ``rocketmq_spec.conformance.clients.registry`` with the interpreter of the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
UNSUPPORTED = 3
SHUTDOWN_MARGIN_S = 8.0
"""What a consumer keeps of its budget for shutting down (committing offsets, unregistering)."""

PRODUCE_MODES = {
    "produce": "sync",
    "produce-async": "async",
    "produce-oneway": "oneway",
    "produce-batch": "batch",
    "produce-fifo": "orderly",
}
CONSUME_KINDS = {"consume-push": "push", "consume-pull": "pull", "idle": "push", "shutdown": "push"}
SCRIPTS = {
    "py-rocketmq-0.4.4": "py_rocketmq.py",
    "ali-ons-3.12.0": "ali_ons.js",
    "rocketmq-nodejs-1.1.2": "rocketmq_nodejs.js",
}
OFFERS = {
    "py-rocketmq-0.4.4": {"sync", "async", "oneway", "batch", "orderly", "push", "pull"},
    "ali-ons-3.12.0": {"sync", "async", "push"},
    "rocketmq-nodejs-1.1.2": {"sync", "async", "push"},
}
SIGNS = {"py-rocketmq-0.4.4", "ali-ons-3.12.0"}


def emit(event: str, **fields: object) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def arguments(client: str, scenario: str, env: dict[str, str]) -> list[str] | str:
    """The driver's command line for the scenario, or why the client cannot run it."""
    if env.get("RMQ_PROTOCOL", "remoting") != "remoting":
        return f"{client} speaks remoting only"
    common = ["--namesrv", env["RMQ_NAMESRV"], "--topic", env["RMQ_TOPIC"], "--group", env["RMQ_GROUP"]]
    if env.get("RMQ_ACCESS_KEY"):
        if client not in SIGNS:
            return f"{client} cannot sign requests (ACL 1.0)"
        common += ["--access-key", env["RMQ_ACCESS_KEY"], "--secret-key", env.get("RMQ_SECRET_KEY", "")]
    timeout = float(env.get("RMQ_TIMEOUT_S", "30"))
    if scenario in PRODUCE_MODES:
        mode = PRODUCE_MODES[scenario]
        if mode not in OFFERS[client]:
            return f"{client} has no {mode} send"
        args = (
            [
                "produce",
                *common,
                "--mode",
                mode,
                "--count",
                env.get("RMQ_COUNT", "1"),
                "--send-timeout-ms",
                "3000",
            ]
            if client.startswith("py-")
            else ["produce", *common, "--mode", mode, "--count", env.get("RMQ_COUNT", "1")]
        )
        if float(env.get("RMQ_IDLE_S") or 0) > 0:
            args += ["--stay", env["RMQ_IDLE_S"]]
        for flag, name in (("--tags", "RMQ_TAG"), ("--keys", "RMQ_KEYS"), ("--body-b64", "RMQ_BODY_B64")):
            if env.get(name):
                args += [flag, env[name]]
        return args
    if scenario in CONSUME_KINDS:
        kind = CONSUME_KINDS[scenario]
        if kind not in OFFERS[client]:
            return f"{client} has no {kind} consumer"
        if scenario == "idle":
            expect, idle = "1000000", env.get("RMQ_IDLE_S", "30")
        elif scenario == "shutdown":
            expect, idle = "1000000", "0.1"
        else:
            expect, idle = env.get("RMQ_COUNT", "1"), f"{max(timeout - SHUTDOWN_MARGIN_S, 1):g}"
        return [kind, *common, "--expression", "*", "--expect", expect, "--idle-timeout", idle]
    return f"{client}'s driver does not implement {scenario}"


def command(client: str) -> list[str]:
    script = HERE / SCRIPTS[client]
    if script.suffix == ".js":
        return [os.environ.get("RMQ_NODE", "node"), str(script)]
    return [sys.executable, str(script)]


def translate(line: str) -> None:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        sys.stderr.write(line + "\n")
        return
    if not isinstance(event, dict):
        return
    kind = event.get("event")
    if kind == "sent" and "indexes" in event:
        for index in event["indexes"]:
            emit("sent", index=index, msgId=None, status=event.get("status"))
    elif kind == "sent":
        emit("sent", index=event.get("index"), msgId=event.get("msgId"), status=event.get("status"))
    elif kind == "received":
        emit(
            "received",
            msgId=(event.get("properties") or {}).get("UNIQ_KEY") or event.get("msgId"),
            topic=event.get("topic"),
            body_b64=event.get("body_b64"),
            reconsumeTimes=event.get("reconsumeTimes"),
        )
    elif kind == "error":
        emit("error", stage=event.get("stage"), message=event.get("message"))


def main(argv: list[str]) -> int:
    client, scenario = argv[0], argv[1]
    args = arguments(client, scenario, dict(os.environ))
    if isinstance(args, str):
        emit("unsupported", reason=args)
        return UNSUPPORTED
    process = subprocess.Popen([*command(client), *args], stdout=subprocess.PIPE, text=True)
    emit("ready")
    assert process.stdout is not None
    for line in process.stdout:
        translate(line.strip())
    if process.wait() != 0:
        emit("error", stage="driver", message=f"{SCRIPTS[client]} exited with status {process.returncode}")
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
