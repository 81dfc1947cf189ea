"""Readers and writers for a RocketMQ store directory, built on the ``rocketmq_spec.spec`` store schemas."""

from rocketmq_spec.codec.store.checkpoint import (
    CheckpointData,
    encode_checkpoint,
    read_checkpoint,
    write_checkpoint,
)
from rocketmq_spec.codec.store.commitlog import CommitLog, SegmentFile, segment_files
from rocketmq_spec.codec.store.configs import OffsetTable, load_config, save_config
from rocketmq_spec.codec.store.consumequeue import (
    CQ_DTYPE,
    ConsumeQueue,
    encode_entry,
    entry_location,
    read_entries,
)
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.codec.store.indexfile import IndexFile, index_keys
from rocketmq_spec.codec.store.record import (
    HostPort,
    MessageRecord,
    decode_record,
    decode_records,
    encode_blank,
    encode_record,
    make_record,
    read_prefix,
)

__all__ = [
    "CQ_DTYPE", "CheckpointData", "CommitLog", "ConsumeQueue", "HostPort", "IndexFile", "MessageRecord",
    "OffsetTable", "SegmentFile", "StoreDirectory", "decode_record", "decode_records", "encode_blank",
    "encode_checkpoint", "encode_entry", "encode_record", "entry_location", "index_keys", "load_config",
    "make_record", "read_checkpoint", "read_entries", "read_prefix", "save_config", "segment_files",
    "write_checkpoint",
]
