"""Properties of the HA stream decoders over generated streams: chunking never matters, the codec agrees
with the schemas, and every broken stream is refused after exactly its good prefix."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given

from rocketmq_spec.codec.ha import BlockDecoder, BlockReceived, OffsetReported, ReportDecoder, StreamRejected
from rocketmq_spec.fuzz.strategies.ha import block_stream, broken_block_stream, chunked, cuts, report_stream
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.ha import HEADER_SIZE, TransferHeader


@given(block_stream(), cuts())
def test_blocks_survive_any_chunking(stream: tuple[list[BlockReceived], bytes], points: list[int]) -> None:
    expected, data = stream
    decoder = BlockDecoder(expected[0].offset if expected else None)
    events = [e for chunk in chunked(data, points) for e in decoder.receive_data(chunk)]
    assert events == expected and decoder.buffered == 0


@given(block_stream())
def test_block_headers_agree_with_the_schema(stream: tuple[list[BlockReceived], bytes]) -> None:
    blocks, data = stream
    position = 0
    for block in blocks:
        header = TransferHeader.parse(data[position:position + HEADER_SIZE])
        assert (header.master_phy_offset, header.body_size) == (block.offset, len(block.data))
        position += HEADER_SIZE + len(block.data)


@given(report_stream(), cuts())
def test_reports_survive_any_chunking(data: bytes, points: list[int]) -> None:
    decoder = ReportDecoder()
    events = [e for chunk in chunked(data, points) for e in decoder.receive_data(chunk)]
    assert all(isinstance(e, OffsetReported) for e in events) and len(events) == len(data) // 8


@given(broken_block_stream(), cuts())
def test_a_broken_stream_is_refused_after_its_good_blocks(case: tuple[int, int, bytes],
                                                          points: list[int]) -> None:
    start, good, data = case
    decoder = BlockDecoder(start)
    events = [e for chunk in chunked(data, points) if decoder.error is None
              for e in decoder.receive_data(chunk)]
    assert [type(e) for e in events] == [BlockReceived] * good + [StreamRejected]


def test_live_ha_fuzzer_finds_nothing_on_the_reference_master(tmp_path: Path) -> None:
    from rocketmq_spec.fuzz.cli import main

    with SyncEmbeddedRocketMQ(tmp_path / "store") as running:
        ha = running.broker_ha_addr
        out = tmp_path / "out"
        code = main(["--namesrv", running.namesrv_addr, "--broker", running.broker_addr, "--ha", ha,
                     "--seconds", "2", "--out", str(out), "--seed", "7"])
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0 and summary["rounds"] > 3 and summary["findings"] == []

