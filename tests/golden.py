"""Locating the golden data: the bytes real RocketMQ implementations wrote.

The project carries its own copy in ``tests/data/golden`` (same layout and README as the origin,
``../shared/golden``), so a bare clone can run every test. ``RMQ_GOLDEN_DIR`` points the tests at another
copy. ``tests/test_golden_copy.py`` fails when the in-project copy and the origin ever differ.

Tests read the golden data in place (it is read-only) and extract the store tarball into a temporary
directory once per session.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
IN_PROJECT_GOLDEN = PROJECT_ROOT / "tests" / "data" / "golden"
ORIGIN_GOLDEN = PROJECT_ROOT.parent / "shared" / "golden"
LEFT_OUT = frozenset({
    # per-session copies of what frames/INDEX.json already lists, and the send logs of the capture run:
    # no test reads them
    "java-4.9.8/frames/json/INDEX.json",
    "java-4.9.8/frames/rocketmq/INDEX.json",
    "java-4.9.8/frames/json/GOLDEN_RUN_MANIFEST.json",
    "java-4.9.8/frames/rocketmq/GOLDEN_RUN_MANIFEST.json",
})
"""Files of the origin deliberately not copied into the project (paths relative to the golden root)."""

GOLDEN = Path(os.environ.get("RMQ_GOLDEN_DIR", IN_PROJECT_GOLDEN))
JAVA_FRAMES = GOLDEN / "java-4.9.8" / "frames"
CLIENT_FRAMES = GOLDEN / "clients"
STORE_TARBALL = GOLDEN / "java-4.9.8" / "store-4x.tar.gz"
STORE_MANIFEST = GOLDEN / "java-4.9.8" / "store-4x.MANIFEST.json"
