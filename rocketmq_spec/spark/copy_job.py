"""The end-to-end streaming job: copy a topic to another one through Spark, transforming each body.

Source and sink are the ``rocketmq`` format, so the job exercises the whole wire path: route lookup,
offset queries, pulls per queue, offset commits and SEND_MESSAGE_V2. Each copy keeps the source
message's key, tags, queue number (so per-queue order can be checked downstream) and UNIQ_KEY (so a copy
sent twice by a replayed batch carries one id, and a consumer that drops repeated ids sees it once), and
records where it came from in two properties.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.spark.live_source import FORMAT, commit_offsets

SOURCE_QUEUE_PROPERTY = "COPY_SOURCE_QUEUE"
SOURCE_OFFSET_PROPERTY = "COPY_SOURCE_OFFSET"
BODY_PREFIX = "copy:"


def transform_body(body: bytes) -> bytes:
    """What the job does to a body, for checking its output: prefix, upper-cased UTF-8 text."""
    return (BODY_PREFIX + body.decode().upper()).encode()


def copy_columns(stream: DataFrame) -> DataFrame:
    """The Spark form of :func:`transform_body`, plus the columns the sink reads."""
    origin = F.concat_ws("/", "broker", F.col("queue_id").cast("string"))
    return stream.select(
        F.concat(F.lit(BODY_PREFIX), F.upper(F.col("body").cast("string"))).alias("body"),
        "keys", "tags", "queue_id", "uniq_key",
        F.create_map(F.lit(SOURCE_QUEUE_PROPERTY), origin,
                     F.lit(SOURCE_OFFSET_PROPERTY), F.col("queue_offset").cast("string")).alias("properties"))


def copy_topic(spark: SparkSession, *, namesrv: str, source: str, target: str, group: str,
               checkpoint: Path | str, max_per_trigger: int | None = None,
               transform: Callable[[DataFrame], DataFrame] = copy_columns, sink_format: str = FORMAT,
               sink_options: Mapping[str, str] | None = None) -> None:
    """Copy everything ``source`` holds now to ``target`` (Trigger.AvailableNow) and return when done;
    the group's offsets at the broker are then those of the last batch.

    Restarted with the same checkpoint, the job resumes after the last committed micro-batch, replaying
    a batch whose sink writes may have been cut short: the copy is at-least-once.
    """
    reader = (spark.readStream.format(FORMAT).option("namesrv", namesrv).option("topic", source)
              .option("group", group).option("startingOffsets", "committed"))
    if max_per_trigger:
        reader = reader.option("maxMessagesPerTrigger", str(max_per_trigger))
    query = (transform(reader.load()).writeStream.format(sink_format).option("namesrv", namesrv)
             .option("topic", target).option("checkpointLocation", str(checkpoint))
             .options(**(sink_options or {})).trigger(availableNow=True).start())
    query.awaitTermination()
    if query.lastProgress:
        (source_progress,) = query.lastProgress["sources"]
        end = source_progress["endOffset"]
        commit_offsets(namesrv, source, group, json.loads(end) if isinstance(end, str) else end)
