"""Which store directories a ``rocketmq-store`` load names, and which broker each one is.

Every broker of a cluster keeps a store of its own, so a job over a cluster's data loads several
directories: ``load([dir_a, dir_b])`` (Spark hands a list of two or more over as the ``paths`` option, a
JSON array) or a glob such as ``load("/data/*/store")``, expanded on the driver. Such a load gets a
``broker`` column naming each row's store. A broker is named by option ``brokerNames`` (comma-separated,
in the order the directories are listed, a glob's matches sorted), else by its directory: the directory's
own name, or its parent's when the directory is called ``store`` (Apache RocketMQ's default
``storePathRootDir`` is ``~/store``, and deployments keep ``/data/<broker>/store``). Two stores with one
name are refused: their rows could not be told apart.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

GLOB_CHARACTERS = frozenset("*?[")
DEFAULT_STORE_DIRECTORY = "store"
"""The last component of Apache RocketMQ's default store root, which names no broker."""


@dataclass(frozen=True)
class BrokerStore:
    broker: str
    root: str


@dataclass(frozen=True)
class StoreSet:
    stores: tuple[BrokerStore, ...]
    labelled: bool
    """Whether rows carry a ``broker`` column: the load named several directories (a list or a glob)."""


def broker_name(root: str) -> str:
    path = Path(root).resolve()
    return path.parent.name if path.name == DEFAULT_STORE_DIRECTORY and path.parent.name else path.name


def _expand(pattern: str) -> list[str]:
    if not GLOB_CHARACTERS & set(pattern):
        return [pattern]
    found = sorted(match for match in glob.glob(pattern) if Path(match).is_dir())
    if not found:
        raise ValueError(f"no store directory matches {pattern!r}")
    return found


def _given(options: Mapping[str, str], source: str) -> tuple[list[str], bool]:
    """The patterns the load named, and whether it named several (a list)."""
    if options.get("paths"):
        paths = json.loads(options["paths"])
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise ValueError(f"option paths must be a JSON array of directories, got {options['paths']!r}")
        return paths, True
    if options.get("path"):
        return [options["path"]], False
    raise ValueError(f'format("{source}") needs a store directory: .load(DIR), .load([DIR, ...]) or a glob')


def resolve_stores(options: Mapping[str, str], source: str) -> StoreSet:
    patterns, several = _given(options, source)
    roots = [root for pattern in patterns for root in _expand(pattern)]
    labelled = several or any(GLOB_CHARACTERS & set(pattern) for pattern in patterns)
    if options.get("brokerNames"):
        names = [name.strip() for name in options["brokerNames"].split(",")]
        if len(names) != len(roots) or not all(names):
            raise ValueError(f"option brokerNames must name each of the {len(roots)} store directories "
                             f"{roots}, got {options['brokerNames']!r}")
    else:
        names = [broker_name(root) for root in roots]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"store directories {roots} share broker names {repeated}: "
                         "give each one with option brokerNames")
    return StoreSet(tuple(BrokerStore(n, r) for n, r in zip(names, roots, strict=True)), labelled)
