"""rocketmq-rust 1.0.0 through the whole remoting suite, judged by its profile: every verdict must be the
one in the committed report (``docs/results/rocketmq-rust-1.0.0``), whose FAILs are the defects
``docs/rocketmq-rust.md`` reproduces. A changed verdict is either a change of the suite, to be
judged again against rocketmq-rust and Apache RocketMQ, or a changed target.

Slow, and skipped where rocketmq-rust 1.0.0 is not installed (``rmq-rust install 1.0.0``, about an hour).
"""

from __future__ import annotations

import pytest

from rocketmq_spec.conformance import results
from rocketmq_spec.rocketmq_rust.pytest_plugin import missing
from rocketmq_spec.rocketmq_rust.releases import release

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("target", results.OTHER_TARGETS)
def test_every_verdict_is_the_committed_one(target: str) -> None:
    if reason := missing(release(target)):
        pytest.skip(reason)
    assert results.check([target]) == 0
