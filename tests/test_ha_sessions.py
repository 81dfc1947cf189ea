"""The sans-IO cores of both HA sides, driven with bytes and a clock, over real stores in tmp_path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketmq_spec.codec.ha import BlockDecoder, BlockReceived, encode_block, encode_report
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.reference_broker.ha.master import SlaveSession
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.ha.slave import HAClient, ReplicaSession
from rocketmq_spec.reference_broker.store import MessageStore, StoreConfig
from rocketmq_spec.reference_broker.store.message import InnerMessage
from rocketmq_spec.spec.ha import RMQ_HA_REPORT_AHEAD

FILE = 4096
SETTINGS = HASettings(heartbeat_interval=5.0, housekeeping_interval=20.0, transfer_batch_size=1000,
                      reconnect_interval=5.0)


def _store(root: Path) -> MessageStore:
    return MessageStore(StoreConfig(root, mapped_file_size_commit_log=FILE,
                                    mapped_file_size_consume_queue=20 * 100, max_hash_slot_num=100,
                                    max_index_num=400)).open()


def _fill(store: MessageStore, count: int) -> None:
    for i in range(count):
        store.put_message(InnerMessage("T", i % 2, bytes([i]) * 300, {"KEYS": f"k{i}"}, 1_700_000_000_000,
                                       HostPort("127.0.0.1", 1)))


def _blocks(data: bytes) -> list[BlockReceived]:
    return [e for e in BlockDecoder(None).receive_data(data) if isinstance(e, BlockReceived)]


def test_master_session_rules(tmp_path: Path) -> None:
    master = _store(tmp_path / "m")
    try:
        _fill(master, 30)  # about 11 KiB: three files
        session = SlaveSession(master, SETTINGS, now=0.0)
        assert session.next_write(1.0) is None  # nothing before the first report
        assert session.received(encode_report(0)[:5], 1.0) is None and session.request_offset is None
        assert session.received(encode_report(0)[5:], 1.0) is None
        (first,) = _blocks(session.next_write(1.0) or b"")
        end = master.max_phy_offset
        assert first.offset == end - end % FILE and len(first.data) <= SETTINGS.transfer_batch_size
        while (block := session.next_write(1.0)) is not None:
            (sent, *_) = _blocks(block)
            assert session.next_offset is not None and sent.offset == session.next_offset - len(sent.data)
        assert session.next_offset == end
        assert session.next_write(5.5) is None and session.next_write(6.1) == encode_block(end)  # heartbeat
        assert session.received(encode_report(10) + encode_report(end), 7.0) is None  # the last unit counts
        assert master.replicas.acked == end
        error = session.received(encode_report(end + 1), 8.0)
        assert error is not None and error.clause == RMQ_HA_REPORT_AHEAD.id
        assert not session.expired(27.9) and session.expired(28.1)
    finally:
        master.close()


def test_replica_session_appends_split_records_and_reports(tmp_path: Path) -> None:
    master, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    try:
        _fill(master, 5)
        log = master.commitlog.data_from(0, FILE) or b""
        session = ReplicaSession(slave, now=0.0)
        assert session.first_report(0.0) == encode_report(0)
        cut = 500  # inside the second record
        assert session.received(encode_block(0, log[:cut])[:20], 1.0) is None
        assert session.received(encode_block(0, log[:cut])[20:], 1.0) == encode_report(cut)
        assert slave.max_offset("T", 0) == 1 and slave.max_offset("T", 1) == 0  # the split record waits
        assert session.received(encode_block(cut, log[cut:]), 2.0) == encode_report(len(log))
        assert (slave.max_offset("T", 0), slave.max_offset("T", 1)) == (3, 2)
        assert slave.commitlog.data_from(0, FILE) == log
        assert session.heartbeat(6.0, 5.0) is None and session.heartbeat(7.1, 5.0) == encode_report(len(log))
    finally:
        master.close()
        slave.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_report_to_a_closed_master_ends_the_connection(loop: str, tmp_path: Path) -> None:
    """A report written after the master's side closed ends the connection with the ConnectionResetError
    the client's loop expects, on either event loop (uvloop's transport raises RuntimeError instead)."""
    if loop == "uvloop":
        pytest.importorskip("uvloop")

    async def scenario() -> None:
        server = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.transport.abort()
        await asyncio.sleep(0.05)  # the transport is closed once the loop ran its close callbacks
        client = HAClient(_store(tmp_path), SETTINGS, f"127.0.0.1:{port}")
        try:
            with pytest.raises(ConnectionResetError):
                await client._send(writer, encode_report(0))
        finally:
            client.store.close()
            server.close()
            await server.wait_closed()

    event_loop.run(scenario(), loop)
