"""The checkout as the tests see it, and what of the golden data's origin is deliberately not copied.

Where the golden data is lives in ``rocketmq_spec.spec.golden``. Tests read it in place (it is read-only) and
extract the store tarball into a temporary directory once per session; ``tests/test_golden_copy.py`` fails
when the in-project copy and the origin ever differ. """

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = frozenset({
    # per-session copies of what frames/INDEX.json already lists, and the send logs of the capture run:
    # no test reads them
    "java-4.9.8/frames/json/INDEX.json",
    "java-4.9.8/frames/rocketmq/INDEX.json",
    "java-4.9.8/frames/json/GOLDEN_RUN_MANIFEST.json",
    "java-4.9.8/frames/rocketmq/GOLDEN_RUN_MANIFEST.json",
})
"""Files of the origin deliberately not copied into the project (paths relative to the golden root)."""
