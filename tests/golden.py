"""Locating ``../shared/golden``: the bytes real RocketMQ implementations wrote.

Tests read the golden data in place (it is read-only) and extract the store tarball into a temporary
directory once per session.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(os.environ.get("RMQ_GOLDEN_DIR", PROJECT_ROOT.parent / "shared" / "golden"))
JAVA_FRAMES = GOLDEN / "java-4.9.8" / "frames"
CLIENT_FRAMES = GOLDEN / "clients"
STORE_TARBALL = GOLDEN / "java-4.9.8" / "store-4x.tar.gz"
STORE_MANIFEST = GOLDEN / "java-4.9.8" / "store-4x.MANIFEST.json"
