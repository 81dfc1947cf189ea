"""SET_MESSAGE_REQUEST_MODE, GET_ALL_MESSAGE_REQUEST_MODE and QUERY_ASSIGNMENT (RMQ-POP-REQUEST-MODE).

A group is switched between pulling and popping per topic (mqadmin ``setConsumeMode``); 5.x clients ask
the broker which queues to consume (``QueryAssignmentProcessor``) and learn the mode with the answer. In
POP mode with no share number, every client pops every queue: the assignment is one queue of id -1.
The table is kept in ``config/messageRequestMode.json`` as Java keeps it.
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.clients import ClientManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.pop import (
    GET_ALL_MESSAGE_REQUEST_MODE_BODY,
    QUERY_ASSIGNMENT_REQUEST_BODY,
    QUERY_ASSIGNMENT_RESPONSE_BODY,
    SET_MESSAGE_REQUEST_MODE_BODY,
    MessageRequestMode,
)
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

MODES_FILE = "messageRequestMode.json"


class RequestModeHandlers:
    def __init__(self, broker_name: str, topics: TopicConfigManager, clients: ClientManager,
                 files: ConfigFiles) -> None:
        self.broker_name = broker_name
        self.topics = topics
        self.clients = clients
        self._files = files
        stored = files.load(MODES_FILE) or {}
        self.modes: dict[str, dict[str, dict[str, Any]]] = stored.get("messageRequestModeMap", {})

    def table(self) -> dict[RequestCode, Handler]:
        return {RequestCode.SET_MESSAGE_REQUEST_MODE: self.set_mode,
                RequestCode.GET_ALL_MESSAGE_REQUEST_MODE: self.all_modes,
                RequestCode.QUERY_ASSIGNMENT: self.query_assignment}

    def mode_of(self, topic: str, group: str) -> dict[str, Any] | None:
        return self.modes.get(topic, {}).get(group)

    async def set_mode(self, request: Request) -> RemotingCommand:
        body = request.body(SET_MESSAGE_REQUEST_MODE_BODY)
        if body["topic"].startswith(RETRY_PREFIX):
            return request.reply(1, "retry topic is not allowed to set mode")
        self.modes.setdefault(body["topic"], {})[body["consumerGroup"]] = body
        self._files.save(MODES_FILE, {"messageRequestModeMap": self.modes})
        return request.reply()

    async def all_modes(self, request: Request) -> RemotingCommand:
        return request.reply(body=encode_body(GET_ALL_MESSAGE_REQUEST_MODE_BODY,
                                              {"messageRequestModeMap": self.modes}))

    async def query_assignment(self, request: Request) -> RemotingCommand:
        body = request.body(QUERY_ASSIGNMENT_REQUEST_BODY)
        topic_name, group = body["topic"], body["consumerGroup"]
        mode = self.mode_of(topic_name, group) or {"mode": MessageRequestMode.PULL, "popShareQueueNum": 0}
        topic = self.topics.get(topic_name)
        if topic_name.startswith(RETRY_PREFIX):
            mode = {"mode": MessageRequestMode.PULL, "popShareQueueNum": 0}
        queues = [] if topic is None else list(range(topic.read_queue_nums))
        if body.get("messageModel") != "BROADCASTING" and queues:
            queues = self._allocate(group, body["clientId"], queues, mode)
        assignments = [{"messageQueue": {"brokerName": self.broker_name, "queueId": q, "topic": topic_name},
                        "mode": mode["mode"]} for q in queues]
        return request.reply(body=encode_body(QUERY_ASSIGNMENT_RESPONSE_BODY,
                                              {"messageQueueAssignments": assignments}))

    def _allocate(self, group: str, client_id: str, queues: list[int], mode: dict[str, Any]) -> list[int]:
        """AllocateMessageQueueAveragely among the group's clients; ``allocate4Pop`` with no share number
        (or as many as there are clients) gives every client every queue as queue -1."""
        consumers = self.clients.consumer_group(group)
        clients = sorted(consumers.client_ids()) if consumers is not None else []
        if client_id not in clients:
            clients = sorted([*clients, client_id])
        share = int(mode.get("popShareQueueNum") or 0)
        if mode["mode"] == MessageRequestMode.POP and (share <= 0 or share >= len(clients) - 1):
            return [-1]
        index, count = clients.index(client_id), len(clients)
        per, rest = divmod(len(queues), count)
        size = per + (1 if index < rest else 0)
        start = index * per + min(index, rest)
        return queues[start:start + size]
