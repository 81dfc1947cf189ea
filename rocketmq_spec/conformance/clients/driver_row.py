"""One row of the driver table: what ``rmq-conformance client --driver NAME`` needs to run a named driver.

A row of its own module so that each family of shipped drivers (the Python and Node clients of
:mod:`rocketmq_spec.conformance.clients.registry`, the Java clients and 5.x SDKs of
:mod:`rocketmq_spec.conformance.clients.drivers_java`) declares its rows beside its installer, and the
registry only gathers them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class DriverRow:
    name: str
    protocol: str
    """``remoting`` or ``grpc``: what the judging server must speak."""
    install: Callable[[], str | None]
    """Make the driver runnable here; None when it is, else why not."""
    argv: Callable[[], list[str]]
    """The command line, without the scenario."""
    environment: Callable[[], dict[str, str]]
    """Variables the driver needs besides the contract's (where its client was installed)."""
    description: str
