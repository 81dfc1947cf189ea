"""The checked-in protocol document is what the schemas render today."""

from pathlib import Path

from rocketmq_spec.spec import document
from rocketmq_spec.spec.clauses import all_clauses


def test_protocol_document_is_current() -> None:
    assert document.DOCUMENT_PATH.read_text(encoding="utf-8") == document.render(), (
        "docs/PROTOCOL.md is stale: run rmq-spec-doc")


def test_every_clause_appears_in_the_document() -> None:
    text = document.render()
    missing = [c.id for c in all_clauses() if f"`{c.id}`" not in text]
    assert not missing


def test_check_mode_reports_a_stale_document(tmp_path: Path) -> None:
    stale = tmp_path / "PROTOCOL.md"
    stale.write_text("old\n", encoding="utf-8")
    assert document.main(["--check", "--output", str(stale)]) == 1
    assert document.main(["--output", str(stale)]) == 0
    assert document.main(["--check", "--output", str(stale)]) == 0
