"""Whether records missing from the consume queues or the index are a dispatch lag or a hole, and entries
past the CommitLog's data end.

A broker builds its consume queues and index from the CommitLog asynchronously and in CommitLog order
(``ReputMessageService``), so a running or killed broker's store may end with records that have no entry
yet; recovery dispatches them again (RMQ-CQ-DISPATCH-LAG). Such records are a suffix of the CommitLog:
every one lies after the last record that was dispatched. A missing record before a dispatched one is a
hole, whatever the state of the broker. The other way round, a copy taken while the broker runs may hold
queue or index entries past its CommitLog's data end, copied after the CommitLog was.
"""

from __future__ import annotations

from collections.abc import Iterable

from rocketmq_spec.spec.consumequeue import RMQ_CQ_DISPATCH_LAG


def is_dispatch_lag(missing: Iterable[int], dispatched: Iterable[int]) -> bool:
    """Whether every offset in ``missing`` lies after every offset in ``dispatched`` (record offsets)."""
    first_missing = min(missing, default=None)
    return first_missing is None or first_missing > max(dispatched, default=-1)


def lag_notice(what: str, missing: list[int]) -> tuple[str, str]:
    """(clause id, text) of a dispatch lag of ``missing`` record offsets in ``what`` (queues, index)."""
    return (RMQ_CQ_DISPATCH_LAG.id, f"{len(missing)} record(s) at the end of the CommitLog not yet in the "
                                    f"{what} (from offset {min(missing)}): dispatch was behind")


def ahead_notice(what: str, offsets: list[int]) -> tuple[str, str]:
    """(clause id, text) of ``what`` entries pointing past the CommitLog's data end."""
    return (RMQ_CQ_DISPATCH_LAG.id, f"{len(offsets)} {what} entries past the CommitLog data end (from "
                                    f"{min(offsets)}): copied after the CommitLog")
