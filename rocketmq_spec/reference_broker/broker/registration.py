"""Keeping the name servers told: REGISTER_BROKER at start, every 30 s and after topic changes,
UNREGISTER_BROKER at shutdown.

A name server that is down must not stop the broker or the other registrations: every call is bounded
by a timeout and failures are logged, then retried on the next period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from rocketmq_spec.codec.bodies import encode_register_broker_body
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.client import DEFAULT_TIMEOUT, RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import masked_crc32
from rocketmq_spec.spec.headers import REGISTER_BROKER_REQUEST, UNREGISTER_BROKER_REQUEST

log = logging.getLogger(__name__)

MIN_PERIOD_MS, MAX_PERIOD_MS = 10_000, 60_000
"""Java clamps ``registerNameServerPeriod`` into this range."""


class BrokerRegistrar:
    def __init__(self, config: BrokerConfig, topic_wrapper: Callable[[], dict[str, Any]],
                 registered: Callable[[dict[str, str]], None] = lambda fields: None) -> None:
        self.config = config
        self._topic_wrapper = topic_wrapper
        self._registered = registered
        """Told each REGISTER_BROKER answer's fields (haServerAddr, masterAddr: what a slave follows)."""
        self._clients: dict[str, RemotingClient] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.registrations = 0
        """Successful registrations so far (all name servers count one each)."""

    @property
    def period(self) -> float:
        return min(max(self.config.register_name_server_period, MIN_PERIOD_MS), MAX_PERIOD_MS) / 1000

    def _identity(self) -> dict[str, Any]:
        c = self.config
        return {"brokerName": c.broker_name, "brokerAddr": c.broker_addr,
                "clusterName": c.broker_cluster_name, "brokerId": c.broker_id}

    async def _client(self, addr: str) -> RemotingClient:
        client = self._clients.get(addr)
        if client is None or client.closed:
            client = self._clients[addr] = await RemotingClient.connect(addr, tls=self.config.tls.client_tls)
        return client

    async def register_all(self) -> None:
        data = encode_register_broker_body(
            {"filterServerList": [], "topicConfigSerializeWrapper": self._topic_wrapper()}, compressed=False)
        ha_addr = f"{self.config.broker_ip1}:{self.config.resolved_ha_port}"
        fields = encode_header(REGISTER_BROKER_REQUEST, {
            **self._identity(), "haServerAddr": ha_addr, "compressed": False,
            "bodyCrc32": masked_crc32(data)})
        await asyncio.gather(*(self._call(addr, RequestCode.REGISTER_BROKER, fields, data)
                               for addr in self.config.namesrv_addrs))

    async def unregister_all(self) -> None:
        fields = encode_header(UNREGISTER_BROKER_REQUEST, self._identity())
        await asyncio.gather(*(self._call(addr, RequestCode.UNREGISTER_BROKER, fields, None)
                               for addr in self.config.namesrv_addrs))

    async def _call(self, addr: str, code: int, fields: dict[str, str], body: bytes | None) -> None:
        try:
            client = await self._client(addr)
            response = await client.invoke(client.request(code, fields, body), DEFAULT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            log.warning("name server %s unreachable for request %d: %s", addr, code, exc)
            return
        if response.code != ResponseCode.SUCCESS:
            log.warning("name server %s refused request %d: %s %s", addr, code, response.code,
                        response.remark)
        elif code == RequestCode.REGISTER_BROKER:
            self.registrations += 1
            self._registered(dict(response.ext_fields or {}))

    def topics_changed(self) -> None:
        """Register again soon (Java re-registers right after a topic is created)."""
        self._wake.set()

    async def start(self) -> None:
        await self.register_all()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the inner result when a
            # cancel arrives just after the wake-up, and stop() then waited for ever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.period):
                    await self._wake.wait()
            self._wake.clear()
            await self.register_all()

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
        await self.unregister_all()
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
