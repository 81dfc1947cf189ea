"""Which asyncio event loop the broker runs on: uvloop where it is installed, asyncio's own otherwise.

Most of a send's CPU outside the codec is the event loop's (reading sockets, scheduling callbacks,
writing answers); uvloop does that work in C on libuv and roughly halves it. It is a dependency on the
platforms it supports; elsewhere, or with ``RMQ_EVENT_LOOP=asyncio``, the broker runs on asyncio's
default loop with the same behaviour, only slower.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

CHOICES = ("auto", "uvloop", "asyncio")
ENVIRONMENT = "RMQ_EVENT_LOOP"


class EventLoopUnavailable(RuntimeError):
    """``uvloop`` was asked for by name and cannot be imported."""


def loop_factory(choice: str | None = None) -> Callable[[], asyncio.AbstractEventLoop]:
    """The factory for ``choice`` (``auto``, ``uvloop`` or ``asyncio``; default ``$RMQ_EVENT_LOOP`` or
    ``auto``). ``auto`` takes uvloop when it imports and asyncio's loop when it does not."""
    choice = (choice or os.environ.get(ENVIRONMENT) or "auto").lower()
    if choice not in CHOICES:
        raise ValueError(f"event loop must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "asyncio":
        return asyncio.new_event_loop
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError as exc:
        if choice == "uvloop":
            raise EventLoopUnavailable(f"event loop 'uvloop' asked for but not installed: {exc}") from exc
        return asyncio.new_event_loop
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def new_event_loop(choice: str | None = None) -> asyncio.AbstractEventLoop:
    return loop_factory(choice)()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``, for reports that say what a figure was measured on."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def run(coroutine: Coroutine[Any, Any, T], choice: str | None = None) -> T:
    """``asyncio.run`` on the chosen loop."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(coroutine)
