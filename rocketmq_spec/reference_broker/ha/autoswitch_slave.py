"""A slave's side of the auto-switch HA stream (controller mode), sans I/O.

:class:`AutoSwitchReplicaSession` speaks in place of the classic :class:`~.slave.ReplicaSession` inside
the same :class:`~.slave.HAClient` edge: it opens with the handshake (RMQ-HA2-SLAVE-HANDSHAKE) rather
than a report, truncates its log to the consistent point with the master's epochs when the answer comes
(RMQ-HA2-TRUNCATE), then appends blocks, recording each new epoch in the epoch file (RMQ-HA2-SLAVE-EPOCH)
and reporting its end after each block and each heartbeat interval (RMQ-HA2-REPORT).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from rocketmq_spec.codec.ha import StreamRejected
from rocketmq_spec.codec.ha_autoswitch import (
    MasterHandshakeReceived,
    MasterStreamDecoder,
    TransferReceived,
    encode_slave_handshake,
    encode_slave_report,
)
from rocketmq_spec.reference_broker.store.epochs import EpochCache
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha_autoswitch import (
    RMQ_HA2_TRUNCATE,
    HAConnectionState,
    consistent_point,
    with_ends,
)

log = logging.getLogger(__name__)


class AutoSwitchReplicaSession:
    """One connection of a controller-mode slave to its master."""

    def __init__(self, store: MessageStore, epochs: EpochCache, broker_id: int, now: float, *,
                 sync_from_last_file: bool = False, async_learner: bool = False,
                 on_confirm: Callable[[int], None] = lambda offset: None) -> None:
        self.store = store
        self.epochs = epochs
        self.broker_id = broker_id
        self.sync_from_last_file = sync_from_last_file
        self.async_learner = async_learner
        self.decoder = MasterStreamDecoder()
        self.reported = 0
        self.received_epoch: int | None = None
        self.last_write = now
        self._on_confirm = on_confirm
        """Told min(each block's confirm offset, the log's end), heartbeats included (RMQ-HA2-SLAVE-EPOCH)."""

    def first_report(self, now: float) -> bytes:
        """The handshake: nothing is reported before the master's epochs are known."""
        self.last_write = now
        return encode_slave_handshake(self.broker_id, sync_from_last_file=self.sync_from_last_file,
                                      async_learner=self.async_learner)

    def received(self, data: bytes, now: float) -> bytes | None:
        """Handle the master's complete units in ``data``; returns the report to send, if any."""
        report = None
        for event in self.decoder.receive_data(data):
            if isinstance(event, StreamRejected):
                raise event.error
            if isinstance(event, MasterHandshakeReceived):
                self._truncate(event)
                report = self._report(now)  # the first report starts the transfer
            else:
                assert isinstance(event, TransferReceived)
                self._append(event)
                if self.store.max_phy_offset > self.reported:
                    report = self._report(now)
        return report

    def heartbeat(self, now: float, interval: float) -> bytes | None:
        if now - self.last_write <= interval or self.decoder.state is not HAConnectionState.TRANSFER:
            return None
        self.last_write = now
        return encode_slave_report(self.reported)

    def _truncate(self, answer: MasterHandshakeReceived) -> None:
        """RMQ-HA2-TRUNCATE (AutoSwitchHAClient.doTruncate): a slave with epochs cuts its log where its
        history and the master's last agree; one without keeps what it has."""
        end = self.store.max_phy_offset
        if self.epochs.entries:
            point = consistent_point(self.epochs.with_ends(end), with_ends(answer.entries, answer.max_offset))
            if point < 0:
                raise HAStreamError("no consistent point with the master's epochs",
                                    expected=f"an epoch of {self.epochs.entries} in the master's",
                                    seen=list(answer.entries), clause=RMQ_HA2_TRUNCATE.id)
            if point < end:
                log.info("truncating the CommitLog from %d to the consistent point %d", end, point)
                self.store.truncate_files(point)
                self.epochs.truncate_from_offset(point)
        end = self.store.max_phy_offset
        self.decoder.expected_offset = end if end else None

    def _append(self, block: TransferReceived) -> None:
        if block.epoch != self.received_epoch:
            self.received_epoch = block.epoch
            self.epochs.append(block.epoch, block.epoch_start_offset)
        if block.data:
            self.store.append_replica(block.offset, block.data)
        self._on_confirm(min(block.confirm_offset, self.store.max_phy_offset))

    def _report(self, now: float) -> bytes:
        self.reported = self.store.max_phy_offset
        self.last_write = now
        return encode_slave_report(self.reported)
