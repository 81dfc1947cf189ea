"""Sans-IO decoders and encoders of the auto-switch HA stream (controller mode), one per direction.

Like :mod:`rocketmq_spec.codec.ha` the caller owns the socket and feeds whatever it reads. Each unit opens
with the sender's connection state, which says how long the unit's header is, so a decoder reads four
bytes, judges the state and only then waits for the rest. A master's unit is judged as soon as its header
is in: a state the slave is not in (RMQ-HA2-UNIT), an epoch body that is not whole entries, a block that
does not start at the slave's end or goes back in epochs, and the stream is rejected before its body is
waited for. Layouts come from :mod:`rocketmq_spec.spec.ha_autoswitch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from construct import Struct

from rocketmq_spec.codec.ha import SLAVE_READ_BUFFER, ClosableDecoder, StreamRejected
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha_autoswitch import (
    EPOCH_ENTRY_SIZE,
    FLAG_SET,
    MASTER_HANDSHAKE_SIZE,
    MASTER_TRANSFER_SIZE,
    MAX_HANDSHAKE_ENTRIES,
    RMQ_HA2_MASTER_HANDSHAKE,
    RMQ_HA2_REPORT,
    RMQ_HA2_SLAVE_EPOCH,
    RMQ_HA2_TRANSFER,
    RMQ_HA2_UNIT,
    SLAVE_HANDSHAKE_SIZE,
    SLAVE_REPORT_SIZE,
    EpochEntryFrame,
    HAConnectionState,
    MasterHandshake,
    MasterTransferHeader,
    SlaveHandshake,
    SlaveReport,
)

_STATE_SIZE = 4
"""The int32 state ordinal every unit opens with."""


def encode_slave_handshake(broker_id: int, *, sync_from_last_file: bool = False,
                           async_learner: bool = False) -> bytes:
    return SlaveHandshake.build({"state": HAConnectionState.HANDSHAKE,
                                "sync_from_last_file": int(sync_from_last_file),
                                 "async_learner": int(async_learner), "slave_broker_id": broker_id})


def encode_slave_report(offset: int) -> bytes:
    return SlaveReport.build({"state": HAConnectionState.TRANSFER, "slave_max_offset": offset})


def encode_master_handshake(entries: Sequence[tuple[int, int]], max_offset: int) -> bytes:
    """The master's answer: header and its ``(epoch, start offset)`` entries oldest first."""
    last_epoch = entries[-1][0] if entries else -1
    header = MasterHandshake.build({"state": HAConnectionState.HANDSHAKE,
                                   "body_size": len(entries) * EPOCH_ENTRY_SIZE,
                                    "master_max_offset": max_offset, "last_epoch": last_epoch})
    return header + b"".join(EpochEntryFrame.build({"epoch": e, "start_offset": s}) for e, s in entries)


def encode_transfer(offset: int, epoch: int, epoch_start_offset: int, confirm_offset: int,
                    data: bytes = b"") -> bytes:
    """One transfer block; an empty body is a heartbeat."""
    return MasterTransferHeader.build({"state": HAConnectionState.TRANSFER, "body_size": len(data),
                                      "offset": offset,
                                       "epoch": epoch, "epoch_start_offset": epoch_start_offset,
                                       "confirm_offset": confirm_offset}) + data


@dataclass(frozen=True)
class SlaveHandshakeReceived:
    broker_id: int
    sync_from_last_file: bool
    async_learner: bool


@dataclass(frozen=True)
class SlaveReported:
    offset: int


@dataclass(frozen=True)
class MasterHandshakeReceived:
    max_offset: int
    last_epoch: int
    entries: tuple[tuple[int, int], ...]
    """``(epoch, start offset)`` oldest first."""


@dataclass(frozen=True)
class TransferReceived:
    offset: int
    epoch: int
    epoch_start_offset: int
    confirm_offset: int
    data: bytes

    @property
    def is_heartbeat(self) -> bool:
        return not self.data


def _state(buffer: bytearray) -> int:
    return int.from_bytes(buffer[:_STATE_SIZE], "big", signed=True)


class SlaveStreamDecoder(ClosableDecoder):
    """Master side: a slave's handshakes and offset reports. Java's master reads either at any time; a
    state other than HANDSHAKE or TRANSFER closes the connection (``HAServerReader`` returns false)."""

    _UNITS: ClassVar[dict[int, tuple[int, Struct]]] = {
        HAConnectionState.HANDSHAKE: (SLAVE_HANDSHAKE_SIZE, SlaveHandshake),
        HAConnectionState.TRANSFER: (SLAVE_REPORT_SIZE, SlaveReport),
    }

    def receive_data(self, data: bytes) -> list[SlaveHandshakeReceived | SlaveReported | StreamRejected]:
        self._accept(data)
        events: list[SlaveHandshakeReceived | SlaveReported | StreamRejected] = []
        while len(self._buffer) >= _STATE_SIZE:
            unit = self._UNITS.get(_state(self._buffer))
            if unit is None:
                events.append(self._reject(HAStreamError(
                    "slave unit opens with an unknown state", expected="1 HANDSHAKE or 2 TRANSFER",
                    seen=_state(self._buffer), clause=RMQ_HA2_UNIT.id)))
                return events
            size, schema = unit
            if len(self._buffer) < size:
                break
            parsed = schema.parse(bytes(self._buffer[:size]))
            del self._buffer[:size]
            if schema is SlaveHandshake:
                events.append(SlaveHandshakeReceived(parsed.slave_broker_id,
                              parsed.sync_from_last_file == FLAG_SET,
                                                     parsed.async_learner == FLAG_SET))
            elif parsed.slave_max_offset < 0:
                events.append(self._reject(HAStreamError(
                    "negative slave offset report", expected=">= 0", seen=parsed.slave_max_offset,
                    clause=RMQ_HA2_REPORT.id)))
                return events
            else:
                events.append(SlaveReported(parsed.slave_max_offset))
        return events


class MasterStreamDecoder(ClosableDecoder):
    """Slave side: the master's handshake answer, then transfer blocks.

    The slave is in HANDSHAKE until the answer arrives and in TRANSFER after it (Java changes state once
    it has truncated); a unit of the other state ends the stream. ``expected_offset`` is the slave's
    CommitLog end after truncation (None: an empty slave, which takes the first block's offset); blocks
    must follow one another and never go back in epoch.
    """

    def __init__(self, expected_offset: int | None = None,
                 max_body: int = SLAVE_READ_BUFFER - MASTER_TRANSFER_SIZE):
        super().__init__()
        self.state = HAConnectionState.HANDSHAKE
        self.expected_offset = expected_offset
        self.epoch: int | None = None
        self.max_body = max_body

    def receive_data(self, data: bytes) -> list[MasterHandshakeReceived | TransferReceived | StreamRejected]:
        self._accept(data)
        events: list[MasterHandshakeReceived | TransferReceived | StreamRejected] = []
        while len(self._buffer) >= _STATE_SIZE:
            state = _state(self._buffer)
            if state != self.state:
                events.append(self._reject(HAStreamError(
                    "master unit in another state than the slave's", expected=int(self.state), seen=state,
                    clause=RMQ_HA2_UNIT.id)))
                return events
            shaking = state == HAConnectionState.HANDSHAKE
            size, schema = (MASTER_HANDSHAKE_SIZE, MasterHandshake) if shaking else \
                (MASTER_TRANSFER_SIZE, MasterTransferHeader)
            if len(self._buffer) < size:
                break
            header = schema.parse(bytes(self._buffer[:size]))
            problem = self._judge_handshake(header) if shaking else self._judge_block(header)
            if problem is not None:
                events.append(self._reject(problem))
                return events
            end = size + header.body_size
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[size:end])
            del self._buffer[:end]
            events.append(self._handshake(header,
                          body) if schema is MasterHandshake else self._block(header, body))
        return events

    def _judge_handshake(self, header: Any) -> HAStreamError | None:
        size = header.body_size
        if size < 0 or size % EPOCH_ENTRY_SIZE or size > MAX_HANDSHAKE_ENTRIES * EPOCH_ENTRY_SIZE:
            return HAStreamError("handshake body is not whole epoch entries",
                                 expected=f"a multiple of {EPOCH_ENTRY_SIZE} up to "
                                          f"{MAX_HANDSHAKE_ENTRIES * EPOCH_ENTRY_SIZE}",
                                 seen=size, clause=RMQ_HA2_MASTER_HANDSHAKE.id)
        return None

    def _handshake(self, header: Any, body: bytes) -> MasterHandshakeReceived:
        entries = tuple((entry.epoch, entry.start_offset) for entry in
                        (EpochEntryFrame.parse(body[i:i + EPOCH_ENTRY_SIZE]) for i in range(0, len(body),
                         EPOCH_ENTRY_SIZE)))
        self.state = HAConnectionState.TRANSFER
        return MasterHandshakeReceived(header.master_max_offset, header.last_epoch, entries)

    def _judge_block(self, header: Any) -> HAStreamError | None:
        size, offset, epoch = header.body_size, header.offset, header.epoch
        if size < 0 or size > self.max_body:
            return HAStreamError("transfer block body size out of range", expected=f"0..{self.max_body}",
                                 seen=size,
                                 clause=RMQ_HA2_TRANSFER.id)
        if self.expected_offset is not None and offset != self.expected_offset:
            return HAStreamError("transfer block not at the slave's CommitLog end",
                                 expected=self.expected_offset,
                                 seen=offset, clause=RMQ_HA2_SLAVE_EPOCH.id)
        if self.epoch is not None and epoch < self.epoch:
            return HAStreamError("transfer block of an older epoch", expected=f">= {self.epoch}", seen=epoch,
                                 clause=RMQ_HA2_TRANSFER.id)
        return None

    def _block(self, header: Any, body: bytes) -> TransferReceived:
        block = TransferReceived(header.offset, header.epoch,
                                 header.epoch_start_offset, header.confirm_offset, body)
        self.expected_offset = block.offset + len(body)
        self.epoch = block.epoch
        return block


__all__ = [
    "MasterHandshakeReceived",
    "MasterStreamDecoder",
    "SlaveHandshakeReceived",
    "SlaveReported",
    "SlaveStreamDecoder",
    "TransferReceived",
    "encode_master_handshake",
    "encode_slave_handshake",
    "encode_slave_report",
    "encode_transfer",
]
