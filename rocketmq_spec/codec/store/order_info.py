"""``config/consumerOrderInfo.json`` (5.x): the batch an ordered pop handed out per topic, group and queue,
which keeps the queue locked until the batch is acked or its invisible time has passed
(``rocketmq_spec.spec.store_layout.ORDER_INFO_FILE``).

Java (``ConsumerOrderInfoManager.OrderInfo``; ``QueueLevelConsumerManager.OrderInfo`` in 5.5) names its
fields with one or two letters (``@JSONField``): ``o`` the offsets as the first one followed by each
other's distance from it, ``cm`` the acked ones as bits by index, ``oc`` per offset how often it was handed
out before (only counts above zero), ``ot`` a later visibility set by CHANGE_MESSAGE_INVISIBLETIME, ``i``
the invisible time, ``l`` the last pop, ``a`` the attempt id; fastjson leaves null fields out. From 5.4.0
the file also has ``orderedConsumptionLevel`` ("QUEUE") and from 5.5.0 ``orderInfoCount`` (how many
topic@group keys): getters of ``QueueLevelConsumerManager`` that no release reads back, written here as
5.5.0 writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketmq_spec.codec.store.configs import bean
from rocketmq_spec.spec.store_layout import ORDER_INFO_TABLE, offset_table_key, split_offset_table_key


@dataclass
class OrderInfo:
    offsets: list[int]
    pop_time: int
    invisible_time: int
    acked: set[int] = field(default_factory=set)
    """Offsets acked (Java: bits of commitOffsetBit by index into the offsets)."""
    counts: dict[int, int] = field(default_factory=dict)
    """Offset -> how often it was handed out before this batch (zero counts absent)."""
    next_visible: dict[int, int] = field(default_factory=dict)
    """Offset -> when it becomes visible, where CHANGE_MESSAGE_INVISIBLETIME moved it."""
    last_consume_timestamp: int = 0
    attempt_id: str | None = None

    def visible_at(self, offset: int) -> int:
        return self.next_visible.get(offset, self.pop_time + self.invisible_time)

    def blocks(self, now: int) -> bool:
        """``needBlock``: an offset not acked is still invisible."""
        return any(now < self.visible_at(o) for o in self.offsets if o not in self.acked)

    def next_offset(self) -> int:
        """``getNextOffset``: the first offset not acked, or the one after the batch when all are."""
        return next((o for o in self.offsets if o not in self.acked), self.offsets[-1] + 1)


OrderTable = dict[tuple[str, str, int], OrderInfo]
"""(topic, group, queue id) -> the batch."""


def order_info_to_json(info: OrderInfo) -> dict[str, Any]:
    first = info.offsets[0]
    fields: dict[str, Any] = {
        "cm": sum(1 << i for i, o in enumerate(info.offsets) if o in info.acked),
        "i": info.invisible_time,
        "l": info.last_consume_timestamp,
        "o": [first, *(o - first for o in info.offsets[1:])],
        "popTime": info.pop_time,
    }
    if counted := {o: n for o, n in info.counts.items() if n > 0}:
        fields["oc"] = counted
    if info.next_visible:
        fields["ot"] = dict(info.next_visible)
    if info.attempt_id is not None:
        fields["a"] = info.attempt_id
    return bean(fields)


def order_info_from_json(fields: dict[str, Any]) -> OrderInfo:
    listed = [int(o) for o in fields.get("o") or []]
    offsets = listed[:1] + [listed[0] + delta for delta in listed[1:]]
    bits = int(fields.get("cm") or 0)
    return OrderInfo(
        offsets, int(fields.get("popTime") or 0), int(fields.get("i") or 0),
        acked={o for i, o in enumerate(offsets) if bits >> i & 1},
        counts={int(o): int(n) for o, n in (fields.get("oc") or {}).items()},
        next_visible={int(o): int(t) for o, t in (fields.get("ot") or {}).items()},
        last_consume_timestamp=int(fields.get("l") or 0), attempt_id=fields.get("a"))


def order_table_to_json(table: OrderTable) -> dict[str, Any]:
    grouped: dict[str, dict[int, Any]] = {}
    for (topic, group, queue_id), info in table.items():
        if info.offsets:
            grouped.setdefault(offset_table_key(topic, group), {})[queue_id] = order_info_to_json(info)
    return {"orderInfoCount": len(grouped), "orderedConsumptionLevel": "QUEUE", ORDER_INFO_TABLE: grouped}


def order_table_from_json(content: Any) -> OrderTable:
    table: OrderTable = {}
    for key, queues in (content.get(ORDER_INFO_TABLE) or {}).items():
        topic, group = split_offset_table_key(key)
        for queue_id, fields in queues.items():
            info = order_info_from_json(fields)
            if info.offsets:
                table[(topic, group, int(queue_id))] = info
    return table
