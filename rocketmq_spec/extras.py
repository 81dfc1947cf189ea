"""The optional parts of the project and the extra that installs each, checked before they are imported.

``pip install rocketmq-spec`` brings the core: the spec, the codec, the reference broker and the
conformance suite, and the commands built on them. Spark, the fuzzers and mutation testing need large or
test-only libraries, so they come with an extra (``rocketmq-spec[spark]``, ``[fuzz]``, ``[mutation]``).
The package of each optional part calls :func:`require` first, so that importing it where its extra is
missing raises one :class:`MissingExtra` naming the extra to install, rather than a ``ModuleNotFoundError``
from deep inside; its command (:func:`rmq_spark`, :func:`rmq_fuzz`) turns that into one line on stderr and
exit status 2, like any other bad input of the project's commands.

The table below mirrors ``[project.optional-dependencies]`` of pyproject.toml (tests/test_packaging.py
holds the two together): import names here, distribution names there.
"""

from __future__ import annotations

import importlib
import sys
from importlib.util import find_spec

from rocketmq_spec.spec.cli import DISTRIBUTION, EXIT_BAD_INPUT

EXTRAS: dict[str, tuple[str, ...]] = {
    "spark": ("pyspark", "pyarrow", "pandas"),
    "fuzz": ("hypothesis",),
    "mutation": ("cosmic_ray", "coverage"),
}
"""The modules each extra provides that the part it names imports."""


class MissingExtra(ImportError):
    """An optional part of the project was imported without the extra that installs its dependencies."""

    def __init__(self, extra: str, missing: list[str]) -> None:
        self.extra, self.missing = extra, missing
        super().__init__(f"needs the {extra} extra: pip install '{install_name(extra)}' "
                         f"(not installed: {', '.join(missing)})")

    def line(self, user: str) -> str:
        """The one line a user of ``user`` (a command, a module) sees."""
        return f"{user} needs the {self.extra} extra: pip install '{install_name(self.extra)}'"


def install_name(extra: str) -> str:
    return f"{DISTRIBUTION}[{extra}]"


def missing(extra: str) -> list[str]:
    return [module for module in EXTRAS[extra] if find_spec(module) is None]


def require(extra: str) -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` can be imported."""
    if absent := missing(extra):
        raise MissingExtra(extra, absent)


def launch(command: str, module: str) -> int:
    """Run ``module``'s ``main`` as ``command``, or say in one line which extra it needs (exit status 2)."""
    try:
        main = importlib.import_module(module).main
    except MissingExtra as exc:
        print(exc.line(command), file=sys.stderr)
        return EXIT_BAD_INPUT
    status: int = main()
    return status


def rmq_spark() -> int:
    return launch("rmq-spark", "rocketmq_spec.spark.cli")


def rmq_fuzz() -> int:
    return launch("rmq-fuzz", "rocketmq_spec.fuzz.cli")
