"""The TLS columns of the committed results: the ``tls`` area, one run per ``tls.server.mode``.

A TLS column is a project target started with TLS (``rmq-conformance --tls --tls-insecure``, the gRPC port
too for a 5.x release) and judged by the ``tls`` area alone, once per mode: its ``index.json`` is the
permissive run (the default), ``enforcing/`` and ``disabled/`` beside it the other two; each case about a
mode other than the run's is UNSUPPORTED there, so the three together judge every clause of the area.

They are not in :data:`rocketmq_spec.conformance.results.CHECKED`: ``check`` and ``update`` run them only
when named (``python -m rocketmq_spec.conformance.results update embedded-tls apache-4.9.7-tls
apache-5.5.0-tls``), which CI does as a step of its own: the reference broker's three runs take about a
minute, the two Java releases' six about five on a loaded 2-core machine. ``docs/RESULTS.md`` shows them
in a table of their own.
"""

from __future__ import annotations

from rocketmq_spec.spec.tls import TlsMode
from rocketmq_spec.targets import EMBEDDED, parse_target

SUFFIX = "-tls"
TLS_COLUMNS: dict[str, str] = {f"{target}{SUFFIX}": target for target in (EMBEDDED, "apache-4.9.7",
                                                                          "apache-5.5.0")}
"""TLS column -> the project target it starts."""
AREA = "tls"
MODES = (TlsMode.PERMISSIVE, TlsMode.ENFORCING, TlsMode.DISABLED)
"""The permissive run is the column's main report; the others are subdirectories named by the mode."""
TITLE = ("TLS (the tls area, run with --tls --tls-insecure once per tls.server.mode; CI checks every "
         "column): columns are target / mode")


def runs(column: str) -> dict[str, list[str]]:
    """Report subdirectory -> the ``rmq-conformance`` arguments producing it."""
    target = TLS_COLUMNS[column]
    started = [] if target == EMBEDDED else ["--target", target]
    release = parse_target(target)
    if release is not None and release.has_proxy:
        started.append("--grpc")
    return {("" if mode is TlsMode.PERMISSIVE else mode.value):
            [*started, "--tls", "--tls-insecure", "--tls-mode", mode.value, "-k", AREA] for mode in MODES}


def label(column: str, sub: str) -> str:
    """A report's column heading in the TLS table: target and mode."""
    return f"{TLS_COLUMNS[column]} {sub or TlsMode.PERMISSIVE.value}"
