"""The engine against the store Java 4.9.8 wrote: same property strings, and it opens and extends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocketmq_spec.codec.store import StoreDirectory, decode_record
from rocketmq_spec.reference_broker.store import MessageStore, StoreConfig
from rocketmq_spec.reference_broker.store.message import (
    add_cluster,
    batch_item_text,
    java_map_text,
    producer_text,
    redirect_text,
)
from rocketmq_spec.spec.golden import STORE_MANIFEST, STORE_TARBALL
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC, TRANS_HALF_TOPIC
from tests import process_tree
from tests.test_store_engine_helpers import assert_consistent, message

pytestmark = pytest.mark.skipif(not STORE_TARBALL.exists(), reason="golden store not available")
GOLDEN_CLUSTER = "DefaultCluster"
GOLDEN_STORE_HOST = ("127.0.0.1", 10911)
EXTRACT_TIMEOUT_S = 120


@pytest.fixture
def java_store(tmp_path: Path) -> Path:
    process_tree.run(["tar", "-xzf", str(STORE_TARBALL), "-C", str(tmp_path)], check=True,
                     timeout=EXTRACT_TIMEOUT_S)
    return tmp_path / "store-4x"


def _client_order(sent: dict[str, str], user_keys: list[str]) -> dict[str, str]:
    """The Java client fills its map as TAGS, KEYS, WAIT (constructor), user properties, then the rest
    (UNIQ_KEY at send); insertion order decides the order inside a HashMap bucket."""
    order = [k for k in (PropertyKey.TAGS, PropertyKey.KEYS, PropertyKey.WAIT) if k in sent] + user_keys
    return {k: sent[k] for k in order + [k for k in sent if k not in order]}


def test_property_rules_reproduce_every_golden_record(java_store: Path) -> None:
    manifest = json.loads(STORE_MANIFEST.read_text())
    with StoreDirectory(java_store) as directory:
        stored = {r.physical_offset: r.properties_text for r in directory.messages()}
    batch_text = java_map_text({PropertyKey.WAIT: "true", PropertyKey.CLUSTER: GOLDEN_CLUSTER})
    checked = 0
    acknowledged = [m for m in manifest["messages"] if "commitLogOffset" in m]
    for sent in acknowledged:
        props = _client_order(sent["properties_after_send"], list(sent["userProperties"]))
        if sent.get("batchIndex") is not None:
            text = batch_item_text(java_map_text(props), batch_text)
        else:
            text = producer_text(props, add_cluster(props, GOLDEN_CLUSTER))
            if sent["delayTimeLevel"] or PropertyKey.TRANSACTION_PREPARED in props:
                text = redirect_text(props, sent["topic"], sent["queueId"])
        assert text == stored[sent["commitLogOffset"]], sent["seq"]
        checked += 1
    assert checked == len(acknowledged) > 40


def test_java_store_opens_and_queue_offsets_continue(java_store: Path) -> None:
    with StoreDirectory(java_store) as directory:
        java_queues = {q: directory.queue(*q).max_offset for q in directory.queues()}
        java_records = {r.physical_offset: r for r in directory.messages()}
    delay_offsets = (java_store / "config" / "delayOffset.json").read_bytes()
    config = StoreConfig(java_store, store_host=GOLDEN_STORE_HOST, cluster_name=GOLDEN_CLUSTER)
    with MessageStore(config) as store:
        assert {q: store.max_offset(*q) for q in java_queues} == java_queues
        assert store.max_phy_offset == max(r.physical_offset + r.total_size for r in java_records.values())
        pulled = store.get_messages("GoldenTopicA", 0, 0, 32)
        assert [decode_record(raw) for raw in pulled.messages] == [
            r for r in java_records.values() if (r.topic, r.queue_id) == ("GoldenTopicA", 0)]
        java_hits = store.query_by_key("GoldenTopicA", "order-1001", 32, 0, 2**62).messages
        assert [decode_record(raw).physical_offset for raw in java_hits] == [0]
        added = store.put_message(message("GoldenTopicA", 0, 1))
        assert added.queue_offset == java_queues[("GoldenTopicA", 0)]
        assert added.phys_offset == store.max_phy_offset - added.wrote_bytes
        other = store.put_message(message("GoldenTopicB", 2, 2))
        assert other.queue_offset == java_queues[("GoldenTopicB", 2)]
        assert store.put_message(message("NewTopic", 0, 3)).queue_offset == 0
    assert (java_store / "config" / "delayOffset.json").read_bytes() == delay_offsets
    assert_consistent(java_store)
    with StoreDirectory(java_store) as directory:
        records = list(directory.messages())
        assert len(records) == len(java_records) + 3
        found = directory.lookup_key("GoldenTopicA", "key-1")
        assert [r.physical_offset for r in found] == [added.phys_offset]


def test_java_delayed_and_half_records_have_the_topics_the_engine_uses(java_store: Path) -> None:
    with StoreDirectory(java_store) as directory:
        topics = {r.topic for r in directory.messages()}
    assert {SCHEDULE_TOPIC, TRANS_HALF_TOPIC} <= topics
