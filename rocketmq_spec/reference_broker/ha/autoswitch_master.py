"""A controller-mode master's side of the auto-switch HA stream, one session per slave, sans I/O.

It answers the slave's handshake with the epoch file's entries and the log's end
(RMQ-HA2-MASTER-HANDSHAKE), starts the transfer at the slave's first report (RMQ-HA2-START) and sends
blocks that never cross an epoch's end, each header naming the epoch of its bytes and the confirm offset
(RMQ-HA2-TRANSFER); reports feed the SyncStateSet (:mod:`.sync_state_set`). The asyncio edge is
:class:`~.master.HAServer`, which drives this session as it drives the classic one.
"""

from __future__ import annotations

from rocketmq_spec.codec.ha import StreamRejected
from rocketmq_spec.codec.ha_autoswitch import (
    SlaveHandshakeReceived,
    SlaveReported,
    SlaveStreamDecoder,
    encode_master_handshake,
    encode_transfer,
)
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.ha.sync_state_set import SyncStateSet
from rocketmq_spec.reference_broker.store.epochs import EpochCache
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha_autoswitch import EpochEntry, HAConnectionState


class AutoSwitchSlaveSession:
    def __init__(self, store: MessageStore, epochs: EpochCache, members: SyncStateSet, settings: HASettings,
                 now: float) -> None:
        self.store = store
        self.epochs = epochs
        self.members = members
        self.settings = settings
        self.decoder = SlaveStreamDecoder()
        self.state = HAConnectionState.HANDSHAKE
        self.slave_id: int | None = None
        self.sync_from_last_file = False
        self.async_learner = False
        self.handshake_due = False
        self.request_offset: int | None = None
        self.next_offset: int | None = None
        self.last_read = now
        self.last_write = now

    def received(self, data: bytes, now: float) -> HAStreamError | None:
        self.last_read = now
        for event in self.decoder.receive_data(data):
            if isinstance(event, StreamRejected):
                return event.error
            if isinstance(event, SlaveHandshakeReceived):
                self.slave_id = event.broker_id
                self.sync_from_last_file = event.sync_from_last_file
                self.async_learner = event.async_learner
                self.handshake_due = True
                self.state = HAConnectionState.HANDSHAKE
            else:
                assert isinstance(event, SlaveReported)
                self._reported(event.offset, now)
        return None

    def _reported(self, offset: int, now: float) -> None:
        self.state = HAConnectionState.TRANSFER
        if self.request_offset is None:
            self.request_offset = offset
        self.store.replicas.ack(offset)
        if self.slave_id is not None:
            last = self.epochs.entries[-1] if self.epochs.entries else (0, 0)
            self.members.acked(self.slave_id, offset, self.store.max_phy_offset, last[1], now,
                               learner=self.async_learner)
            self.store.confirm_advanced()

    def closed(self) -> None:
        if self.slave_id is not None:
            self.members.gone(self.slave_id)
            self.store.confirm_advanced()

    def expired(self, now: float) -> bool:
        return now - self.last_read > self.settings.housekeeping_interval

    def idle_for(self, now: float) -> float:
        heartbeat = self.last_write + self.settings.heartbeat_interval - now
        housekeeping = self.last_read + self.settings.housekeeping_interval - now
        return max(0.001, min(heartbeat, housekeeping) + 0.001)

    def next_write(self, now: float) -> bytes | None:
        if self.handshake_due:
            self.handshake_due = False
            self.last_write = now
            return encode_master_handshake(self.epochs.entries, self.store.max_phy_offset)
        if self.state is not HAConnectionState.TRANSFER or self.request_offset is None:
            return None
        if self.next_offset is None:
            self.next_offset = self._start()
        entry = self._epoch_of(self.next_offset)
        if entry is None:
            return None
        limit = min(self.settings.transfer_batch_size, entry.end_offset - self.next_offset)
        data = self.store.commitlog.data_from(self.next_offset, limit) if limit > 0 else None
        if data is None and now - self.last_write <= self.settings.heartbeat_interval:
            return None
        block = encode_transfer(self.next_offset, entry.epoch, entry.start_offset,
                                self.members.confirm_offset(self.store.max_phy_offset), data or b"")
        self.next_offset += len(data or b"")
        self.last_write = now
        return block

    def _start(self) -> int:
        """RMQ-HA2-START: the slave's offset; for 0, the log's start or its last file's."""
        assert self.request_offset is not None
        if self.request_offset:
            return self.request_offset
        if self.sync_from_last_file:
            end = self.store.max_phy_offset
            return end - end % self.store.config.mapped_file_size_commit_log
        return self.store.commitlog.min_offset

    def _epoch_of(self, offset: int) -> EpochEntry | None:
        """The epoch whose range holds ``offset``; the last one is open-ended, as its end still grows."""
        entries = self.epochs.with_ends(self.store.max_phy_offset)
        for index, entry in enumerate(entries):
            last = index == len(entries) - 1
            if entry.start_offset <= offset and (last or offset < entry.end_offset):
                return EpochEntry(entry.epoch, entry.start_offset, 2 ** 63 - 1) if last else entry
        return None
