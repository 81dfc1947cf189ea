"""Where the golden data is: the bytes real Apache RocketMQ wrote, which this specification is held to.

A checkout carries its own copy in ``tests/data/golden`` (same layout and README as the origin,
``../shared/golden``), so a bare clone has it; ``RMQ_GOLDEN_DIR`` points at another copy. The data is
read in place (it is read-only). The fuzzers take their seeds from it, the benchmarks their frames and
store, the tests their expectations, all through this one lookup.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_ENV = "RMQ_GOLDEN_DIR"
_CHECKOUT = Path(__file__).resolve().parents[2]
IN_PROJECT_GOLDEN = _CHECKOUT / "tests" / "data" / "golden"
ORIGIN_GOLDEN = _CHECKOUT.parent / "shared" / "golden"

JAVA_FRAMES_DIR = Path("java-4.9.8") / "frames"
"""Frames the Java 4.9.8 capture recorded, with their ``INDEX.json`` (relative to a golden root)."""
CLIENT_FRAMES_DIR = Path("clients")
"""Frames captured from client libraries, one ``INDEX.json`` per library and version."""
STORE_TARBALL_FILE = Path("java-4.9.8") / "store-4x.tar.gz"
STORE_MANIFEST_FILE = Path("java-4.9.8") / "store-4x.MANIFEST.json"


def golden_dir() -> Path:
    """``$RMQ_GOLDEN_DIR``, else the checkout's copy, else the origin beside it (the copy when neither
    exists)."""
    if GOLDEN_ENV in os.environ:
        return Path(os.environ[GOLDEN_ENV])
    return next((path for path in (IN_PROJECT_GOLDEN, ORIGIN_GOLDEN) if path.is_dir()), IN_PROJECT_GOLDEN)


GOLDEN = golden_dir()
JAVA_FRAMES = GOLDEN / JAVA_FRAMES_DIR
CLIENT_FRAMES = GOLDEN / CLIENT_FRAMES_DIR
STORE_TARBALL = GOLDEN / STORE_TARBALL_FILE
STORE_MANIFEST = GOLDEN / STORE_MANIFEST_FILE
