"""A deliberately broken name server + broker for testing the live fuzzer's oracles.

It answers every well-formed request (so the fuzzer's control probes succeed) and misbehaves on demand:
on a malformed complete frame it closes at once (as Java and the reference broker do), later, or never;
it can close connections idle for a while (an idle timeout), stop answering probes for a while or for
good, and keep memory for every connection it accepts (a leak). Run as a module it serves in its own
process, so that the fuzzer can read its memory from ``/proc`` (``python -m tests.fuzz_fake_target
--leak-mb 8``; extra arguments only show in its command line, as a JVM's heap options do).
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from rocketmq_spec.codec.command import encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.spec.codes import ResponseCode

NEVER = float("inf")


@dataclass
class Behaviour:
    close_after: float = 0.0
    """Seconds until a connection with a malformed complete frame is closed (NEVER: left open)."""
    idle_timeout: float = NEVER
    """Seconds of silence after which a connection is closed."""
    unanswered: float = 0
    """How many of the next requests get no answer (a stall: the fuzzer's probe times out and a later one
    is answered; NEVER: a hang). Counted in requests, not seconds, so a slow machine sees the same stall."""
    leak_bytes: int = 0
    """Memory kept, touched, for every accepted connection."""
    leaked: list[bytearray] = field(default_factory=list)


class FakeTarget:
    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self._listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    @property
    def namesrv(self) -> str:
        return f"127.0.0.1:{self._listeners[0].getsockname()[1]}"

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{self._listeners[1].getsockname()[1]}"

    def __enter__(self) -> FakeTarget:
        for listener in self._listeners:
            listener.settimeout(0.2)
            threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        for listener in self._listeners:
            listener.close()

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self.behaviour.leak_bytes:
                self.behaviour.leaked.append(bytearray(b"\x01" * self.behaviour.leak_bytes))
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        decoder = FrameDecoder()
        conn.settimeout(0.1)
        last_data = time.monotonic()
        with conn:
            while not self._stopped.is_set():
                if time.monotonic() - last_data > self.behaviour.idle_timeout:
                    return
                try:
                    chunk = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                last_data = time.monotonic()
                for event in decoder.receive_data(chunk):
                    if isinstance(event, FrameRejected):
                        self._hold(conn)
                        return
                    if isinstance(event, FrameReceived) and not event.command.is_response:
                        self._answer(conn, event)

    def _answer(self, conn: socket.socket, request: FrameReceived) -> None:
        with self._lock:
            mute = self.behaviour.unanswered > 0
            self.behaviour.unanswered -= mute
        if not mute:
            conn.sendall(encode(request.command.response(ResponseCode.SUCCESS)))

    def _hold(self, conn: socket.socket) -> None:
        """Keep a connection that sent a malformed frame open for ``close_after`` seconds, or until its
        idle timeout (no more data is read from it)."""
        deadline = time.monotonic() + min(self.behaviour.close_after, self.behaviour.idle_timeout)
        while not self._stopped.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--leak-mb", type=int, default=0)
    args, _ = parser.parse_known_args()
    with FakeTarget(Behaviour(leak_bytes=args.leak_mb << 20)) as target:
        print(target.namesrv, target.broker, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
