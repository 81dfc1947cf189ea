"""What every ``rmq-admin`` command table shares: address options, ``-b``/``-c``, the runner type."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.wire import AdminError, parse_addr

Runner = Callable[[Admin, argparse.Namespace], Any]
Options = list[tuple[tuple[str, ...], dict[str, Any]]]
"""argparse flags and settings of a command's options."""


def address(text: str) -> str:
    try:
        parse_addr(text)
    except AdminError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


BROKER_OR_CLUSTER: Options = [
    (("-b", "--brokerAddr"), {"dest": "broker", "type": address}),
    (("-c", "--clusterName"), {"dest": "cluster"})]
"""mqadmin's OptionGroup of a command sent to one broker or to the brokers of a cluster."""
