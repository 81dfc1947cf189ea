"""Keeping a reused Python worker's per-task garbage collection cheap.

PySpark's daemon runs a full ``gc.collect()`` in a reused worker after every task
(``pyspark/daemon.py``, when ``SPARK_REUSE_WORKER`` is set, Spark's default). A worker that has imported
PySpark, pyarrow, numpy and this project holds some 80,000 tracked objects, and walking them costs
20-35 ms a task: on a 256 MiB store read in 64 MiB splits that was about as much CPU as building the batches
(``benchmarks/spark_scan.py``), and four times that in 16 MiB splits. Those objects are the worker's
modules, which live as long as the worker does, so the first read in a reused worker moves them out of the
collector's generations (``gc.freeze``, meant for exactly such long-lived state): later collections walk
only what the tasks made. The first task itself imports more (pyarrow's IPC and compute modules, PySpark's
serializers: some 27,000 objects, still 15-20 ms a collection), so the second read freezes once more, when
the first task's garbage is gone. Reference counting still frees everything as before; only a cycle among
the objects alive at those two moments would never be collected, twice per worker.
"""

from __future__ import annotations

import gc
import os

REUSE_VARIABLE = "SPARK_REUSE_WORKER"
"""Set by Spark in a worker's environment when the worker serves several tasks (its daemon's switch)."""

SETTLING_READS = 2
"""Reads that freeze the objects alive at their start: the worker's imports, then the first task's."""

_settled = 0


def settle() -> bool:
    """At the start of each of a process's first :data:`SETTLING_READS` reads, freeze the objects alive
    now, only in a reused Spark worker (elsewhere, such as a test or the driver calling a reader directly,
    the process's collector is left alone). Returns whether this call froze them."""
    global _settled
    if _settled >= SETTLING_READS or not os.environ.get(REUSE_VARIABLE):
        return False
    gc.collect()
    gc.freeze()
    _settled += 1
    return True
