"""Which columns of a ``rocketmq-store`` read a query needs, read off Spark's optimized plan.

PySpark 4's Python data sources are never told which columns a query needs (the JVM's scan builder for
them takes pushed filters only), so a source builds every column of every row, and the JVM then copies
each value, maps, lists and bodies included, into its own rows: for a full-width read that copy costs
more than the reading. The optimizer knows better: after column pruning, the plan above a relation
references only the attributes the query uses. :func:`required_columns` reads them from the optimized
plan (analysis only: no job runs), and :func:`store_query` builds the query a second time over a read of
just those columns (the source's ``columns`` option), which Spark then plans as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from rocketmq_spec.spark.store_source import FORMAT

SCAN_RELATION = "DataSourceV2ScanRelation"
FALLBACK_COLUMN = "total_size"
"""What a query that uses no column (``count(*)``) reads: a fixed field, so every record still makes a
row at the least cost."""


def _items(seq: Any) -> list[Any]:
    """A Scala ``Seq`` seen through py4j, as a list."""
    return [seq.apply(number) for number in range(seq.size())]


def _nodes(plan: Any) -> list[Any]:
    nodes, frontier = [], [plan]
    while frontier:
        node = frontier.pop()
        nodes.append(node)
        frontier += _items(node.children())
    return nodes


def _is_store_scan(node: Any, source: str) -> bool:
    return (node.getClass().getSimpleName() == SCAN_RELATION
            and node.relation().table().name() == source)


def required_columns(frame: DataFrame, source: str = FORMAT) -> tuple[str, ...] | None:
    """The columns of ``source`` reads that ``frame`` uses, in the order the reads declare them
    (:data:`FALLBACK_COLUMN` if it uses none); ``None`` when its plan reads no ``source``."""
    nodes = _nodes(frame._jdf.queryExecution().optimizedPlan())
    scans = [node for node in nodes if _is_store_scan(node, source)]
    if not scans:
        return None
    used = {attribute.exprId().id() for node in nodes
            for attribute in _items(node.references().toSeq())}
    declared = [attribute for scan in scans for attribute in _items(scan.output())]
    names = [attribute.name() for attribute in declared if attribute.exprId().id() in used]
    return tuple(dict.fromkeys(names)) or (FALLBACK_COLUMN,)


def store_query(spark: SparkSession, paths: Path | str | Sequence[Path | str],
                query: Callable[[DataFrame], DataFrame], **options: str) -> DataFrame:
    """``query`` over ``spark.read.format("rocketmq-store").options(**options).load(paths)``, reading
    only the columns it uses. ``query`` is called twice (once to plan, once for the result) and must
    name the columns it uses, as any column expression or SQL does."""
    load = str(paths) if isinstance(paths, Path | str) else [str(path) for path in paths]
    full = query(spark.read.format(FORMAT).options(**options).load(load))
    columns = required_columns(full)
    if columns is None:
        return full
    return query(spark.read.format(FORMAT).options(**options).option("columns", ",".join(columns)).load(load))
