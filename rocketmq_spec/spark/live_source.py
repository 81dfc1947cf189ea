"""``format("rocketmq")``: a live broker as a streaming source and as a sink, spoken to over the wire.

Source: a micro-batch is, per queue of the topic, the offsets between the previous batch's end and the
queue's max offset (GET_MAX_OFFSET) at planning time; Spark checkpoints these offsets, tasks pull exactly
that range (PULL_MESSAGE, never committing through the pull), and once Spark has committed a batch the
offsets are committed to the broker for the consumer group (UPDATE_CONSUMER_OFFSET), so broker tooling
sees the query's progress. Spark commits a batch to a source only when it plans the next batch with data,
so a finished run leaves its last batch uncommitted at the broker: :func:`commit_offsets` with the
query's final end offsets closes that gap. The checkpoint stays what a query resumes from. Offsets are
keyed ``brokerName/queueId``.

Options: ``namesrv`` (host:port), ``topic``, ``group``, ``startingOffsets`` (``earliest`` | ``latest`` |
``committed``: the group's stored offset, else earliest), ``maxMessagesPerTrigger``, ``decompress``.

Sink (batch and streaming): each row is sent with SEND_MESSAGE_V2; options ``namesrv``, ``topic`` and
``producerGroup``. Columns read: ``body`` (binary or string, required), ``topic`` (else the option),
``tags``, ``keys`` (space-separated), ``properties`` (a map of user properties), ``queue_id`` (position
in the topic's write queues, broker then queue order, modulo their count; round-robin when absent) and
``uniq_key`` (the message's UNIQ_KEY, its id for clients; a new one when absent); other columns are
ignored. Delivery is at-least-once: a replayed micro-batch is sent again. A job that gives each row a
key of its own (the copy job passes its source message's UNIQ_KEY on) sends a replayed row with the id
it had, so consumers that drop ids they have seen, as RocketMQ consumers are told to, get every message
once (``docs/spark-cluster.md``: delivery).

The source reads every broker of the topic's route: the master of each master-slave set, or its slave
while it has none (:func:`rocketmq_spec.spark.broker_api.serving_address`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from rocketmq_spec.spark import broker_api as api
from rocketmq_spec.spark import worker_heap
from rocketmq_spec.spark.options import choice, flag, positive, required
from rocketmq_spec.spark.tables import (
    ARROW_BATCH_ROWS,
    LIVE_SCHEMA,
    batches,
    body_reader,
    message_row,
    spark_schema,
)
from rocketmq_spec.spark.wire import WireClient

FORMAT = "rocketmq"
STARTING_OFFSETS = ("earliest", "latest", "committed")
DEFAULT_PRODUCER_GROUP = "rmq-spark-producer"
MAX_EMPTY_PULLS = 3
"""Pulls in a row that may come back empty before a task gives up on a range the broker reported as
written: a broker may answer PULL_RETRY_IMMEDIATELY or not-found while its dispatch catches up."""

Offsets = dict[str, int]


@dataclass(frozen=True)
class QueueRange(InputPartition):
    route: api.QueueRoute
    start: int
    end: int


class RocketMQLiveDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return spark_schema(LIVE_SCHEMA)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return LiveStreamReader(self.options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return LiveWriter(self.options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return LiveStreamWriter(self.options)


class LiveStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.namesrv = required(options, "namesrv", FORMAT)
        self.topic = required(options, "topic", FORMAT)
        self.group = required(options, "group", FORMAT)
        self.starting = choice(options, "startingOffsets", STARTING_OFFSETS)
        self.decompress = flag(options, "decompress", default=True)
        limit = options.get("maxMessagesPerTrigger")
        self.max_per_trigger = positive(options, "maxMessagesPerTrigger", 1) if limit else None
        self.target: Offsets | None = None
        """With Trigger.AvailableNow: the max offsets when the query started, never read past."""

    def _routes(self) -> dict[str, api.QueueRoute]:
        with WireClient(self.namesrv) as namesrv:
            return {route.key: route for route in api.topic_route(namesrv, self.topic)}

    def _per_queue(self, ask: Callable[[WireClient, api.QueueRoute], int],
                   routes: Mapping[str, api.QueueRoute]) -> Offsets:
        """``ask`` once per queue, reusing one connection per broker."""
        offsets: Offsets = {}
        for addr, group in itertools.groupby(sorted(routes.values(), key=lambda r: r.broker_addr),
                                             key=lambda r: r.broker_addr):
            with WireClient(addr) as broker:
                offsets.update({route.key: ask(broker, route) for route in group})
        return dict(sorted(offsets.items()))

    def _start_of(self, broker: WireClient, route: api.QueueRoute) -> int:
        if self.starting == "latest":
            return api.max_offset(broker, self.topic, route.queue_id)
        if self.starting == "committed":
            stored = api.committed_offset(broker, self.group, self.topic, route.queue_id)
            if stored is not None:
                return stored
        return api.min_offset(broker, self.topic, route.queue_id)

    def initialOffset(self) -> dict:
        return self._per_queue(self._start_of, self._routes())

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._max_offsets(self._routes())

    def _max_offsets(self, routes: Mapping[str, api.QueueRoute]) -> Offsets:
        return self._per_queue(lambda b, r: api.max_offset(b, self.topic, r.queue_id), routes)

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """The queues' max offsets, trimmed queue by queue to ``limit``; a queue that appeared since the
        query started begins where ``startingOffsets`` says."""
        routes = self._routes()
        latest = self.target if self.target is not None else self._max_offsets(routes)
        fresh = {key: route for key, route in routes.items() if key not in start}
        begin = {**self._per_queue(self._start_of, fresh), **start}
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        end: Offsets = {}
        for key in sorted(set(begin) | set(latest)):
            first = begin.get(key, 0)
            last = max(first, latest.get(key, first))
            if budget is not None:
                last = first + min(last - first, budget)
                budget -= last - first
            end[key] = last
        return end

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        routes = self._routes()
        return [QueueRange(routes[key], start.get(key, 0), stop) for key, stop in sorted(end.items())
                if stop > start.get(key, 0) and key in routes]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, QueueRange)
        worker_heap.settle()
        yield from batches(self._rows(partition), LIVE_SCHEMA, ARROW_BATCH_ROWS)

    def _rows(self, part: QueueRange) -> Iterator[dict[str, Any]]:
        body = body_reader(self.decompress)
        offset, empty = part.start, 0
        with WireClient(part.route.broker_addr) as broker:
            while offset < part.end:
                result = api.pull(broker, self.group, self.topic, part.route.queue_id, offset,
                                  min(api.PULL_BATCH, part.end - offset))
                wanted = [r for r in result.records if offset <= r.queue_offset < part.end]
                empty = 0 if wanted else empty + 1
                if empty > MAX_EMPTY_PULLS:
                    raise RuntimeError(f"{part.route.key} stopped returning messages at offset {offset} "
                                       f"before the batch end {part.end}")
                for record in wanted:
                    yield {**message_row(record, body), "broker": part.route.broker_name}
                offset = max(offset, result.next_begin_offset if result.found else offset)

    def commit(self, end: dict) -> None:
        commit_offsets(self.namesrv, self.topic, self.group, end)


def commit_offsets(namesrv: str, topic: str, group: str, offsets: Mapping[str, int]) -> None:
    """UPDATE_CONSUMER_OFFSET for every queue named in ``offsets`` (``brokerName/queueId`` keys)."""
    with WireClient(namesrv) as ns:
        routes = [route for route in api.topic_route(ns, topic) if route.key in offsets]
    for addr, group_routes in itertools.groupby(sorted(routes, key=lambda r: r.broker_addr),
                                                key=lambda r: r.broker_addr):
        with WireClient(addr) as broker:
            for route in group_routes:
                api.commit_offset(broker, group, topic, route.queue_id, offsets[route.key])


@dataclass(frozen=True)
class SentCount(WriterCommitMessage):
    messages: int


def send_rows(options: Mapping[str, str], rows: Iterator[Row]) -> SentCount:
    """Send every row with SEND_MESSAGE_V2 to the master holding its queue."""
    namesrv = required(options, "namesrv", FORMAT)
    default_topic = options.get("topic")
    producer_group = options.get("producerGroup", DEFAULT_PRODUCER_GROUP)
    routes: dict[str, list[api.QueueRoute]] = {}
    brokers: dict[str, WireClient] = {}
    round_robin = itertools.count()
    sent = 0
    try:
        with WireClient(namesrv) as ns:
            for row in rows:
                fields = row.asDict()
                topic = fields.get("topic") or default_topic
                if not topic:
                    raise ValueError("a row has no topic column and the sink has no topic option")
                if topic not in routes:
                    routes[topic] = api.topic_route(ns, topic, writable=True)
                queue_id = fields.get("queue_id")
                position = queue_id if queue_id is not None else next(round_robin)
                route = routes[topic][position % len(routes[topic])]
                if route.broker_addr not in brokers:
                    brokers[route.broker_addr] = WireClient(route.broker_addr)
                body = fields["body"]
                api.send(brokers[route.broker_addr], route, topic,
                         body.encode() if isinstance(body, str) else bytes(body),
                         producer_group=producer_group, tags=fields.get("tags"), keys=fields.get("keys"),
                         properties=fields.get("properties"), uniq_key=fields.get("uniq_key"))
                sent += 1
    finally:
        for client in brokers.values():
            client.close()
    return SentCount(sent)


class LiveWriter(DataSourceWriter):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = options

    def write(self, iterator: Iterator[Row]) -> WriterCommitMessage:
        return send_rows(self.options, iterator)


class LiveStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = options

    def write(self, iterator: Iterator[Row]) -> WriterCommitMessage:
        return send_rows(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Every message of the batch was acknowledged by the broker in ``write``: nothing is left."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Messages already sent stay sent (at-least-once); Spark replays the batch."""
