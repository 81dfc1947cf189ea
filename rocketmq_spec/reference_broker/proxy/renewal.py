"""Receipt handles the proxy keeps renewing for push consumers (``DefaultReceiptHandleManager``,
RMQ-GRPC-AUTO-RENEW).

A push consumer receives with ``auto_renew``: the proxy pops its messages invisible for 60 s and holds
their handles by client and group. Every 5 s it renews the held messages whose invisibility ends within
10 s (CHANGE_INVISIBLETIME for 1, 3, 5, 10, 30 min, then 1 h each time, for at most 3 h after the
receive; past that it gives the message back with the group's retry delay and stops). An ack, a change
or a forward to the DLQ names the handle the client received; the proxy takes the held entry out and
uses the newest handle it has for the message instead. When the client is no longer registered in the
group (terminated, or its registration expired) the held messages are left invisible for 1 s only, so
another client of the group gets them at once.

The table is keyed like Java's ``ReceiptHandleGroup``: the message id and the broker, queue and queue
offset of the handle the client received.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rocketmq_spec.spec.consumequeue import delay_level_ms
from rocketmq_spec.spec.grpc_rpcs import (
    INVISIBLE_WHEN_CLEAR_MS,
    MAX_RENEW_RETRIES,
    RENEW_AHEAD_MS,
    RENEW_MAX_MS,
    RENEW_PERIOD_MS,
    RENEW_SLICES_MS,
)

HandleKey = tuple[str, str, int, int]
"""Message id, broker name, queue id and queue offset of the handle a client received."""
log = logging.getLogger(__name__)

GroupKey = tuple[str, str]
"""Client id and consumer group."""


def handle_key(message_id: str, handle: str) -> HandleKey | None:
    """The table key of a client's handle; None when the handle does not decode (the RPC itself then
    refuses it)."""
    parts = handle.split(" ")
    try:
        return message_id, parts[5], int(parts[6]), int(parts[7])
    except (IndexError, ValueError):
        return None


def next_visible_ms(handle: str) -> int:
    """``ReceiptHandle.getNextVisibleTime``: retrieve time plus invisible time."""
    parts = handle.split(" ")
    return int(parts[1]) + int(parts[2])


def retry_delay_ms(reconsume_times: int) -> int:
    """``CustomizedRetryPolicy.nextDelayDuration``: the classic delay level ``reconsumeTimes + 3``."""
    return delay_level_ms(max(reconsume_times, 0) + 3)


def renew_slice_ms(renewals: int) -> int:
    """``RenewStrategyPolicy.nextDelayDuration``."""
    return RENEW_SLICES_MS[min(max(renewals, 0), len(RENEW_SLICES_MS) - 1)]


@dataclass
class Held:
    """``MessageReceiptHandle``: one received message the proxy renews."""

    group: str
    topic: str
    message_id: str
    handle: str
    """The newest receipt handle of the message (the received one until the first renewal)."""
    received_ms: int
    reconsume_times: int
    renewals: int = 0
    failures: int = 0
    busy: asyncio.Future[None] | None = field(default=None, repr=False)


Change = Callable[[str, Held, int], Awaitable["str | None"]]
"""Changes a held message's invisible time from now (client id, message, milliseconds): its new handle,
None when the broker refused (the message is not the client's any more); raises on a failure worth a
retry."""
Online = Callable[[str, str], bool]
"""Whether a client (id) is still registered in a consumer group."""


class Renewals:
    def __init__(self, change: Change, online: Online, *, ahead_ms: int = RENEW_AHEAD_MS,
                 period_ms: int = RENEW_PERIOD_MS, max_ms: int = RENEW_MAX_MS) -> None:
        self._change = change
        self._online = online
        self.ahead_ms = ahead_ms
        self.period_ms = period_ms
        self.max_ms = max_ms
        self._held: dict[GroupKey, dict[HandleKey, Held]] = {}

    def __len__(self) -> int:
        return sum(len(group) for group in self._held.values())

    def add(self, client_id: str, held: Held) -> None:
        key = handle_key(held.message_id, held.handle)
        if key is not None:
            self._held.setdefault((client_id, held.group), {})[key] = held

    async def take(self, client_id: str, group: str, message_id: str, handle: str) -> str | None:
        """The newest handle of a held message, which is no longer renewed (``removeReceiptHandle``);
        None when the proxy holds nothing for it."""
        key = handle_key(message_id, handle)
        handles = self._held.get((client_id, group))
        if key is None or handles is None:
            return None
        held = handles.pop(key, None)
        if not handles:
            self._held.pop((client_id, group), None)
        if held is None:
            return None
        if held.busy is not None:  # a renewal under way: its handle is the one to use
            await asyncio.shield(held.busy)
        return held.handle

    async def clear(self, client_id: str, group: str | None = None) -> None:
        """``clearGroup``: a client's held messages (of one group, or all) visible again in 1 s."""
        for key in [k for k in self._held if k[0] == client_id and (group is None or k[1] == group)]:
            for held in self._held.pop(key).values():
                await self._settle(client_id, held, INVISIBLE_WHEN_CLEAR_MS)

    async def clear_all(self) -> None:
        for client_id in {key[0] for key in self._held}:
            await self.clear(client_id)

    async def _settle(self, client_id: str, held: Held, invisible_ms: int) -> None:
        if held.busy is not None:
            await asyncio.shield(held.busy)
        try:
            await self._change(client_id, held, invisible_ms)
        except Exception as exc:  # the message comes back after its current invisible time anyway
            log.debug("clearing message %s of %s failed: %s", held.message_id, client_id, exc)

    async def scan(self, now_ms: int) -> None:
        """``scheduleRenewTask``: clear the groups of clients gone, renew what is due."""
        for key in list(self._held):
            client_id, group = key
            if not self._online(client_id, group):
                await self.clear(client_id, group)
                continue
            for handle_key_, held in list(self._held.get(key, {}).items()):
                if held.busy is None and next_visible_ms(held.handle) - now_ms <= self.ahead_ms:
                    await self._renew(key, handle_key_, held, now_ms)

    def _drop(self, key: GroupKey, handle: HandleKey, held: Held) -> None:
        handles = self._held.get(key)
        if handles is not None and handles.get(handle) is held:
            del handles[handle]
            if not handles:
                del self._held[key]

    async def _renew(self, key: GroupKey, handle: HandleKey, held: Held, now_ms: int) -> None:
        """``startRenewMessage``."""
        if held.failures >= MAX_RENEW_RETRIES:
            self._drop(key, handle, held)
            return
        stop = now_ms - held.received_ms >= self.max_ms
        invisible = retry_delay_ms(held.reconsume_times) if stop else renew_slice_ms(held.renewals)
        held.busy = asyncio.get_running_loop().create_future()
        try:
            renewed = await self._change(key[0], held, invisible)
        except Exception as exc:
            log.debug("renewing message %s failed: %s", held.message_id, exc)
            held.failures += 1
            renewed = ""
        finally:
            busy, held.busy = held.busy, None
            busy.set_result(None)
        if stop or renewed is None:
            self._drop(key, handle, held)
        elif renewed:
            held.handle = renewed
            held.failures = 0
            held.renewals += 1

    async def run(self, now_ms: Callable[[], int]) -> None:
        """Scan every period until cancelled."""
        while True:
            await asyncio.sleep(self.period_ms / 1000)
            try:
                await self.scan(now_ms())
            except Exception:  # one failed scan must not end renewals for good
                log.exception("renewal scan failed")
