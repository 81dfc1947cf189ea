"""The seed corpus: request frames that real RocketMQ clients, brokers and tools sent.

Mutating real frames reaches deeper into a target than random bytes do, because most of each mutant
still decodes and is dispatched to a handler. Frames come from the golden data's indexes; the index says
which listener (name server or broker) each request was sent to. Client captures do not record the
listener, so their frames go wherever the Java capture sent frames of the same code.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass
from pathlib import Path

GOLDEN_ENV = "RMQ_GOLDEN_DIR"
_CHECKOUT = Path(__file__).resolve().parent.parent
GOLDEN_CANDIDATES = (_CHECKOUT / "tests" / "data" / "golden", _CHECKOUT.parent / "shared" / "golden")
"""Where a checkout keeps the golden data (its own copy first, then the origin beside it)."""

_JAVA_FRAMES = Path("java-4.9.8") / "frames"
_CLIENT_FRAMES = Path("clients")
_INDEX = "INDEX.json"


class Listener(enum.Enum):
    NAMESRV = "namesrv"
    BROKER = "broker"


@dataclass(frozen=True)
class SeedFrame:
    data: bytes
    """The whole frame, length word included."""
    listener: Listener
    code: int
    origin: str
    """Path of the frame file relative to the golden directory, for reports."""


def golden_dir() -> Path:
    """``$RMQ_GOLDEN_DIR``, else the first candidate that exists (the first one when none does)."""
    if GOLDEN_ENV in os.environ:
        return Path(os.environ[GOLDEN_ENV])
    return next((path for path in GOLDEN_CANDIDATES if path.is_dir()), GOLDEN_CANDIDATES[0])


def load_seeds(root: Path | None = None) -> list[SeedFrame]:
    """Every client-to-server frame of the golden data (Java capture first, then client captures)."""
    root = root or golden_dir()
    java_dir = root / _JAVA_FRAMES
    java_index = json.loads((java_dir / _INDEX).read_text())
    seeds = [
        SeedFrame((java_dir / entry["file"]).read_bytes(), Listener(entry["listener"]), entry["code"],
                  str(Path(_JAVA_FRAMES) / entry["file"]))
        for entry in java_index["frames"] if entry["direction"] == "c2s"
    ]
    namesrv_codes = {seed.code for seed in seeds if seed.listener is Listener.NAMESRV}
    for index in sorted((root / _CLIENT_FRAMES).glob(f"*/*/{_INDEX}")):
        for entry in json.loads(index.read_text()):
            listener = Listener.NAMESRV if entry["code"] in namesrv_codes else Listener.BROKER
            path = index.parent / entry["file"]
            seeds.append(SeedFrame(path.read_bytes(), listener, entry["code"], str(path.relative_to(root))))
    return seeds
