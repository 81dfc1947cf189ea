"""The delivery audit: lost, duplicated and reordered messages are told apart."""

from __future__ import annotations

from rocketmq_spec.spark.audit import Arrived, Sent, audit

SENT = [Sent(f"k{n}", "q0", n) for n in range(4)] + [Sent(f"m{n}", "q1", n) for n in range(3)]


def arrivals(keys: list[str], queue: str = "d0") -> list[Arrived]:
    return [Arrived(key, queue, offset) for offset, key in enumerate(keys)]


def test_exact_copy_is_clean() -> None:
    report = audit(SENT, arrivals(["k0", "m0", "k1", "k2", "m1", "k3", "m2"]))
    assert report.ok and report.duplicates == 0
    assert report.summary() == "sent 7, arrived 7, lost 0, duplicated 0, reordered 0, unexpected 0"


def test_replayed_batch_counts_duplicates_but_not_reordering() -> None:
    report = audit(SENT, arrivals(["k0", "k1", "k2", "k1", "k2", "k3", "m0", "m1", "m2"]))
    assert report.ok
    assert report.duplicated == {"k1": 1, "k2": 1}
    assert report.reordered == []


def test_lost_reordered_and_unexpected_fail() -> None:
    report = audit(SENT, arrivals(["k0", "k2", "k1", "m0", "m2", "x"]))
    assert not report.ok
    assert report.lost == ["k3", "m1"]
    assert report.reordered == ["k1"]
    assert report.unexpected == ["x"]


def test_order_is_judged_per_source_queue_and_destination_queue() -> None:
    """Interleaving two source queues, or spreading one over two destinations, is not reordering."""
    spread = arrivals(["k0", "k2"], "d0") + arrivals(["k1", "k3"], "d1") + arrivals(["m2", "m0", "m1"], "d2")
    report = audit(SENT, spread)
    assert report.reordered == ["m0", "m1"]
    assert report.lost == [] and report.duplicates == 0
