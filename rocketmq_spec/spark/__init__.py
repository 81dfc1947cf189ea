"""Store files and live brokers as Spark DataFrames, and the end-to-end Spark jobs the suite checks.

The Spark side reads stores only through ``rocketmq_spec.codec.store`` and talks to brokers only over the
wire, so a job that agrees with the single-process codec is evidence about the data, not about shared code
paths beyond the decoders themselves.
"""

from rocketmq_spec.extras import require

require("spark")
