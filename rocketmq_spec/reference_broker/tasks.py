"""Stopping background tasks so that the stopper's own cancellation is never lost.

The usual ``task.cancel(); with suppress(CancelledError): await task`` also swallows a cancellation
aimed at the *stopper* (a caller's timeout, a shutdown), which then goes on as if nothing happened.
Waiting with ``asyncio.wait`` lets the stopper's cancellation propagate and keeps the task's own
cancellation out of the way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any


async def cancel_and_wait(tasks: Collection[asyncio.Future[Any]]) -> None:
    """Cancel every task and wait until all have ended; re-raises the first real error among them."""
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            task.result()
