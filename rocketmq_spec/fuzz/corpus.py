"""The seed corpus: request frames that real RocketMQ clients, brokers and tools sent.

Mutating real frames reaches deeper into a target than random bytes do, because most of each mutant
still decodes and is dispatched to a handler. Frames come from the golden data's indexes; the index says
which listener (name server or broker) each request was sent to. Client captures do not record the
listener, so their frames go wherever the Java capture sent frames of the same code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.conformance.regression import Listener
from rocketmq_spec.spec.golden import CLIENT_FRAMES_DIR, JAVA_FRAMES_DIR, golden_dir

_INDEX = "INDEX.json"


@dataclass(frozen=True)
class SeedFrame:
    data: bytes
    """The whole frame, length word included."""
    listener: Listener
    code: int
    origin: str
    """Path of the frame file relative to the golden directory, for reports."""


def load_seeds(root: Path | None = None) -> list[SeedFrame]:
    """Every client-to-server frame of the golden data (Java capture first, then client captures)."""
    root = root or golden_dir()
    java_dir = root / JAVA_FRAMES_DIR
    java_index = json.loads((java_dir / _INDEX).read_text())
    seeds = [
        SeedFrame((java_dir / entry["file"]).read_bytes(), Listener(entry["listener"]), entry["code"],
                  str(JAVA_FRAMES_DIR / entry["file"]))
        for entry in java_index["frames"] if entry["direction"] == "c2s"
    ]
    namesrv_codes = {seed.code for seed in seeds if seed.listener is Listener.NAMESRV}
    for index in sorted((root / CLIENT_FRAMES_DIR).glob(f"*/*/{_INDEX}")):
        for entry in json.loads(index.read_text()):
            listener = Listener.NAMESRV if entry["code"] in namesrv_codes else Listener.BROKER
            path = index.parent / entry["file"]
            seeds.append(SeedFrame(path.read_bytes(), listener, entry["code"], str(path.relative_to(root))))
    return seeds
