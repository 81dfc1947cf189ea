"""Reading data source options: Spark hands them over as a case-insensitive string map, and a typo in a
value must fail the query at planning time rather than be read as a default."""

from __future__ import annotations

from collections.abc import Collection, Mapping


def flag(options: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = options.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"option {name} must be true or false, got {value!r}")
    return value == "true"


def choice(options: Mapping[str, str], name: str, choices: Collection[str]) -> str:
    """One of ``choices``; the first is the default."""
    value = options.get(name, next(iter(choices))).strip().lower()
    if value not in choices:
        raise ValueError(f"option {name} must be one of {sorted(choices)}, got {value!r}")
    return value


def required(options: Mapping[str, str], name: str, source: str) -> str:
    value = options.get(name, "").strip()
    if not value:
        raise ValueError(f'format("{source}") needs option {name}')
    return value


def subset(options: Mapping[str, str], name: str, names: Collection[str]) -> tuple[str, ...] | None:
    """A comma-separated selection from ``names``, in the order given; ``None`` when the option is absent."""
    if name not in options:
        return None
    chosen = tuple(part.strip() for part in options[name].split(",") if part.strip())
    unknown = [part for part in chosen if part not in names]
    if unknown or not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"option {name} must name distinct columns of {sorted(names)}, "
                         f"got {options[name]!r}")
    return chosen


def positive(options: Mapping[str, str], name: str, default: int) -> int:
    value = int(options.get(name, default))
    if value <= 0:
        raise ValueError(f"option {name} must be positive, got {value}")
    return value


def index_sizes(options: Mapping[str, str], name: str) -> tuple[int, int] | None:
    """``SLOTS,ENTRIES`` (maxHashSlotNum, maxIndexNum), or None to infer them from each index file's size:
    the size fixes only 4 * slots + 20 * entries, so counts off Java's 1:4 ratio must be stated."""
    text = options.get(name, "").strip()
    if not text:
        return None
    parts = text.split(",")
    if len(parts) != 2 or not all(part.strip().isdigit() and int(part) > 0 for part in parts):
        raise ValueError(f"option {name} must be SLOTS,ENTRIES (two positive numbers), got {text!r}")
    return int(parts[0]), int(parts[1])
