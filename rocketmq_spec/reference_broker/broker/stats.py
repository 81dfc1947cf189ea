"""Message counters behind GET_BROKER_RUNTIME_INFO and VIEW_BROKER_STATS_DATA: puts per topic, gets per group.

Java's BrokerStatsManager keeps per-key counters sampled every minute, hour and day; here each key keeps
one bucket per minute for the last day, which answers the same three windows (sum, rate per second and
average per call) with bounded memory. Counting wraps the send and pull handlers from outside, reading
only what the answers already say (the msgIds of a send, the records of a pull body), so the hot paths
themselves stay unchanged.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.fast_store import count_records
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec.codes import ResponseCode

TOPIC_PUT_NUMS = "TOPIC_PUT_NUMS"
GROUP_GET_NUMS = "GROUP_GET_NUMS"
"""``BrokerStatsManager`` item names mqadmin's statsAll asks for (keys: topic, and topic@group)."""
MINUTE, HOUR, DAY = 60, 3600, 86400

Clock = Callable[[], float]


@dataclass
class StatsWindow:
    """Per-minute buckets of one key: (minute, messages, calls), newest last, at most a day of them."""

    buckets: deque[list[int]] = field(default_factory=deque)

    def add(self, minute: int, count: int) -> None:
        """Count into this minute's bucket; a new minute's bucket drops those older than a day (a minute
        already counted was trimmed by its first count, so every send does not trim again)."""
        buckets = self.buckets
        if buckets and buckets[-1][0] == minute:
            last = buckets[-1]
            last[1] += count
            last[2] += 1
            return
        buckets.append([minute, count, 1])
        while buckets[0][0] <= minute - DAY // MINUTE:
            buckets.popleft()

    def snapshot(self, now_minute: int, seconds: int) -> dict[str, float | int]:
        """BrokerStatsItem of the last ``seconds``: sum, tps and avgpt (messages per call)."""
        first = now_minute - seconds // MINUTE
        inside = [b for b in self.buckets if b[0] > first]
        total = sum(b[1] for b in inside)
        calls = sum(b[2] for b in inside)
        return {"avgpt": total / calls if calls else 0.0, "sum": total, "tps": total / seconds}


class BrokerStats:
    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self.boot_ms = int(clock() * 1000)
        self.put_total = 0
        self.get_total = 0
        self.items: dict[str, dict[str, StatsWindow]] = {TOPIC_PUT_NUMS: {}, GROUP_GET_NUMS: {}}
        """Windows by item name, then key: each send counts one put, and a key tuple built per count cost
        more than the second dictionary read."""

    def _count(self, name: str, key: str, count: int) -> None:
        windows = self.items[name]
        window = windows.get(key)
        if window is None:
            window = windows[key] = StatsWindow()
        window.add(int(self.clock()) // MINUTE, count)

    def count_put(self, topic: str, count: int) -> None:
        self.put_total += count
        self._count(TOPIC_PUT_NUMS, topic, count)

    def count_get(self, group: str, topic: str, count: int) -> None:
        self.get_total += count
        self._count(GROUP_GET_NUMS, f"{topic}@{group}", count)

    def stats_data(self, name: str, key: str) -> dict[str, dict[str, float | int]] | None:
        """BrokerStatsData of an item, None when nothing was ever counted under it."""
        window = self.items.get(name, {}).get(key)
        if window is None:
            return None
        minute = int(self.clock()) // MINUTE
        return {"statsDay": window.snapshot(minute, DAY), "statsHour": window.snapshot(minute, HOUR),
                "statsMinute": window.snapshot(minute, MINUTE)}

    def tps(self, name: str, key: str) -> float:
        window = self.items.get(name, {}).get(key)
        return float(window.snapshot(int(self.clock()) // MINUTE, MINUTE)["tps"]) if window else 0.0

    def total_tps(self, name: str) -> float:
        return sum(self.tps(name, key) for key in self.items.get(name, {}))

    def counting_sends(self, handler: Handler) -> Handler:
        """The send handler, counting the messages of each stored send (one msgId per message)."""
        async def counted(request: Request) -> RemotingCommand | None:
            response = await handler(request)
            if response is not None and response.code == ResponseCode.SUCCESS:
                fields = request.command.ext_fields or {}
                msg_ids = (response.ext_fields or {}).get("msgId", "")
                self.count_put(fields.get("b") or fields.get("topic") or "", msg_ids.count(",") + 1)
            return response
        return counted

    def counting_pulls(self, handler: Handler) -> Handler:
        """The pull handler, counting the records of each FOUND answer."""
        async def counted(request: Request) -> RemotingCommand | None:
            response = await handler(request)
            if response is not None and response.code == ResponseCode.SUCCESS and response.body:
                fields = request.command.ext_fields or {}
                self.count_get(fields.get("consumerGroup", ""), fields.get("topic", ""),
                               count_records(response.body))
            return response
        return counted
