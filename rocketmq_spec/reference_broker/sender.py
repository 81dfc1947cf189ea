"""Answers written to their sockets by a second thread, so the broker uses a second core.

The event loop's thread does all of a request's Python work, under the interpreter lock; a fifth of its
time went into the ``send`` system calls that hand each answer to the kernel (on loopback, delivering it to
the peer's socket too). The compiled ``Sender`` (``_sender.c``) takes those calls to a thread of its own
that never holds the lock: the loop copies each frame into its queue and goes on reading the next requests
while the thread sends. Nothing else changes: one queue per process keeps every connection's answers in the
order they were written, and the store, its flush modes and every answer's bytes are the same. The thread
writes each run of queued answers for one connection with one ``sendmsg``: a client shared by many threads
(one Java producer or consumer instance, one connection) keeps many requests in flight, and the answers of
one turn of the loop then reach it as one segment and one read instead of one each, which took a third off
both the broker's and the client's CPU per send with 64 threads on one connection.

A connection writes through the sender only while its transport holds nothing: when a socket does not take
a frame (the peer stops reading), the thread keeps that frame and the ones after it as the connection's
leftover and wakes the loop, which moves them into the transport; from then on the transport's buffer, its
high-water mark and the reading pause behave as without the sender until it is empty again. The sender
writes to a duplicate of the socket's descriptor, closed only once nothing is queued for it, so a descriptor
number reused by a newer connection never gets an older one's bytes.

It is on wherever the extension is built; ``RMQ_ANSWER_THREAD=0`` (or ``RMQ_PURE_PYTHON=1``) writes the
answers from the loop's thread as before. Measured on the shared two-core machine it takes a third off the
loop thread's CPU per send and, through the answers it writes in bursts, half off the producers'; where
the machine is overloaded (twenty runnable tasks per core) each answer's wait for the second thread to be
scheduled can cost more than the core it frees (docs/DESIGN.md, "More than one core").
"""

from __future__ import annotations

import asyncio
import importlib
import os
import socket
from collections.abc import Callable
from types import ModuleType

from rocketmq_spec.codec.hotpath import ENVIRONMENT as PURE_PYTHON

ENVIRONMENT = "RMQ_ANSWER_THREAD"
"""Set to 0 to write answers from the event loop's thread."""


def _load() -> ModuleType | None:
    if os.environ.get(PURE_PYTHON, "") not in ("", "0") or os.environ.get(ENVIRONMENT, "") == "0":
        return None
    try:
        return importlib.import_module("rocketmq_spec.reference_broker._sender")
    except ImportError:
        return None


compiled = _load()


class AnswerSender:
    """The sending thread of one event loop's connections, and the descriptors it writes to."""

    def __init__(self, loop: asyncio.AbstractEventLoop, module: ModuleType) -> None:
        self._loop = loop
        self._sender = module.Sender()
        self._leftover_takers: dict[int, Callable[[bytes], None]] = {}
        self._flush_due = False
        loop.add_reader(self._sender.wake_fd, self._collect)

    @classmethod
    def start(cls, loop: asyncio.AbstractEventLoop) -> AnswerSender | None:
        """A sender for ``loop``, or None where answers are written from the loop's thread."""
        return cls(loop, compiled) if compiled is not None else None

    def attach(self, sock: socket.socket, take_leftover: Callable[[bytes], None]) -> int:
        """The descriptor to submit a connection's frames for; ``take_leftover`` gets what its socket did
        not take, to write through the transport."""
        fd = os.dup(sock.fileno())
        self._leftover_takers[fd] = take_leftover
        return fd

    def submit(self, fd: int, frame: bytes) -> None:
        """Queue ``frame``; the thread is woken once for every frame queued in this turn of the loop."""
        self._sender.submit(fd, frame)
        if not self._flush_due:
            self._flush_due = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        self._sender.flush()

    def drain(self, fd: int) -> bytes:
        """Wait until every frame queued for ``fd`` is sent (microseconds: the thread sends without
        waiting on the socket); what the socket did not take, to be written through the transport."""
        rest: bytes = self._sender.drain(fd)
        return rest

    def detach(self, fd: int) -> bytes:
        """The connection is closing: its last leftover, and its descriptor closed."""
        if self._leftover_takers.pop(fd, None) is None:
            return b""  # the sender is closed and so is the descriptor
        rest = self.drain(fd)
        os.close(fd)
        return rest

    def _collect(self) -> None:
        for fd in self._sender.leftovers():
            take = self._leftover_takers.get(fd)
            rest = self.drain(fd)
            if take is not None and rest:
                take(rest)

    def close(self) -> None:
        """End the thread (after sending what is queued) and close the descriptors still attached."""
        self._loop.remove_reader(self._sender.wake_fd)
        self._sender.close()
        for fd in self._leftover_takers:
            os.close(fd)
        self._leftover_takers.clear()
