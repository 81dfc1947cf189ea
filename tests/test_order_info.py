"""config/consumerOrderInfo.json in Java's layout (``rocketmq_spec.codec.store.order_info``): the file Apache
RocketMQ 5.5.0 wrote after an ordered pop of offsets 0-3 and acks of 0 and 1 reads as that batch, and writing
the batch again gives the same content (fastjson puts a list of numbers on one line, and an integer key of a
bean on a line of its own, which the codec's pretty layout does not: whitespace only, which every reader
skips)."""

from __future__ import annotations

from rocketmq_spec.codec.fastjson import dumps, loads
from rocketmq_spec.codec.store.order_info import OrderInfo, order_table_from_json, order_table_to_json

WRITTEN_BY_5_5_0 = """{
\t"orderInfoCount":1,
\t"orderedConsumptionLevel":"QUEUE",
\t"table":{
\t\t"takeover_pop_1512aed4_True@takeover_pop_group_1512aed4_True":{
\t\t\t0:{
\t\t\t\t"cm":3,
\t\t\t\t"i":30000,
\t\t\t\t"l":1795641031495,
\t\t\t\t"o":[0,1,2,3],
\t\t\t\t"popTime":1795641031490
\t\t\t}
\t\t}
\t}
}"""
KEY = ("takeover_pop_1512aed4_True", "takeover_pop_group_1512aed4_True", 0)


def test_a_file_apache_wrote_reads_as_its_batch_and_writes_back_the_same() -> None:
    table = order_table_from_json(loads(WRITTEN_BY_5_5_0))
    batch = table[KEY]
    assert (batch.offsets, batch.acked, batch.invisible_time, batch.pop_time) == (
        [0, 1, 2, 3], {0, 1}, 30_000, 1795641031490)
    assert batch.next_offset() == 2
    assert batch.blocks(batch.pop_time + 29_999) and not batch.blocks(batch.pop_time + 30_000)
    assert loads(dumps(order_table_to_json(table), pretty=True)) == loads(WRITTEN_BY_5_5_0)


def test_offsets_after_the_first_are_kept_as_distances_and_later_visibility_per_offset() -> None:
    batch = OrderInfo([7, 9, 12], 1000, 5000, acked={9}, counts={7: 2, 9: 0}, next_visible={12: 90_000})
    written = order_table_to_json({KEY: batch})["table"][f"{KEY[0]}@{KEY[1]}"][0]
    assert (written["o"], written["cm"], written["oc"], written["ot"]) == ([7, 2, 5], 2, {7: 2}, {12: 90_000})
    again = order_table_from_json(order_table_to_json({KEY: batch}))[KEY]
    assert again == OrderInfo([7, 9, 12], 1000, 5000, acked={9}, counts={7: 2}, next_visible={12: 90_000})
    assert again.blocks(50_000) and not again.blocks(90_000)
