"""What a master hands its slaves besides the log: consumer offsets, delay offsets, subscription groups.

``AdminBrokerProcessor`` answers GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET and
GET_ALL_SUBSCRIPTIONGROUP_CONFIG with the compact JSON of the table it keeps (the same content as the
config file, without pretty printing); a slave's :mod:`~reference_broker.broker.slave_sync` reads them
(RMQ-HA-SLAVE-SYNC). GET_ALL_TOPIC_CONFIG is served with the topic handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.fastjson import dumps
from rocketmq_spec.codec.store.configs import consumer_offsets_to_json, delay_offsets_to_json
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec.codes import RequestCode


class MetadataHandlers:
    def __init__(self, offsets: ConsumerOffsetManager, groups: SubscriptionGroupManager,
                 delay_offsets: Callable[[], dict[int, int]]) -> None:
        self.offsets = offsets
        self.groups = groups
        self._delay_offsets = delay_offsets

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.GET_ALL_CONSUMER_OFFSET: self._answer(
                lambda: consumer_offsets_to_json(self.offsets.table)),
            RequestCode.GET_ALL_DELAY_OFFSET: self._answer(
                lambda: delay_offsets_to_json(dict(sorted(self._delay_offsets().items())))),
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: self._answer(self.groups.wrapper_json),
        }

    @staticmethod
    def _answer(content: Callable[[], Any]) -> Handler:
        async def handle(request: Request) -> RemotingCommand:
            return request.reply(body=dumps(content()).encode())
        return handle
