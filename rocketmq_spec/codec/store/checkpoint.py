"""Reading and writing the checkpoint file (flush timestamps that bound crash recovery, and 5.x's offsets)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.spec.checkpoint import CHECKPOINT_FILE_SIZE, RMQ_CKPT_LAYOUT, Checkpoint5x, min_timestamp
from rocketmq_spec.spec.errors import StoreError


@dataclass(frozen=True)
class CheckpointData:
    physic_msg_timestamp: int
    logics_msg_timestamp: int
    index_msg_timestamp: int
    master_flushed_offset: int = 0
    """5.0.0+ (offset 24); 0 in a 4.x file."""
    confirm_phy_offset: int = 0
    """5.1.1+ (offset 32): the confirm offset a controller-mode broker starts from (RMQ-CKPT-CONFIRM)."""

    @property
    def min_timestamp(self) -> int:
        return min_timestamp(self.physic_msg_timestamp, self.logics_msg_timestamp)

    @property
    def unflushed(self) -> bool:
        """Never flushed (RMQ-CKPT-ZERO): it bounds no recovery, as a young or early-killed store has it."""
        return self.physic_msg_timestamp == 0 or self.logics_msg_timestamp == 0


def read_checkpoint(path: Path | str) -> CheckpointData:
    """Every release's file is one page: a 4.x file holds zeros where 5.x keeps its offsets."""
    data = Path(path).read_bytes()
    if len(data) < Checkpoint5x.sizeof():
        raise StoreError("checkpoint file too short", expected=CHECKPOINT_FILE_SIZE, seen=len(data),
                         clause=RMQ_CKPT_LAYOUT.id)
    parsed = Checkpoint5x.parse(data)
    return CheckpointData(parsed.physic_msg_timestamp, parsed.logics_msg_timestamp,
                          parsed.index_msg_timestamp, parsed.master_flushed_offset, parsed.confirm_phy_offset)


def encode_checkpoint(checkpoint: CheckpointData) -> bytes:
    fields = Checkpoint5x.build(vars(checkpoint))
    return fields + bytes(CHECKPOINT_FILE_SIZE - len(fields))


def write_checkpoint(path: Path | str, checkpoint: CheckpointData) -> None:
    Path(path).write_bytes(encode_checkpoint(checkpoint))
