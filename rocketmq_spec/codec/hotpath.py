"""Which implementation of the per-send codec work runs: the compiled twins or the pure-Python functions.

The compiled extension ``rocketmq_spec.codec._hotpath`` is built where a C compiler is found at install time
and is optional: without it (or with ``RMQ_PURE_PYTHON=1`` in the environment, which the test suite and the
conformance runs use to check the fallback) every caller gets the pure-Python function it was written against.
Each compiled function is a twin of one pure function and is held equal to it by property tests
(``tests/test_hotpath_equal.py``); the extension knows no protocol number of its own, ``configure`` hands it
the spec's.

Some twins decline input outside the shape they were written for; :func:`twin` makes such a decline fall
back to the pure function, so a caller always gets the pure function's answer or its typed error.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from construct import Int8ub, Int16ub

from rocketmq_spec.spec.commitlog import MESSAGE_MAGIC_V1
from rocketmq_spec.spec.frame import MAX_LENGTH_VALUE, MIN_LENGTH_VALUE, SerializeType
from rocketmq_spec.spec.indexfile import FIRST_INDEX, HEADER_SIZE, INVALID_INDEX, MAX_TIME_DIFF
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR
from rocketmq_spec.spec.sysflag import MessageSysFlag

ENVIRONMENT = "RMQ_PURE_PYTHON"
"""Set to 1 to run the pure-Python functions even where the extension is built."""

F = TypeVar("F", bound=Callable[..., Any])


def load_compiled() -> ModuleType | None:
    """The extension, configured, whatever the environment asks (None where it is not built): the
    equality tests compare it with the pure functions even in a pure-Python run."""
    try:
        module = importlib.import_module("rocketmq_spec.codec._hotpath")
    except ImportError:
        return None
    module.configure(min_length=MIN_LENGTH_VALUE, max_length=MAX_LENGTH_VALUE,
                     json_type=int(SerializeType.JSON), magic_v1=MESSAGE_MAGIC_V1,
                     born_v6=int(MessageSysFlag.BORNHOST_V6), store_v6=int(MessageSysFlag.STOREHOST_V6),
                     max_topic_length=2 ** (8 * Int8ub.sizeof()) - 1,
                     max_properties_length=2 ** (8 * Int16ub.sizeof()) - 1,
                     index_header_size=HEADER_SIZE, max_time_diff=MAX_TIME_DIFF, first_index=FIRST_INDEX,
                     invalid_index=INVALID_INDEX, name_value_separator=NAME_VALUE_SEPARATOR,
                     property_separator=PROPERTY_SEPARATOR)
    return module


def _load() -> ModuleType | None:
    if os.environ.get(ENVIRONMENT, "") not in ("", "0"):
        return None
    return load_compiled()


compiled = _load()
"""The extension module, or None where the pure-Python functions run."""


def implementation() -> str:
    """``compiled`` or ``pure-python``: what a benchmark or report says it measured."""
    return "compiled" if compiled is not None else "pure-python"


def twin(name: str, pure: F, *, declines: bool = False) -> F:
    """The compiled function ``name`` where the extension is loaded, else ``pure``. With ``declines`` the
    compiled function answers None for input it leaves to ``pure``, which is then called instead."""
    fast = getattr(compiled, name, None) if compiled is not None else None
    if fast is None:
        return pure
    if not declines:
        return fast
    assert compiled is not None
    return compiled.declining(fast, pure)
