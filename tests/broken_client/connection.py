"""The connection layer of the test client: requests, answers, server requests, and the breaks that
concern how a frame is written (language, version, flag, opaque, serialization, signature)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import socket
import struct
import threading
from collections.abc import Callable

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived

BREAKS = frozenset(filter(None, os.environ.get("RMQ_BREAK", "").split(",")))
JAVA_4_9_7 = 407


def broken(flag: str) -> bool:
    return flag in BREAKS


class Closed(Exception):
    """The connection is gone."""


_opaques = itertools.count(1)
_requests_sent = itertools.count()


def _credentials() -> Credentials | None:
    access, secret = os.environ.get("RMQ_ACCESS_KEY"), os.environ.get("RMQ_SECRET_KEY")
    if not access or not secret:
        return None
    return Credentials(access, "wrong" + secret if broken("bad-signature") else secret)


CREDENTIALS = _credentials()


def _mislabel(frame: bytes) -> bytes:
    """The frame with a JSON header that names the other serialization."""
    (header_length,) = struct.unpack_from(">i", frame, 4)
    header = json.loads(frame[8 : 8 + header_length])
    header["serializeTypeCurrentRPC"] = "ROCKETMQ"
    new = json.dumps(header).encode()
    body = frame[8 + header_length :]
    return struct.pack(">ii", 4 + len(new) + len(body), len(new)) + new + body


class Connection:
    def __init__(self, address: str, on_request: Callable[[Connection, RemotingCommand], None]) -> None:
        host, port = address.rsplit(":", 1)
        self.address = address
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.sock.settimeout(None)
        self.closed = False
        self._on_request = on_request
        self._pending: dict[int, queue.Queue[RemotingCommand]] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        if broken("bad-frame"):
            self.sock.sendall(b"\x00\x00\x00\x02\x00\x00")

    def _read(self) -> None:
        decoder = FrameDecoder()
        try:
            while data := self.sock.recv(65536):
                for event in decoder.receive_data(data):
                    if not isinstance(event, FrameReceived):
                        return
                    command = event.command
                    if command.is_response:
                        waiting = self._pending.get(command.opaque)
                        if waiting is not None:
                            waiting.put(command)
                    else:
                        self._on_request(self, command)
        except OSError:
            pass
        finally:
            self.closed = True

    def write(self, *commands: RemotingCommand) -> None:
        """Write the commands in one go (several at once reach the server in one segment)."""
        frames = b""
        for command in commands:
            if CREDENTIALS is not None and not command.is_response:
                sign(command, CREDENTIALS)
            frame = encode(command)
            frames += _mislabel(frame) if broken("serialize-mismatch") else frame
        try:
            with self._lock:
                self.sock.sendall(frames)
        except OSError as exc:
            self.closed = True
            raise Closed(str(exc)) from exc

    def request(
        self,
        code: int,
        fields: dict[str, str],
        body: bytes | None = None,
        *,
        oneway: bool = False,
        timeout: float = 3.0,
        opaque: int | None = None,
    ) -> RemotingCommand | None:
        """Send a request; its answer, or None for oneway. Raises Closed, or TimeoutError without answer."""
        if self.closed:
            raise Closed(self.address)
        number = next(_requests_sent)
        command = RemotingCommand.request(
            code,
            fields,
            body,
            oneway=oneway,
            opaque=opaque if opaque is not None else next(_opaques),
            language="CPP" if broken("bad-language") and number else "JAVA",
            version=0 if broken("zero-version") else JAVA_4_9_7,
        )
        if broken("response-bit") and code == 35:
            command.flag |= 1
        waiting: queue.Queue[RemotingCommand] = queue.Queue()
        if not oneway:
            self._pending[command.opaque] = waiting
        self.write(command)
        if oneway:
            return None
        try:
            return waiting.get(timeout=timeout)
        except queue.Empty:
            if self.closed:
                raise Closed(self.address) from None
            raise TimeoutError(f"no answer to code {code} within {timeout} s") from None
        finally:
            self._pending.pop(command.opaque, None)

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
