"""The epoch file of a controller-mode store: which master epoch wrote which part of the CommitLog.

A broker in controller mode keeps ``epochFileCheckpoint`` in its store root (``storePathEpochFile``
overrides the path): a text file in the generic ``CheckpointFile`` format, three parts, each line ending
with the platform's line separator (``\\n`` on Linux):

    <number of entries>
    <masked CRC32 of the entry lines, separator included; 0: not checked>
    <epoch>-<startOffset>      one line per entry, epochs ascending

An entry's end is the next one's start; the last entry ends at the CommitLog's max offset. Every write
copies the previous content to ``epochFileCheckpoint.bak`` first, and a reader falls back to the copy when
the file is missing, empty or fails its checks. The HA handshake sends these entries to a slave
(``rocketmq_spec.spec.ha_autoswitch``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.ha_autoswitch import AUTOSWITCH_RELEASES
from rocketmq_spec.spec.releases import Releases

_CHECKPOINT = "common/src/main/java/org/apache/rocketmq/common/utils/CheckpointFile.java"
_CACHE = "store/src/main/java/org/apache/rocketmq/store/ha/autoswitch/EpochFileCache.java"
_CONFIG = "store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java"
_MIXALL = "common/src/main/java/org/apache/rocketmq/common/MixAll.java"

EPOCH_FILE_NAME = "epochFileCheckpoint"
"""Under storePathRootDir (MessageStoreConfig.getStorePathEpochFile:852)."""
BACKUP_SUFFIX = ".bak"
"""CheckpointFile.getBackFilePath:71, written by MixAll.string2File:228."""
ENTRY_SEPARATOR = "-"
"""Between epoch and start offset (EpochFileCache.EpochEntrySerializer.toLine:308)."""
LINE_SEPARATOR = "\n"
"""``System.lineSeparator()`` on the platforms brokers run on."""
UNCHECKED_CRC = 0
"""A CRC line of 0 is not checked (CheckpointFile.NOT_CHECK_CRC_MAGIC_CODE:49)."""


@dataclass(frozen=True)
class EpochFileLine:
    line: str
    content: str
    source: str
    releases: Releases = AUTOSWITCH_RELEASES


EPOCH_FILE_LAYOUT: tuple[EpochFileLine, ...] = (
    EpochFileLine("1", "entry count, decimal", "CheckpointFile.write:92; read:107"),
    EpochFileLine("2", "UtilAll.crc32 (CRC32 & 0x7FFFFFFF) of the UTF-8 entry lines with their separators, "
                  "decimal", "CheckpointFile.write:90; read:110,123,131"),
    EpochFileLine("3..", "epoch-startOffset, decimal, epochs ascending",
                  "EpochFileCache.EpochEntrySerializer:305-328"),
)

RMQ_EPOCH_FILE = clause(
    "RMQ-EPOCH-FILE", Level.MUST,
    "A controller-mode store keeps its epochs in <storePathRootDir>/epochFileCheckpoint: a count line, a CRC "
    "line (masked CRC32 of the entry lines, each with its line separator) and one epoch-startOffset line per "
    "entry; a file whose count or CRC (when not 0) does not match is refused.",
    source=_CHECKPOINT + " (write:77, read:98); " + _CACHE + " (EpochEntrySerializer:305); "
    + _CONFIG + " (getStorePathEpochFile:852)")
RMQ_EPOCH_FILE_ORDER = clause(
    "RMQ-EPOCH-FILE-ORDER", Level.MUST,
    "The entries of an epoch file grow strictly in both epoch and start offset, and the last start offset is "
    "at most the CommitLog's max offset.",
    source=_CACHE + " (appendEntry:101, initCacheFromEntries:70)")
RMQ_EPOCH_FILE_BACKUP = clause(
    "RMQ-EPOCH-FILE-BACKUP", Level.MUST,
    "Each write first copies the previous content to epochFileCheckpoint.bak; a reader uses the copy when "
    "the file is missing, holds no entry or fails its checks.",
    source=_MIXALL + " (string2File:228); " + _CHECKPOINT + " (read:144)")
