"""Records held back from the consume queues until the confirm offset passes them (RMQ-HA2-CONFIRM-READ).

Java's reput thread dispatches the CommitLog to the consume queues only up to the confirm offset, so in
controller mode with ``allAckInSyncStateSet`` a message no consumer may read yet is one not every
SyncStateSet member holds. The reference store dispatches as it appends; in controller mode it hands the
records to this gate instead, which dispatches those ending at or before ``limit(max offset)`` in CommitLog
order and keeps the rest until :meth:`release` is called again (an acknowledgement, a new set, a transfer
header). Without a limit every record passes at once, as in the classic store. Callers hold the store's put
lock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from rocketmq_spec.codec.store.record import MessageRecord


class ConfirmGate:
    def __init__(self) -> None:
        self.limit: Callable[[int], int] | None = None
        """Given the CommitLog's end, the confirm offset; None dispatches everything (readUnCommitted)."""
        self._held: deque[MessageRecord] = deque()

    @property
    def held(self) -> int:
        return len(self._held)

    def written(self, records: Iterable[MessageRecord], end: int,
                dispatch: Callable[[MessageRecord], None]) -> None:
        """Records just appended (``end``: the CommitLog's end after them)."""
        if self.limit is None and not self._held:
            for record in records:
                dispatch(record)
            return
        self._held.extend(records)
        self.release(end, dispatch)

    def release(self, end: int, dispatch: Callable[[MessageRecord], None]) -> None:
        """Dispatch the held records the confirm offset now covers."""
        limit = end if self.limit is None else self.limit(end)
        held = self._held
        while held and held[0].physical_offset + held[0].total_size <= limit:
            dispatch(held.popleft())

    def truncate(self, end: int) -> None:
        """The CommitLog was cut at ``end``: what was held beyond it is gone."""
        self._held = deque(record for record in self._held if record.physical_offset < end)
