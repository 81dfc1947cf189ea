"""What a handler hands to the store, and how its properties string is written.

Java keeps a message's properties twice, as a map (what the broker acts on: DELAY, WAIT, TAGS ...) and
as the string it stores, and regenerates the string from the map only at certain points. Which keys the
stored string carries therefore depends on the path (golden store-4x shows all of them): a producer's
message gets CLUSTER and loses WAIT; a delayed or half message is rewritten from the map, so WAIT comes
back; a batch keeps each producer string and appends the batch's own. Each rule is one function here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from rocketmq_spec.codec.fast_store import encode_properties
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.spec.properties import (
    PROPERTY_SEPARATOR,
    PropertyKey,
    java_hashmap_order,
    parse_properties,
)
from rocketmq_spec.spec.sysflag import TransactionType, transaction_type


def java_map_text(properties: dict[str, str], peak_size: int | None = None) -> str:
    """``messageProperties2String`` of a HashMap holding ``properties`` (inserted in dict order)."""
    return encode_properties(properties, _hashmap_order(tuple(properties), peak_size))


@lru_cache(maxsize=4096)
def _hashmap_order(names: tuple[str, ...], peak_size: int | None) -> list[str]:
    """Producers send the same few property names over and over, so each name set is ordered once."""
    return java_hashmap_order(names, peak_size)


@dataclass
class InnerMessage:
    """A message as the send path builds it (Java's MessageExtBrokerInner before the put)."""

    topic: str
    queue_id: int
    body: bytes
    properties: dict[str, str]
    """The producer's properties in the order of its string (insertion order feeds HashMap order)."""
    born_timestamp: int
    born_host: HostPort
    flag: int = 0
    sys_flag: int = 0
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0

    @classmethod
    def from_wire(cls, *, topic: str, queue_id: int, body: bytes, properties: str | None,
                  born_timestamp: int, born_host: HostPort, flag: int = 0, sys_flag: int = 0,
                  reconsume_times: int = 0) -> InnerMessage:
        """From the fields of a SEND_MESSAGE(_V2) header, the properties still as the wire string."""
        return cls(topic, queue_id, body, parse_properties(properties or ""), born_timestamp, born_host, flag,
                   sys_flag, reconsume_times)

    @property
    def delay_level(self) -> int:
        """``getDelayTimeLevel``: 0 when DELAY is absent (an unparsable value is treated as absent too)."""
        value = self.properties.get(PropertyKey.DELAY, "")
        return int(value) if value.lstrip("-").isdigit() else 0

    @property
    def wait_store_msg_ok(self) -> bool:
        """``isWaitStoreMsgOK``: true unless WAIT is present and not "true" (case-insensitive)."""
        value = self.properties.get(PropertyKey.WAIT)
        return value is None or value.lower() == "true"

    @property
    def transaction_type(self) -> TransactionType:
        return transaction_type(self.sys_flag)


@dataclass(frozen=True)
class BatchItem:
    """One message of a SEND_BATCH_MESSAGE body: its flag, body and the producer's properties string."""

    body: bytes
    flag: int = 0
    properties_text: str = ""
    properties: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "properties", parse_properties(self.properties_text))


def add_cluster(properties: dict[str, str], cluster: str) -> int:
    """Put CLUSTER into the map as the send processor does; returns the map's peak size so far."""
    properties[PropertyKey.CLUSTER] = cluster
    return len(properties)


def producer_text(properties: dict[str, str], peak_size: int) -> str:
    """The string stored for a producer's message: the map without WAIT. Java removes WAIT to save the
    bytes and puts it back for later checks, which moves it behind the other keys of its HashMap bucket,
    so a later rewrite of the string (delay, half message) has DELAY before WAIT; the map here follows."""
    wait = properties.pop(PropertyKey.WAIT, None)
    text = java_map_text(properties, peak_size)
    if wait is not None:
        properties[PropertyKey.WAIT] = wait
    return text


def batch_item_text(item_text: str, batch_text: str) -> str:
    """Each batch record stores its producer string, a separator unless it already ends with one, then
    the batch's own properties (RMQ-CL-BATCH-PROPERTIES)."""
    if item_text and batch_text and not item_text.endswith(PROPERTY_SEPARATOR):
        return f"{item_text}{PROPERTY_SEPARATOR}{batch_text}"
    return item_text + batch_text


def redirect_text(properties: dict[str, str], real_topic: str, real_queue_id: int) -> str:
    """The string of a message parked under a system topic (delay or half message): REAL_TOPIC and
    REAL_QID added to the map, the whole map written again."""
    properties[PropertyKey.REAL_TOPIC] = real_topic
    properties[PropertyKey.REAL_QUEUE_ID] = str(real_queue_id)
    return java_map_text(properties)
