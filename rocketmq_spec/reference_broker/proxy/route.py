"""QueryRoute and QueryAssignment (``RouteActivity``): the name server's route with the proxy as endpoint.

A route lists, for every broker of the topic and each of its replicas, one MessageQueue per queue; the
brokers' endpoints are their hosts with the proxy's gRPC port, since the SDKs reach every broker through
a proxy (RMQ-GRPC-ROUTE). Queues are split into read-only, write-only and read-write ones by the queue
data's counts and permission, and carry the topic's accepted message types.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.reference_broker.proxy import validation
from rocketmq_spec.reference_broker.proxy.call import OK_STATUS, CallContext, status
from rocketmq_spec.reference_broker.proxy.local import LocalBroker
from rocketmq_spec.reference_broker.proxy.messages import TOPIC_MESSAGE_TYPES
from rocketmq_spec.reference_broker.proxy.settings import group_consumes_orderly
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.ha import MASTER_ID
from rocketmq_spec.spec.sysflag import PermName


def _scheme(host: str) -> v2.AddressScheme:
    try:
        return v2.IPv4 if ipaddress.ip_address(host).version == 4 else v2.IPv6
    except ValueError:
        return v2.DOMAIN_NAME


def _permission(perm: int) -> v2.Permission:
    readable, writable = bool(perm & PermName.READ), bool(perm & PermName.WRITE)
    if readable and writable:
        return v2.READ_WRITE
    return v2.READ if readable else v2.WRITE if writable else v2.NONE


class Routes:
    def __init__(self, broker: LocalBroker, port: int) -> None:
        self._broker = broker
        self.port = port
        """The proxy's gRPC port, named in every broker's endpoints."""

    def _brokers(self, route: dict[str, Any]) -> dict[str, dict[int, v2.Broker]]:
        """brokerName → brokerId → Broker with the proxy's endpoints (``buildBrokerMap``)."""
        brokers: dict[str, dict[int, v2.Broker]] = {}
        for data in route.get("brokerDatas") or ():
            replicas = brokers.setdefault(data["brokerName"], {})
            for broker_id, addr in (data.get("brokerAddrs") or {}).items():
                host = str(addr).rsplit(":", 1)[0].strip("[]")
                endpoints = v2.Endpoints(scheme=_scheme(host),
                                         addresses=[v2.Address(host=host, port=self.port)])
                replicas[int(broker_id)] = v2.Broker(name=data["brokerName"], id=int(broker_id),
                                                     endpoints=endpoints)
        return brokers

    def _accepted_types(self, topic: str) -> tuple[v2.MessageType, ...]:
        config = self._broker.topic(topic)
        if config is None:
            return (v2.MESSAGE_TYPE_UNSPECIFIED,)
        return TOPIC_MESSAGE_TYPES.get(config.message_type, (v2.MESSAGE_TYPE_UNSPECIFIED,))

    async def query_route(self, ctx: CallContext, request: rpc.QueryRouteRequest) -> rpc.QueryRouteResponse:
        validation.topic(request.topic.name, self._broker.is_system_topic)
        route = await self._broker.route(request.topic.name)
        brokers = self._brokers(route)
        accepted = self._accepted_types(request.topic.name)
        queues: list[v2.MessageQueue] = []
        for data in route.get("queueDatas") or ():
            replicas = brokers.get(data["brokerName"])
            if replicas is None:
                break  # as RouteActivity does: the queue data of a broker without broker data ends the list
            for broker in replicas.values():
                queues += _queues(data, request.topic, accepted, broker)
        return rpc.QueryRouteResponse(status=OK_STATUS, message_queues=queues)

    async def query_assignment(self, ctx: CallContext,
                               request: rpc.QueryAssignmentRequest) -> rpc.QueryAssignmentResponse:
        validation.topic(request.topic.name, self._broker.is_system_topic)
        validation.group(request.group.name)
        route = await self._broker.route(request.topic.name)
        group = self._broker.group(request.group.name)
        fifo = group is not None and group_consumes_orderly(group)
        brokers = self._brokers(route)
        assignments: list[v2.Assignment] = []
        for data in route.get("queueDatas") or ():
            master = brokers.get(data["brokerName"], {}).get(MASTER_ID)
            if not data["perm"] & PermName.READ or data["readQueueNums"] <= 0 or master is None:
                continue
            permission = _permission(data["perm"])
            ids = range(data["readQueueNums"]) if fifo else (-1,)
            assignments += [v2.Assignment(message_queue=v2.MessageQueue(
                topic=request.topic, id=queue_id, permission=permission, broker=master)) for queue_id in ids]
        if not assignments:
            return rpc.QueryAssignmentResponse(status=status(Code.FORBIDDEN, "no readable queue"))
        return rpc.QueryAssignmentResponse(status=OK_STATUS, assignments=assignments)


def _queues(data: dict[str, Any], topic: v2.Resource, accepted: tuple[v2.MessageType, ...],
            broker: v2.Broker) -> list[v2.MessageQueue]:
    """``genMessageQueueFromQueueData``: read-only queues first, then write-only, then read-write."""
    perm, reads, writes = data["perm"], data["readQueueNums"], data["writeQueueNums"]
    readable, writable = bool(perm & PermName.READ), bool(perm & PermName.WRITE)
    read_only = write_only = read_write = none = 0
    if readable and writable:
        read_write = min(reads, writes)
        read_only, write_only = reads - read_write, writes - read_write
    elif writable:
        write_only = writes
    elif readable:
        read_only = reads
    else:
        none = max(1, reads, writes)
    kinds = [v2.READ] * read_only + [v2.WRITE] * write_only + [v2.READ_WRITE] * read_write + [v2.NONE] * none
    return [v2.MessageQueue(topic=topic, id=queue_id, permission=permission, broker=broker,
                            accept_message_types=accepted) for queue_id, permission in enumerate(kinds)]
