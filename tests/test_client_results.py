"""The client columns of ``python -m rocketmq_spec.conformance.results``: ``client:NAME`` and ``clients``
name registry drivers, an unknown one is refused, ``check`` hands client columns to the client comparison
and broker targets to the broker one, and the clients table lists every non-PASS case with its clause."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from rocketmq_spec.conformance import client_results, results
from rocketmq_spec.conformance.report.matrix import Report


def test_client_columns_name_registry_drivers() -> None:
    assert client_results.drivers(["clients"]) == list(client_results.CLIENTS_CHECKED)
    assert client_results.drivers(["client:java-4.9.7"]) == ["java-4.9.7"]
    assert client_results.unknown(["client:java-4.9.7", "client:no-such"]) == ["client:no-such"]
    assert set(client_results.TIMING_SENSITIVE) <= set(name.removeprefix("client:")
                                                       for name in client_results.known())


def test_check_splits_client_columns_from_broker_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def checked(what: str, code: int) -> Callable[[Sequence[str], Path], int]:
        def check(names: Sequence[str], keep: Path) -> int:
            seen[what] = (names, keep)
            return code
        return check

    monkeypatch.setattr(client_results, "check", checked("clients", 1))
    monkeypatch.setattr(results, "check", checked("targets", 0))
    assert results.main(["check", "client:java-4.9.7", "embedded", "--keep", "kept"]) == 1
    assert seen == {"clients": (["client:java-4.9.7"], Path("kept").resolve()),
                    "targets": (["embedded"], Path("kept").resolve())}
    with pytest.raises(SystemExit):
        results.main(["check", "client:no-such"])


def test_the_table_lists_counts_and_each_non_pass_case(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = {"producer::oneway": {"case": "producer::oneway", "clause": "RMQ-CLIENT-ONEWAY-SEND",
                                  "verdict": "FAIL", "message": "flag 0 | not oneway"},
             "frames::opaque": {"case": "frames::opaque", "clause": "RMQ-CLIENT-OPAQUE", "verdict": "PASS"}}
    report = Report("java-4.9.7", "docs/results/clients/java-4.9.7/index.json",
                    {"totals": {"PASS": 1, "FAIL": 1}}, cases)
    monkeypatch.setattr(client_results, "committed", lambda: [report])
    table = client_results.table()
    assert "| `java-4.9.7` | yes | 2 | 1 | 1 |" in table
    row = "| `java-4.9.7` | `producer::oneway` | RMQ-CLIENT-ONEWAY-SEND | FAIL | flag 0 \\| not oneway |"
    assert row in table
    assert "frames::opaque" not in table
