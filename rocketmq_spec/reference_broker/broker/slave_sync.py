"""A slave's periodic copy of its master's metadata (``SlaveSynchronize``, RMQ-HA-SLAVE-SYNC).

Every ``slaveSyncInterval`` (10 s in Java, after a 3 s start delay) the slave asks the master named by
the last REGISTER_BROKER answer (``masterAddr``) for its topics, consumer offsets, delay offsets and
subscription groups. Topics and groups are replaced only when the master's data version differs;
offsets are merged over the slave's own, as Java's ``putAll`` does. A master that cannot be reached is
logged and tried again next period.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from rocketmq_spec.codec.fastjson import loads
from rocketmq_spec.codec.store.configs import consumer_offsets_from_json, delay_offsets_from_json
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.client import DEFAULT_TIMEOUT, RemotingClient
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import RocketMQSpecError

log = logging.getLogger(__name__)

START_DELAY = 3.0


class SlaveSynchronizer:
    def __init__(self, own_addr: str, interval: float, topics: TopicConfigManager,
                 offsets: ConsumerOffsetManager, groups: SubscriptionGroupManager,
                 save_delay_offsets: Callable[[dict[int, int]], None], *, tls: bool = False) -> None:
        """``tls``: reach the master over TLS (``tls.enable``, or the enforcing mode's default)."""
        self.own_addr = own_addr
        self._tls = tls
        self.interval = interval
        self.topics = topics
        self.offsets = offsets
        self.groups = groups
        self._save_delay_offsets = save_delay_offsets
        self.master_addr: str | None = None
        self.syncs = 0
        """Completed rounds (every table copied), for callers that wait for the first one."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])

    async def _run(self) -> None:
        await asyncio.sleep(min(START_DELAY, self.interval))
        while True:
            await self.sync_all()
            await asyncio.sleep(self.interval)

    async def sync_all(self) -> bool:
        master = self.master_addr
        if master is None or master == self.own_addr:
            return False
        try:
            client = await RemotingClient.connect(master, tls=self._tls)
        except (OSError, TimeoutError) as exc:
            log.warning("slave sync: master %s unreachable: %s", master, exc)
            return False
        try:
            self.topics.replace_all(await self._fetch(client, RequestCode.GET_ALL_TOPIC_CONFIG))
            self.offsets.table.update(consumer_offsets_from_json(
                await self._fetch(client, RequestCode.GET_ALL_CONSUMER_OFFSET)))
            self.offsets.persist()
            self._save_delay_offsets(delay_offsets_from_json(
                await self._fetch(client, RequestCode.GET_ALL_DELAY_OFFSET)))
            self.groups.replace_all(await self._fetch(client, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
        except (OSError, TimeoutError, RocketMQSpecError, LookupError) as exc:
            log.warning("slave sync from %s failed: %s", master, exc)
            return False
        finally:
            await client.close()
        self.syncs += 1
        return True

    @staticmethod
    async def _fetch(client: RemotingClient, code: RequestCode) -> Any:
        response = await client.invoke(client.request(code), DEFAULT_TIMEOUT)
        if response.code != ResponseCode.SUCCESS:
            raise LookupError(f"master answered {code.name} with {response.code}: {response.remark}")
        return loads(response.body or b"{}")
