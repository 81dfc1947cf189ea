"""Helpers for driving the reference name server and broker over TCP from synchronous tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from rocketmq_spec.codec.command import RemotingCommand, decode
from rocketmq_spec.spec.golden import JAVA_FRAMES

T = TypeVar("T")

TEST_TIMEOUT = 20.0
"""Bound on any single test's event loop work, so a hang fails instead of blocking the run."""


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, TEST_TIMEOUT)

    return asyncio.run(bounded())


def golden_frame(session: str, seq: int) -> bytes:
    return (JAVA_FRAMES / session / f"{seq:06d}.bin").read_bytes()


def golden_command(session: str, seq: int) -> RemotingCommand:
    return decode(golden_frame(session, seq))


def host_port(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)


def config_file(store: Path, name: str) -> Path:
    return store / "config" / name
