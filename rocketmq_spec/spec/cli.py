"""Conventions every command-line tool of the project follows, kept in one place.

Each tool prints ``--version``, and turns input it cannot work with (a missing file, a directory that is
not a store, a target that does not answer) into one line on stderr and exit status 2 before any work
starts, so that a mistyped path or address never shows up as a traceback or as a wall of failed cases.
"""

from __future__ import annotations

import argparse
import sys
import typing
from importlib import metadata
from pathlib import Path

from rocketmq_spec.spec.store_layout import COMMITLOG_DIR

DISTRIBUTION = "rocketmq-spec"
EXIT_BAD_INPUT = 2
"""The status argparse gives a bad command line; bad input found later gets the same."""


class BadInput(Exception):
    """Input a command cannot work with; the message is the whole line the user sees."""


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()} ({DISTRIBUTION})")


def one_line(problem: BaseException | str) -> str:
    """The problem as one line; a file error names the file once, without Python's errno prefix."""
    if isinstance(problem, OSError) and problem.filename is not None:
        problem = f"{problem.filename}: {problem.strerror or problem}"
    return " ".join(str(problem).split())


def fail(prog: str, problem: BaseException | str) -> int:
    """Print ``prog: problem`` on one line of stderr and return the bad-input exit status."""
    print(f"{prog}: {one_line(problem)}", file=sys.stderr)
    return EXIT_BAD_INPUT


def require_file(path: Path, what: str = "file") -> Path:
    if not path.exists():
        raise BadInput(f"{what} {path} does not exist")
    if not path.is_file():
        raise BadInput(f"{what} {path} is not a file")
    return path


def require_store(path: Path) -> Path:
    """``path`` if it is a store root (a directory holding ``commitlog/``), else :class:`BadInput`."""
    if not path.exists():
        raise BadInput(f"store directory {path} does not exist")
    if not path.is_dir():
        raise BadInput(f"{path} is not a directory, so not a RocketMQ store")
    if not (path / COMMITLOG_DIR).is_dir():
        raise BadInput(f"{path} is not a RocketMQ store: it has no {COMMITLOG_DIR}/ directory")
    return path


class Parser(argparse.ArgumentParser):
    """An argument parser whose complaints are one line (``prog: problem``) rather than usage + error."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see {self.prog} --help)\n")


def write_or_check(prog: str, path: Path, text: str, *, check: bool, regenerate: str) -> int:
    """A file generated from the spec: write ``text`` to ``path``, or with ``check`` exit 1 when the file
    holds anything else (``regenerate`` says the command that brings it up to date)."""
    if check:
        if not path.is_file():
            return fail(prog, f"{path} does not exist: run from the checkout's root or give its path")
        if path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run {regenerate}", file=sys.stderr)
            return 1
        return 0
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(prog, exc)
    print(f"wrote {path} ({text.count(chr(10))} lines)")
    return 0
