"""Checks of the store's small files: the checkpoint, the config JSON files and the marker files."""

from __future__ import annotations

from pyspark.sql import functions as F

from rocketmq_spec.spark.verify.framework import (
    FAIL,
    INFO,
    Check,
    StoreVerification,
    Verdict,
    check,
    expect_none,
)
from rocketmq_spec.spec.checkpoint import CHECKPOINT_FILE_SIZE
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.store_layout import (
    CHECKPOINT_FILE,
    CONFIG_DIR,
    LOCK_CONTENT,
    LOCK_FILE,
)

CONFIG_FILES = ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json")


@check("checkpoint-size", "RMQ-CKPT-LAYOUT")
def _checkpoint_size(v: StoreVerification) -> None:
    size = (v.root / CHECKPOINT_FILE).stat().st_size
    if size != CHECKPOINT_FILE_SIZE:
        raise Verdict(FAIL, f"checkpoint is {size} bytes, expected {CHECKPOINT_FILE_SIZE}")


@check("checkpoint-not-ahead", "RMQ-BRK-CHECKPOINT")
def _checkpoint_not_ahead(v: StoreVerification) -> None:
    if v.store.crashed:
        raise Verdict(INFO, "the store was not shut down cleanly (abort file present)")
    # every record the CommitLog holds, past a CRC mismatch too: the checkpoint is about what was written
    aggregate = v.scanned.where("error IS NULL").agg(F.max("store_timestamp")).first()
    assert aggregate is not None  # an aggregate without grouping is one row
    newest = aggregate[0]
    if newest is None:
        raise Verdict(INFO, "the store holds no record")
    point = v.store.checkpoint()
    expect_none(f"checkpoint timestamps ahead of the newest record ({newest})", [
        (name, value) for name, value in (("physic", point.physic_msg_timestamp),
                                          ("logics", point.logics_msg_timestamp)) if value > newest])


def _config_check(name: str) -> Check:
    def loads(v: StoreVerification) -> None:
        if not (v.root / CONFIG_DIR / name).exists():
            raise Verdict(INFO, f"config/{name} is absent")
        _load(v, name)
    return loads


def _load(v: StoreVerification, name: str) -> None:
    try:
        v.store.config(name)
    except (RocketMQSpecError, ValueError, OSError) as exc:
        raise Verdict(FAIL, f"config/{name} does not load: {exc}") from None


for _name in CONFIG_FILES:
    check(f"config::{_name}", "RMQ-STORE-CONFIG-JSON")(_config_check(_name))


@check("config-backups", "RMQ-STORE-CONFIG-BAK")
def _backups(v: StoreVerification) -> None:
    for path in sorted((v.root / CONFIG_DIR).glob("*.json.bak")):
        _load(v, path.name)


@check("queues-are-configured", "RMQ-STORE-LAYOUT")
def _configured(v: StoreVerification) -> None:
    topics = v.store.topics()
    expect_none("queues beyond their topic's configured queues", [
        (topic, queue_id) for topic, queue_id in v.store.queues() if topic in topics
        and queue_id >= max(topics[topic]["readQueueNums"], topics[topic]["writeQueueNums"])])


@check("consumer-offsets", "RMQ-STORE-OFFSET-KEY")
def _offsets(v: StoreVerification) -> None:
    maxima = {(r.topic, r.queue_id): r.n + 1 for r in
              v.queue_entries.groupBy("topic", "queue_id").agg(F.max("queue_offset").alias("n")).collect()}
    expect_none("consumer offsets outside their queue", [
        (topic, group, queue_id, offset) for (topic, group), offsets in v.store.consumer_offsets().items()
        for queue_id, offset in offsets.items() if not 0 <= offset <= maxima.get((topic, queue_id), 0)])


@check("lock-file", "RMQ-STORE-LOCK")
def _lock(v: StoreVerification) -> None:
    path = v.root / LOCK_FILE
    if not path.exists():
        raise Verdict(INFO, "the store has no lock file")
    if path.read_bytes()[:len(LOCK_CONTENT)] != LOCK_CONTENT:
        raise Verdict(FAIL, f"lock file holds {path.read_bytes()[:len(LOCK_CONTENT)]!r}")
