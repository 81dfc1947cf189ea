"""Helpers for driving the reference name server and broker over TCP from synchronous tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from rocketmq_spec.codec.command import RemotingCommand, decode
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.store.message_store import MessageStore
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


def started(part: T | None) -> T:
    """An embedded set's broker, name server or store, which is None only before it started: a test that
    reads it has started the set, so a None fails here instead of as an AttributeError further on."""
    assert part is not None, "not started"
    return part


def store_of(broker: Broker | None) -> MessageStore:
    """A started broker's store, which the broker opens as it starts."""
    return started(started(broker).store)


def fields(cmd: RemotingCommand) -> dict[str, str]:
    """The command's extFields, which the test expects it to carry."""
    assert cmd.ext_fields is not None, f"no extFields: {cmd}"
    return cmd.ext_fields


def body(cmd: RemotingCommand) -> bytes:
    """The command's body, which the test expects it to carry."""
    assert cmd.body is not None, f"no body: {cmd}"
    return cmd.body


def config_file(store: Path, name: str) -> Path:
    return store / "config" / name
