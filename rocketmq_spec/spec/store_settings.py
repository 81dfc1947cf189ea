"""Defaults of the ``MessageStoreConfig`` settings that decide a store's files and its background loops.

A store written under other sizes or retention is still a RocketMQ store, but one that Apache, started with
an empty broker.conf, would lay out or expire differently; the reference broker and the store library it
embeds start from these values, so they are read off Java once, here (file sizes from the file layouts).
Each field is named after its broker.conf key (4.9.8 ``store/config/MessageStoreConfig.java``; the two disk
ratios are ``-D`` system properties of ``DefaultMessageStore``). HA settings are in
:mod:`rocketmq_spec.spec.ha`, the timer's in :mod:`rocketmq_spec.spec.timer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.commitlog import COMMITLOG_FILE_SIZE
from rocketmq_spec.spec.consumequeue import CQ_FILE_SIZE
from rocketmq_spec.spec.indexfile import DEFAULT_INDEX_COUNT, DEFAULT_SLOT_COUNT

SOURCE = "store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java"


@dataclass(frozen=True)
class MessageStoreDefaults:
    """One row per broker.conf key: its default and what it governs."""

    mappedFileSizeCommitLog: int = COMMITLOG_FILE_SIZE
    """Bytes of one CommitLog file; a file's name is its first offset."""
    mappedFileSizeConsumeQueue: int = CQ_FILE_SIZE
    """Bytes of one consume-queue file: 300,000 entries of 20 bytes."""
    maxHashSlotNum: int = DEFAULT_SLOT_COUNT
    """Hash slots of one index file."""
    maxIndexNum: int = DEFAULT_INDEX_COUNT
    """Entries of one index file."""
    messageIndexEnable: bool = True
    """Whether keys and UNIQ_KEYs are indexed at all."""
    flushIntervalCommitLog: int = 500
    """ms between flushes of the CommitLog under ASYNC_FLUSH."""
    flushIntervalConsumeQueue: int = 1000
    """ms between flushes of the consume queues."""
    flushDelayOffsetInterval: int = 10_000
    """ms between writes of delayOffset.json."""
    syncFlushTimeout: int = 5000
    """ms a SYNC_FLUSH put with WAIT=true waits for its flush before FLUSH_DISK_TIMEOUT."""
    maxMessageSize: int = 4 * 1024 * 1024
    """Largest body (bytes) a put may carry."""
    checkCRCOnRecover: bool = True
    """Whether recovery checks each record's body CRC."""
    maxTransferBytesOnMessageInMemory: int = 256 * 1024
    """Largest total of message bytes one pull answer carries."""
    maxTransferCountOnMessageInMemory: int = 32
    """Most messages one pull answer carries."""
    maxMsgsNumBatch: int = 64
    """Cap on one key query's result."""
    defaultQueryMaxNum: int = 32
    """The maxNum a UNIQ_KEY query is given, whatever it asked for."""
    deleteWhen: str = "04"
    """Hours of the day (``;``-separated, two digits) at which expired files are deleted."""
    fileReservedTime: int = 72
    """Hours a CommitLog file is kept after its last write."""
    diskMaxUsedSpaceRatio: int = 75
    """Percent of the disk the CommitLog may fill before files are deleted whatever the hour."""
    cleanResourceInterval: int = 10_000
    """ms between runs of the clean services."""
    deleteCommitLogFilesInterval: int = 100
    """ms between two CommitLog file deletions of one run."""
    deleteConsumeQueueFilesInterval: int = 100
    """ms between two consume-queue file deletions of one run."""
    cleanFileForciblyEnable: bool = True
    """Whether files are deleted before their time when the disk is full."""
    diskSpaceWarningLevelRatio: float = 0.90
    """``-Drocketmq.broker.diskSpaceWarningLevelRatio``: puts refused and files deleted above it."""
    diskSpaceCleanForciblyRatio: float = 0.85
    """``-Drocketmq.broker.diskSpaceCleanForciblyRatio``: above it files are deleted at once."""


STORE_DEFAULTS = MessageStoreDefaults()
