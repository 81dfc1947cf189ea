"""Fault injection for the copy job: a ``rocketmq`` sink that crashes once after a batch is sent.

Test-only: the tests that use it register it on their session; nothing in the product does.

The crash comes from the driver-side commit of a micro-batch, after every message of the batch was
acknowledged by the broker but before Spark records the batch as done, which is the one window where
at-least-once delivery must duplicate: the restarted query replays the whole batch. Because the window is
exact, so is the expected number of duplicates (the size of that batch).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from rocketmq_spec.spark.live_source import LiveStreamWriter, RocketMQLiveDataSource, SentCount
from rocketmq_spec.spark.options import required

FORMAT = "rocketmq-crash-once"


class InjectedCrash(RuntimeError):
    """The deliberate failure; its message names the batch so tests can find it in Spark's error."""


class CrashOnceDataSource(RocketMQLiveDataSource):
    """The ``rocketmq`` sink, crashing at the commit of batch ``crashBatch`` unless ``crashMarker`` (a
    file path) exists; it creates the marker as it crashes, so the restarted query runs through."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return CrashOnceWriter(self.options)


class CrashOnceWriter(LiveStreamWriter):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.marker = Path(required(options, "crashMarker", FORMAT))
        self.batch = int(required(options, "crashBatch", FORMAT))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if batchId == self.batch and not self.marker.exists():
            sent = sum(m.messages for m in messages if isinstance(m, SentCount))
            self.marker.write_text(str(sent))
            raise InjectedCrash(f"injected crash after batch {batchId} sent {sent} messages")
