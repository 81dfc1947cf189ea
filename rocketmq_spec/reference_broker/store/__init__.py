"""The reference broker's message store: CommitLog, consume queues, index, checkpoint, delay levels and
transactions, laid out byte for byte as Apache RocketMQ 4.9.8 lays out its store."""

from rocketmq_spec.reference_broker.store.arrival import ArrivalNotifier, MessageArrival
from rocketmq_spec.reference_broker.store.config import FlushDiskType, StoreConfig
from rocketmq_spec.reference_broker.store.message import BatchItem, InnerMessage
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.reference_broker.store.status import (
    GetMessageStatus,
    GetResult,
    PutMessageStatus,
    PutResult,
    QueryResult,
)

__all__ = [
    "ArrivalNotifier", "BatchItem",
    "FlushDiskType", "GetMessageStatus", "GetResult", "InnerMessage", "MessageArrival", "MessageStore",
    "PutMessageStatus", "PutResult", "QueryResult", "StoreConfig",
]
