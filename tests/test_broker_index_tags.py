"""The index keys of each wire release (RMQ-IDX-KEYS): from 5.4.0 a tagged record is indexed under
``topic#T#TAGS`` too, and QUERY_MESSAGE with indexType T finds it (RMQ-BRK-QUERY-MESSAGE); 5.3.3 and 4.9.8
index no tags and look every query up as ``topic#key``. The messages are the ones Apache RocketMQ 5.5.0
was sent for ``tests/data/apache-stores/apache-5.5.0-tagged.tar.gz``, and the answers to the tag queries
are what 5.5.0 answered them (a record whose KEYS entry ``T#TagA`` hashes like the tag key comes twice:
the broker returns every entry of the hash, the client filters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.store import StoreDirectory, decode_records
from rocketmq_spec.codec.store.indexfile import IndexFile, index_keys
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import index_key_hash
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.releases import ordinal
from tests.broker_support import run
from tests.capture_apache_stores import TAGGED, TAGGED_TOPIC
from tests.messaging_support import send, with_broker

RELEASES = ("5.5.0", "5.3.3", "4.9.8")


async def _query(client: RemotingClient, key: str, index_type: str | None) -> tuple[int, list[tuple]]:
    fields = {"topic": TAGGED_TOPIC, "key": key, "maxNum": "32", "beginTimestamp": "0",
              "endTimestamp": str(2**62), **({"indexType": index_type} if index_type else {})}
    answer = await client.invoke(client.request(RequestCode.QUERY_MESSAGE, fields))
    records = decode_records(answer.body) if answer.code == ResponseCode.SUCCESS else []
    return answer.code, [(r.properties.get("TAGS"), r.properties.get("KEYS")) for r in records]


@pytest.mark.parametrize("release", RELEASES)
def test_tags_are_indexed_and_queried_as_the_release_does(tmp_path: Path, release: str) -> None:
    tags_indexed = holds(Rule.INDEX_TAG_KEY, ordinal(release))

    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for number, (tags, keys) in enumerate(TAGGED):
            properties = {"WAIT": "true", **{k: v for k, v in (("TAGS", tags), ("KEYS", keys)) if v}}
            assert (await send(client, TAGGED_TOPIC, f"tagged {number}".encode(), properties)).code == 0
        by_tag = await _query(client, "TagA", "T")
        if tags_indexed:  # what Apache RocketMQ 5.5.0 answered
            assert by_tag == (ResponseCode.SUCCESS, [("TagA", None), ("TagA", "T#TagA"), ("TagA", "T#TagA")])
            whole = await _query(client, "TagA || TagB", "T")
            assert whole == (ResponseCode.SUCCESS, [("TagA || TagB", None)])
        else:
            assert by_tag == (ResponseCode.QUERY_NOT_FOUND, [])
        assert await _query(client, "TagA", None) == (ResponseCode.QUERY_NOT_FOUND, [])
        assert await _query(client, "key-b", "K") == (ResponseCode.SUCCESS, [("TagB", "key-b")])

    store = tmp_path / "store"
    run(with_broker(store, scenario, wire_release=release))
    with StoreDirectory(store) as directory:
        records = {r.physical_offset: r for r in directory.messages() if r.topic == TAGGED_TOPIC}
        entries = []
        for path in directory.index_files():
            with IndexFile(path) as index:
                entries += [(e.phy_offset, e.key_hash) for e in index.entries() if e.phy_offset in records]
    assert entries == [(offset, index_key_hash(key)) for offset, record in sorted(records.items())
                       for key in index_keys(record, tags=tags_indexed)]
