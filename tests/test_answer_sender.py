"""The answer sender writes every frame of a connection once and in order, whatever its socket takes.

Frames go to one end of a socket pair through ``AnswerSender``; the other end must read exactly their
concatenation: what the socket took at once, followed by the leftover the sender hands back (by ``drain``
or through the wake-up pipe) when the socket's buffer is full.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketmq_spec.reference_broker.sender import AnswerSender


def _module() -> ModuleType:
    try:
        return importlib.import_module("rocketmq_spec.reference_broker._sender")
    except ImportError:
        pytest.skip("the answer sender extension is not built")


def _read_all(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


async def _through_sender(frames: list[bytes], wait_for_leftover: bool) -> tuple[bytes, bytes]:
    """(what the reading end got, the leftover handed back) for ``frames`` sent through a sender."""
    module = _module()
    writer, reader = socket.socketpair()
    writer.setblocking(False)
    reader.setblocking(False)
    loop = asyncio.get_running_loop()
    sender = AnswerSender(loop, module)
    handed: list[bytes] = []
    arrived = asyncio.Event()

    def take(rest: bytes) -> None:
        handed.append(rest)
        arrived.set()

    try:
        fd = sender.attach(writer, take)
        for frame in frames:
            sender.submit(fd, frame)
        if wait_for_leftover:
            await asyncio.wait_for(arrived.wait(), 30)
        handed.append(sender.detach(fd))
        return _read_all(reader), b"".join(handed)
    finally:
        sender.close()
        writer.close()
        reader.close()


@settings(max_examples=20)
@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=50))
def test_small_frames_arrive_whole_and_in_order(frames: list[bytes]) -> None:
    received, leftover = asyncio.run(_through_sender(frames, wait_for_leftover=False))
    assert received + leftover == b"".join(frames)


def test_more_frames_than_one_write_takes_arrive_in_order() -> None:
    """A turn's frames for one connection go out in runs of at most 64 per write; 300 need five."""
    frames = [n.to_bytes(2, "big") * (1 + n % 7) for n in range(300)]
    received, leftover = asyncio.run(_through_sender(frames, wait_for_leftover=False))
    assert received + leftover == b"".join(frames)


@settings(max_examples=20)
@given(st.lists(st.tuples(st.integers(0, 2), st.binary(min_size=1, max_size=200)), min_size=1, max_size=120))
def test_interleaved_connections_each_get_theirs_in_order(frames: list[tuple[int, bytes]]) -> None:
    """Frames for three connections submitted in any interleaving: each reading end gets its own frames,
    in the order they were submitted, and nothing of the others'."""
    async def three_connections() -> list[bytes]:
        sender = AnswerSender(asyncio.get_running_loop(), _module())
        pairs = [socket.socketpair() for _ in range(3)]
        try:
            fds = []
            for writer, reader in pairs:
                writer.setblocking(False)
                reader.setblocking(False)
                fds.append(sender.attach(writer, lambda rest: None))
            for which, frame in frames:
                sender.submit(fds[which], frame)
            leftovers = [sender.detach(fd) for fd in fds]
            return [_read_all(reader) + rest for (_, reader), rest in zip(pairs, leftovers, strict=True)]
        finally:
            sender.close()
            for writer, reader in pairs:
                writer.close()
                reader.close()

    got = asyncio.run(three_connections())
    assert got == [b"".join(frame for which, frame in frames if which == n) for n in range(3)]


def test_what_a_full_socket_does_not_take_is_handed_back_in_order() -> None:
    frames = [bytes([n % 251]) * 65_536 for n in range(200)]  # far more than a socket pair buffers
    received, leftover = asyncio.run(_through_sender(frames, wait_for_leftover=True))
    assert leftover
    assert received + leftover == b"".join(frames)


def test_a_frame_for_a_closed_peer_is_dropped() -> None:
    async def closed_peer() -> bytes:
        sender = AnswerSender(asyncio.get_running_loop(), _module())
        writer, reader = socket.socketpair()
        reader.close()
        try:
            fd = sender.attach(writer, lambda rest: None)
            sender.submit(fd, b"answer")
            return sender.detach(fd)
        finally:
            sender.close()
            writer.close()

    assert asyncio.run(closed_peer()) == b""
