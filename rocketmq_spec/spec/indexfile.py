"""The IndexFile: an on-disk hash table from ``topic#key`` to commitlog offsets, for QUERY_MESSAGE.

A file is a 40-byte header, a slot array and an entry array. A slot holds the number of the newest entry
whose key hashes to it; entries chain to older ones through ``prev_index``, so a lookup walks one chain.
Entries store only the key's hash, never the key: a lookup returns every offset whose hash matches and
the caller must confirm the key in the record itself. Entry 0 is never used, so 0 means "none".
"""

from __future__ import annotations

from construct import Int32sb, Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause

_INDEX = "store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java"
_SERVICE = "store/src/main/java/org/apache/rocketmq/store/index/IndexService.java"

HEADER_SIZE = 40
SLOT_SIZE = 4
ENTRY_SIZE = 20
DEFAULT_SLOT_COUNT = 5_000_000
DEFAULT_INDEX_COUNT = 20_000_000
DEFAULT_FILE_SIZE = HEADER_SIZE + DEFAULT_SLOT_COUNT * SLOT_SIZE + DEFAULT_INDEX_COUNT * ENTRY_SIZE
INVALID_INDEX = 0
FIRST_INDEX = 1
MAX_QUERY_RESULTS = 64
"""``maxMsgsNumBatch``: a query returns at most this many offsets, however many match."""
KEY_SEPARATOR = "#"
INDEX_KEY_TYPE = "K"
"""``MessageConst.INDEX_KEY_TYPE``: what a QUERY_MESSAGE without indexType is taken as (a KEYS entry)."""
INDEX_TAG_TYPE = "T"
"""``MessageConst.INDEX_TAG_TYPE`` (5.4.0+): the tag key is ``topic#T#TAGS``, and QUERY_MESSAGE's indexType
that looks one up. ``K`` (keys) and ``U`` (UNIQ_KEY) look up the plain ``topic#key``."""

IndexHeader = Struct(
    "begin_timestamp" / Int64sb * "store time of the first indexed message, ms",
    "end_timestamp" / Int64sb * "store time of the last indexed message, ms",
    "begin_phy_offset" / Int64sb * "commitlog offset of the first indexed message",
    "end_phy_offset" / Int64sb * "commitlog offset of the last indexed message",
    "hash_slot_count" / Int32sb * "number of slots that became non-empty",
    "index_count" / Int32sb * "next entry number to use; starts at 1 (entry 0 is never used)",
)

IndexSlot = Struct(
    "index" / Int32sb * "number of the newest entry hashed to this slot, 0 when empty",
)

IndexEntry = Struct(
    "key_hash" / Int32sb * "abs(String.hashCode(topic#key)), MIN_VALUE mapped to 0",
    "phy_offset" / Int64sb * "commitlog offset of the message",
    "time_diff" / Int32sb * "(store time - header begin_timestamp) / 1000, in seconds (RMQ-IDX-TIME-DIFF)",
    "prev_index" / Int32sb * "older entry of the same slot, 0 at the end of the chain",
)

RMQ_IDX_LAYOUT = clause(
    "RMQ-IDX-LAYOUT", Level.MUST,
    "An IndexFile is a 40-byte header, slot_count 4-byte slots and index_count 20-byte entries; entry n "
    "is at 40 + 4*slot_count + 20*n.",
    source=_INDEX,
)
RMQ_IDX_KEYS = clause(
    "RMQ-IDX-KEYS", Level.MUST,
    "A record is indexed, in this order, under topic#UNIQ_KEY when it has one, topic#k for every non-empty "
    "k of its KEYS property split on single spaces, and, from 5.4.0, topic#T#TAGS (the whole TAGS string) "
    "when TAGS is non-empty (release rule index-tag-key); the topic is the record's own (a half message's "
    "RMQ_SYS_TRANS_HALF_TOPIC, a parked timer's rmq_sys_wheel_timer). ROLLBACK records are not indexed.",
    source=f"{_SERVICE} (buildIndex, buildKey); common/src/main/java/org/apache/rocketmq/common/message/"
           "MessageConst.java (INDEX_TAG_TYPE)",
)
RMQ_IDX_SLOT = clause(
    "RMQ-IDX-SLOT", Level.MUST,
    "A key's slot is keyHash % slot_count.",
    source=f"{_INDEX} (putKey)",
)
RMQ_IDX_PUT = clause(
    "RMQ-IDX-PUT", Level.MUST,
    "Putting a key writes entry index_count with prev_index = the slot's old value (0 if out of range), "
    "points the slot at it, counts the slot when it was empty, increments index_count and moves the "
    "header's end values (and its begin values for the first entry).",
    source=f"{_INDEX} (putKey)",
)
RMQ_IDX_TIME_DIFF = clause(
    "RMQ-IDX-TIME-DIFF", Level.MUST,
    "time_diff is the whole seconds between store time and the header's begin_timestamp as it stands "
    "when the entry is written, clamped to [0, 2^31-1], and 0 when that is <= 0. A file's first entry is "
    "written before begin_timestamp is set from it: it is timed against the begin the file was created "
    "with, the previous file's end_timestamp (0 for a store's first file).",
    source=f"{_INDEX} (IndexFile(), putKey); {_SERVICE} (getAndCreateLastIndexFile)",
)
RMQ_IDX_LOOKUP = clause(
    "RMQ-IDX-LOOKUP", Level.MUST,
    "A lookup walks the slot's chain from newest to oldest, collects entries with the key's hash whose "
    "time lies in the query range, and stops at prev_index 0, an out-of-range or self link, a negative "
    "time_diff, an entry older than the range, or the result limit.",
    source=f"{_INDEX} (selectPhyOffset)",
)
RMQ_IDX_FULL = clause(
    "RMQ-IDX-FULL", Level.MUST,
    "A file is full when index_count reaches its entry capacity; indexing continues in a new file.",
    source=f"{_INDEX} (isWriteFull)",
)
RMQ_IDX_FILE_NAME = clause(
    "RMQ-IDX-FILE-NAME", Level.MUST,
    "An IndexFile is named by its creation time as yyyyMMddHHmmssSSS in local time.",
    source=f"{_SERVICE} (getAndCreateLastIndexFile)",
)

MAX_TIME_DIFF = 2**31 - 1


def index_key(topic: str, key: str) -> str:
    """``IndexService.buildKey(topic, key)``: what a UNIQ_KEY or a KEYS entry is hashed as."""
    return f"{topic}{KEY_SEPARATOR}{key}"


def tag_index_key(topic: str, tags: str) -> str:
    """``IndexService.buildKey(topic, tags, INDEX_TAG_TYPE)`` (5.4.0+): what a TAGS string is hashed as. A
    KEYS entry ``T#x`` hashes like tag ``x``; lookups return hash matches anyway and the client filters."""
    return f"{topic}{KEY_SEPARATOR}{INDEX_TAG_TYPE}{KEY_SEPARATOR}{tags}"


def query_key(topic: str, key: str, index_type: str | None) -> str:
    """``IndexService.queryOffset``: the string a QUERY_MESSAGE looks up; only indexType T differs."""
    return tag_index_key(topic, key) if index_type == INDEX_TAG_TYPE else index_key(topic, key)


def slot_position(key_hash: int, slot_count: int = DEFAULT_SLOT_COUNT) -> int:
    """Byte position of a key's slot."""
    return HEADER_SIZE + (key_hash % slot_count) * SLOT_SIZE


def entry_position(index: int, slot_count: int = DEFAULT_SLOT_COUNT) -> int:
    return HEADER_SIZE + slot_count * SLOT_SIZE + index * ENTRY_SIZE


def file_size(slot_count: int = DEFAULT_SLOT_COUNT, index_count: int = DEFAULT_INDEX_COUNT) -> int:
    return entry_position(index_count, slot_count)


def time_diff_seconds(store_timestamp: int, begin_timestamp: int) -> int:
    """Seconds from the file's first record to this one, clamped to [0, MAX_TIME_DIFF]; 0 in a file with no
    first record yet. Every index key computes it, hence comparisons rather than ``min``/``max`` calls."""
    if begin_timestamp <= 0 or store_timestamp <= begin_timestamp:
        return 0
    seconds = (store_timestamp - begin_timestamp) // 1000
    return seconds if seconds < MAX_TIME_DIFF else MAX_TIME_DIFF


def time_base(entry_index: int, begin_timestamp: int, previous_end_timestamp: int | None) -> int | None:
    """The timestamp an entry's ``time_diff`` counts from (RMQ-IDX-TIME-DIFF): the file's begin, except
    for its first entry, written while the header still held what the file was created with (the previous
    file's end, 0 for a store's first file; None where that is not known)."""
    return previous_end_timestamp if entry_index == FIRST_INDEX else begin_timestamp
