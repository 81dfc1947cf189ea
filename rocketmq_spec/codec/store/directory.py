"""A whole store root: the CommitLog, every consume queue, the index files, checkpoint and configs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.store.checkpoint import CheckpointData, read_checkpoint
from rocketmq_spec.codec.store.commitlog import CommitLog
from rocketmq_spec.codec.store.configs import (
    SUBSCRIPTION_TABLE,
    TOPIC_TABLE,
    OffsetTable,
    consumer_offsets_from_json,
    delay_offsets_from_json,
    load_config,
    table_from_json,
)
from rocketmq_spec.codec.store.consumequeue import ConsumeQueue
from rocketmq_spec.codec.store.indexfile import MAX_TIMESTAMP, IndexFile, query_offsets
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.spec.checkpoint import RMQ_CKPT_ZERO
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.indexfile import INDEX_TAG_TYPE, MAX_QUERY_RESULTS
from rocketmq_spec.spec.store_layout import (
    ABORT_FILE,
    BACKUP_SUFFIX,
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_FILE,
    RMQ_STORE_ABORT,
    RMQ_STORE_LAYOUT,
)


class StoreDirectory:
    def __init__(self, root: Path | str, *, index_sizes: tuple[int, int] | None = None) -> None:
        """``index_sizes`` is (maxHashSlotNum, maxIndexNum) of the index files; without it they are
        inferred from each file's size (:func:`rocketmq_spec.codec.store.indexfile.index_sizes`)."""
        self.root = Path(root)
        self._index_sizes = index_sizes
        if not (self.root / COMMITLOG_DIR).is_dir():
            raise StoreError("not a store directory", expected=f"{COMMITLOG_DIR}/ under the root",
                             seen=str(self.root), clause=RMQ_STORE_LAYOUT.id)
        self.commitlog = CommitLog(self.root / COMMITLOG_DIR)

    def close(self) -> None:
        self.commitlog.close()

    def __enter__(self) -> StoreDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def crashed(self) -> bool:
        """An abort file left behind means the last run did not shut down cleanly."""
        return (self.root / ABORT_FILE).exists()

    def notices(self) -> list[tuple[str, str]]:
        """(clause id, text) of what a running or killed broker leaves and a reader reports rather than
        refuses: files past the data end, a torn last record, the abort file, an unflushed checkpoint.
        Walks the CommitLog once if no reader has yet (``CommitLog.end``)."""
        found = self.commitlog.end.notices()
        if self.crashed:
            found.append((RMQ_STORE_ABORT.id, "abort file present: the broker is running or was killed"))
        if (self.root / CHECKPOINT_FILE).exists() and self.checkpoint().unflushed:
            found.append((RMQ_CKPT_ZERO.id, "checkpoint not flushed yet (a zero physic or logics timestamp)"))
        return found

    @property
    def has_lock_file(self) -> bool:
        return (self.root / LOCK_FILE).exists()

    def messages(self, *, verify_crc: bool = True, decompress: bool = False) -> Iterator[MessageRecord]:
        return self.commitlog.records(verify_crc=verify_crc, decompress=decompress)

    def read(self, offset: int) -> MessageRecord:
        return self.commitlog.read(offset)

    def queues(self) -> list[tuple[str, int]]:
        """Every (topic, queue id) with a consume-queue directory, sorted."""
        base = self.root / CONSUMEQUEUE_DIR
        if not base.is_dir():
            return []
        return sorted((topic.name, int(q.name)) for topic in base.iterdir() if topic.is_dir()
                      for q in topic.iterdir() if q.is_dir() and q.name.lstrip("-").isdigit())

    def queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        return ConsumeQueue.open(self.root / CONSUMEQUEUE_DIR / topic / str(queue_id), topic, queue_id)

    def index_files(self) -> list[Path]:
        """Index files oldest first (their names are creation times)."""
        base = self.root / INDEX_DIR
        return sorted(p for p in base.iterdir() if p.name.isdigit()) if base.is_dir() else []

    def _index_files_newest_first(self) -> Iterator[IndexFile]:
        """Each file is open only while the query looks at it."""
        for path in reversed(self.index_files()):
            slots, entries = self._index_sizes or (None, None)
            with IndexFile(path, slot_count=slots, index_count=entries) as index:
                yield index

    def lookup_offsets(self, topic: str, key: str, *, begin: int = 0, end: int = MAX_TIMESTAMP,
                       max_results: int = MAX_QUERY_RESULTS, index_type: str | None = None) -> list[int]:
        """``IndexService.queryOffset`` (:func:`rocketmq_spec.codec.store.indexfile.query_offsets`) over the
        files; ``index_type`` T looks ``key`` up as a TAGS string (5.4.0+)."""
        return query_offsets(self._index_files_newest_first(), topic, key, begin=begin, end=end,
                             max_results=max_results, index_type=index_type)

    def lookup_key(self, topic: str, key: str, **limits: int) -> list[MessageRecord]:
        """Records of ``topic`` whose KEYS or UNIQ_KEY contain ``key``, each once in commitlog order (hash
        collisions filtered out, as ``MQAdminImpl.queryMessage`` filters them)."""
        return [r for r in self._found(topic, key, None, limits) if key in r.keys or key == r.uniq_key]

    def lookup_tag(self, topic: str, tags: str, **limits: int) -> list[MessageRecord]:
        """Records of ``topic`` whose TAGS is ``tags``, through the tag keys a 5.4.0+ broker indexes (none
        in an older store), filtered alike."""
        return [r for r in self._found(topic, tags, INDEX_TAG_TYPE, limits) if r.tags == tags]

    def _found(self, topic: str, key: str, index_type: str | None,
               limits: dict[str, int]) -> list[MessageRecord]:
        offsets = sorted(set(self.lookup_offsets(topic, key, index_type=index_type, **limits)))
        return [r for r in map(self.read, offsets) if r.topic == topic]

    def checkpoint(self) -> CheckpointData:
        return read_checkpoint(self.root / CHECKPOINT_FILE)

    def config(self, name: str) -> Any:
        return load_config(self.root / CONFIG_DIR / name)

    def _table(self, name: str) -> Any:
        """A config file's content; ``{}`` when neither it nor its .bak exists — Java's ConfigManager loads
        nothing then, as a young store has no consumerOffset.json or delayOffset.json yet."""
        path = self.root / CONFIG_DIR / name
        if not path.exists() and not path.with_name(name + BACKUP_SUFFIX).exists():
            return {}
        return self.config(name)

    def topics(self) -> dict[str, dict[str, Any]]:
        return table_from_json(self._table("topics.json"), TOPIC_TABLE)

    def subscription_groups(self) -> dict[str, dict[str, Any]]:
        return table_from_json(self._table("subscriptionGroup.json"), SUBSCRIPTION_TABLE)

    def consumer_offsets(self) -> OffsetTable:
        return consumer_offsets_from_json(self._table("consumerOffset.json"))

    def delay_offsets(self) -> dict[int, int]:
        return delay_offsets_from_json(self._table("delayOffset.json"))
