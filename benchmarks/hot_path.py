"""The broker's per-request work alone: frames fed to its connections in process, no sockets, no client.

A broker is started in this process and 16 of its connections get a transport that only counts what is
written to them. Each round feeds every connection one request frame, as Java's client writes it, and runs
the event loop until every answer is out; the CPU of this thread over the measured rounds, per request, is
what one send (128-byte body, TAGS, WAIT and a UNIQ_KEY, so one index key) or one pull (32 messages) costs
the broker's loop, without the kernel's socket work or a client sharing the cores.

``python -m benchmarks.hot_path [--pulls] [--requests N] [--callgrind]``; ``--callgrind`` switches
valgrind's instrumentation on for the measured rounds only, so that

    valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
        python -m benchmarks.hot_path --callgrind

counts the instructions of the measured requests (thread 1's total over N), a figure the machine's load
does not move. ``RMQ_PURE_PYTHON=1`` measures the pure-Python twins (``rocketmq_spec.codec.hotpath``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import Result
from rocketmq_spec.codec import hotpath
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.reference_broker.client_requests import pull_fields, send_fields
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.server import Connection
from rocketmq_spec.reference_broker.small_store import small_config
from rocketmq_spec.spec.codes import RequestCode

CONNECTIONS = 16
QUEUES = 4
TOPIC = "HotPathTopic"
BODY = b"x" * 128
PULL_BATCH = 32
WARM_ROUNDS = 20
STORE = {"mapped_file_size_commit_log": 1 << 30, "mapped_file_size_consume_queue": 6_000_000,
         "max_hash_slot_num": 5_000_000, "max_index_num": 20_000_000}
"""Files large enough that no measured request rolls one."""


class CountingTransport:
    """What a connection writes to, counted and dropped; closing it ends the connection at once."""

    def __init__(self, connection: Connection, port: int) -> None:
        self.connection = connection
        self.port = port
        self.writes = 0
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """An address for ``peername`` and ``sockname``; no ``socket``, so no answer-sending thread attaches
        and every answer comes here: the figure stays the loop thread's work on a request, no kernel's."""
        return ("127.0.0.1", self.port) if name in ("peername", "sockname") else default

    def write(self, data: bytes) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.connection.connection_lost(None)

    def abort(self) -> None:
        self.close()

    def pause_reading(self) -> None:
        """Never paused: nothing is read from it."""

    def resume_reading(self) -> None:
        """Never paused: nothing is read from it."""


def _send(connection: int, opaque: int) -> bytes:
    properties = {"UNIQ_KEY": f"7F00000100002A9F{opaque:012X}{connection:04X}", "WAIT": "true",
                  "TAGS": "bench"}
    return encode(RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, send_fields(
        TOPIC, properties, queue_id=connection % QUEUES), BODY, opaque=opaque))


def _pull(connection: int, opaque: int, per_queue: int) -> bytes:
    offset = PULL_BATCH * opaque % max(per_queue - PULL_BATCH, 1)
    return encode(RemotingCommand.request(RequestCode.PULL_MESSAGE, pull_fields(
        TOPIC, connection % QUEUES, offset, max_nums=PULL_BATCH), opaque=opaque))


async def _rounds(connections: list[tuple[Connection, CountingTransport]], frames: list[list[bytes]]) -> None:
    for round_frames in frames:
        wanted = [transport.writes + 1 for _, transport in connections]
        for (connection, _), frame in zip(connections, round_frames, strict=True):
            connection.data_received(frame)
        while any(transport.writes < want for (_, transport), want in zip(connections, wanted, strict=True)):
            await asyncio.sleep(0)


def _callgrind(switch: str) -> None:
    subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())], capture_output=True, check=False)


async def measure(requests: int, pulls: bool, callgrind: bool = False) -> float:
    """Loop-thread CPU µs per request over ``requests`` sends (or pulls, after that many sends)."""
    rounds = max(requests // CONNECTIONS, 1)
    with tempfile.TemporaryDirectory(prefix="rmq-hot-path-") as store:
        async with EmbeddedRocketMQ(store, broker_config=small_config(Path(store), **STORE)) as mq:
            assert mq.broker is not None
            connections = []
            for number in range(CONNECTIONS):
                connection = mq.broker.server._accepted()
                transport = CountingTransport(connection, 40000 + number)
                connection.connection_made(transport)  # type: ignore[arg-type]
                connections.append((connection, transport))
            sends = [[_send(n, r) for n in range(CONNECTIONS)] for r in range(1, WARM_ROUNDS + rounds + 1)]
            await _rounds(connections, sends[:WARM_ROUNDS])
            measured = sends[WARM_ROUNDS:]
            if pulls:
                await _rounds(connections, measured)
                per_queue = (WARM_ROUNDS + rounds) * CONNECTIONS // QUEUES
                measured = [[_pull(n, r, per_queue) for n in range(CONNECTIONS)] for r in range(rounds)]
                await _rounds(connections, measured[:WARM_ROUNDS])
            if callgrind:
                _callgrind("on")
            start = time.thread_time()
            await _rounds(connections, measured)
            spent = time.thread_time() - start
            if callgrind:
                _callgrind("off")
    return spent / (rounds * CONNECTIONS) * 1e6


def run(quick: bool = False) -> list[Result]:
    requests = 1600 if quick else 6400
    results = []
    for pulls, name in ((False, "send 128 B (TAGS, WAIT, UNIQ_KEY)"), (True, f"pull {PULL_BATCH} x 128 B")):
        us = event_loop.run(measure(requests, pulls), None)
        results.append(Result("hot path", f"{name}, {hotpath.implementation()}", 1e6 / us, None, "",
                              f"{us:.1f} us of loop-thread CPU per request, in process, no sockets"))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--pulls", action="store_true", help="measure pulls of 32 (after as many sends)")
    parser.add_argument("--requests", type=int, default=1600, help="measured requests (default 1600)")
    parser.add_argument("--callgrind", action="store_true", help="instrument the measured rounds only")
    args = parser.parse_args(argv)
    if args.requests < CONNECTIONS:
        parser.error(f"--requests must be at least {CONNECTIONS}")
    us = event_loop.run(measure(args.requests, args.pulls, args.callgrind), None)
    kind = "pull" if args.pulls else "send"
    print(f"{hotpath.implementation()}: {us:.1f} us of loop-thread CPU per {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
