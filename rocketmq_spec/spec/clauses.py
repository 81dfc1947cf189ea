"""The clause registry: every requirement of the spec has a stable ID, a level and one sentence.

Clause IDs are what the conformance suite, the fuzzers and the Spark verification job report against, so they
never change meaning once published. A clause is declared in the module that holds the schema it constrains
(``RMQ-FRAME-*`` in ``rocketmq_spec.spec.frame``, ``RMQ-CL-*`` in ``rocketmq_spec.spec.commitlog`` ...), which
keeps the rule beside the data it governs. """

from __future__ import annotations

import enum
import importlib
import pkgutil
import sys
from dataclasses import dataclass, field


class Level(enum.Enum):
    """RFC 2119 requirement levels, as used by h2spec and Autobahn."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


@dataclass(frozen=True)
class Clause:
    id: str
    level: Level
    text: str
    source: str = ""
    """Where Apache RocketMQ implements the rule (a source path), or the golden data that shows it."""
    module: str = field(default="", compare=False)
    """The spec module that declared the clause, so the protocol document lists it beside its schema."""

    @property
    def area(self) -> str:
        """The second segment of the ID (``FRAME`` in ``RMQ-FRAME-LENGTH``): the document section."""
        return self.id.split("-")[1]


_REGISTRY: dict[str, Clause] = {}


def clause(id: str, level: Level, text: str, source: str = "") -> Clause:
    """Declare a clause. Declaring the same ID twice with different content is a programming error."""
    if not id.startswith("RMQ-") or id.count("-") < 2:
        raise ValueError(f"clause id must look like RMQ-AREA-NAME, got {id!r}")
    new = Clause(id, level, text, source, module=sys._getframe(1).f_globals.get("__name__", ""))
    old = _REGISTRY.setdefault(id, new)
    if old != new:
        raise ValueError(f"clause {id} declared twice with different content")
    return new


def get(id: str) -> Clause:
    """Look a clause up by ID after loading every spec module."""
    load_all()
    try:
        return _REGISTRY[id]
    except KeyError:
        raise KeyError(f"unknown clause {id!r}") from None


def all_clauses() -> list[Clause]:
    """Every declared clause, sorted by ID."""
    load_all()
    return sorted(_REGISTRY.values(), key=lambda c: c.id)


def load_all() -> None:
    """Import every module of the ``rocketmq_spec.spec`` package so that all clauses are registered."""
    from rocketmq_spec import spec

    for info in pkgutil.iter_modules(spec.__path__):
        importlib.import_module(f"rocketmq_spec.spec.{info.name}")
