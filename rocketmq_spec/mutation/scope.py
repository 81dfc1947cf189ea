"""What is mutated: the reference broker's wire-visible modules, with a few mutation operators each.

Cosmic Ray's full operator set replaces every binary operator by every other one (eleven mutants per
``+``) and every comparison by every other; most of those are the same defect many times over. The suite
is measured on one mutant per kind of realistic slip: a boundary moved (``<`` for ``<=``), an equality
inverted, an arithmetic sign flipped, a constant off by one, a condition negated or dropped, a loop that
never runs, an exception handler that catches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("rocketmq_spec/reference_broker/broker", "rocketmq_spec/reference_broker/namesrv",
            "rocketmq_spec/reference_broker/store")


@dataclass(frozen=True)
class Excluded:
    path: str
    why: str


EXCLUDED = (
    Excluded("rocketmq_spec/reference_broker/store/retention.py",
             "deletes files hours old (fileReservedTime, deleteWhen): nothing a suite run can see"),
    Excluded("rocketmq_spec/reference_broker/store/flush.py",
             "when pages reach the disk: durability timing, invisible on the wire and in a clean stop"),
    Excluded("rocketmq_spec/reference_broker/store/worker.py", "a background thread's loop plumbing"),
    Excluded("rocketmq_spec/reference_broker/broker/stats.py",
             "runtime counters of GET_BROKER_RUNTIME_INFO, whose values are the target's own"),
    Excluded("rocketmq_spec/reference_broker/persistence.py",
             "binds the codec's config-file I/O to a directory"),
)
"""Modules left out, each with why no conformance case can be expected to see its defects."""

COMPARISONS = ("Eq_NotEq", "NotEq_Eq", "Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt", "Is_IsNot", "IsNot_Is")
BINARY = ("Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "FloorDiv_Mul", "Mod_FloorDiv", "BitOr_BitAnd",
          "BitAnd_BitOr", "BitXor_BitOr", "LShift_RShift", "RShift_LShift")
OPERATORS = frozenset({
    *(f"core/ReplaceComparisonOperator_{name}" for name in COMPARISONS),
    *(f"core/ReplaceBinaryOperator_{name}" for name in BINARY),
    "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceUnaryOperator_Delete_USub",
    "core/AddNot", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd", "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
    "core/ExceptionReplacer", "core/NumberReplacer", "core/ZeroIterationForLoop",
})
"""Cosmic Ray operator names kept; every other operator's work items are marked skipped."""


def module_paths(root: str = ".") -> list[str]:
    """The modules to mutate, relative to the project root ``root``."""
    excluded = {e.path for e in EXCLUDED}
    found = []
    for package in PACKAGES:
        for path in sorted((Path(root) / package).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if path.name != "__init__.py" and relative not in excluded:
                found.append(relative)
    return found


@dataclass(frozen=True)
class OutOfReach:
    module: str
    definitions: tuple[str, ...]
    why: str


OUT_OF_REACH = (
    OutOfReach("rocketmq_spec/reference_broker/store/commitlog.py", ("find_end", "_past_blank", "load"),
               "recovery: runs when a broker starts on a store that already holds records; the suite runs a "
               "target once and never restarts it (tests/test_store_engine_recovery.py covers it)"),
    OutOfReach("rocketmq_spec/reference_broker/store/consume_queue.py",
               ("recover", "correct_min_offset", "truncate_dirty", "delete_expired", "_last_pointer"),
               "recovery and retention: run at a restart or once CommitLog files are deleted, which a suite "
               "run never reaches"),
    OutOfReach("rocketmq_spec/reference_broker/store/message_store.py", ("clean_expired_consume_queues",),
               "drops consume queues wholly behind the CommitLog's min offset, which moves only when "
               "retention deletes CommitLog files (fileReservedTime, 72 h): until then all are kept"),
    OutOfReach("rocketmq_spec/reference_broker/store/index.py", ("load", "drop_beyond"),
               "index recovery at a restart"),
    OutOfReach("rocketmq_spec/reference_broker/namesrv/kv.py", ("load", "persist"),
               "the KV table's file: the embedded name server keeps it in memory (kvConfigPath unset), and "
               "the file is not wire-visible"),
    OutOfReach("rocketmq_spec/reference_broker/broker/topics.py", ("from_json", "replace_all"),
               "topics read back from topics.json at a restart, or replaced by a slave's sync from its "
               "master"),
    OutOfReach("rocketmq_spec/reference_broker/broker/server.py", ("grpc_addr",),
               "where the in-process gRPC proxy listens: mutation runs judge the remoting protocol, with the "
               "proxy off (its cases need --grpc, and rocketmq_spec/reference_broker/proxy is not mutated)"),
    OutOfReach("rocketmq_spec/reference_broker/broker/topics.py", ("registration_json",),
               "what a broker that is not read-write registers (every topic at the broker's permission): a "
               "suite run cannot take write permission from the target the other cases are writing to"),
    OutOfReach("rocketmq_spec/reference_broker/broker/slave_sync.py", ("sync_all", "<module>"),
               "a slave's metadata sync from its master every 60 s; the suite's HA targets are judged on the "
               "replicated log, not on the slave's copies of topics and offsets"),
)
"""Definitions whose mutants no suite run can reach: their survivors are reported apart, with the reason,
and left out of the score beside the figure that counts them (the report gives both)."""


def out_of_reach(module: str, definition: str) -> OutOfReach | None:
    return next((o for o in OUT_OF_REACH if o.module == module and definition in o.definitions), None)
