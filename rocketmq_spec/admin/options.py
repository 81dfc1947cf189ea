"""What every ``rmq-admin`` command table shares: address options, ``-b``/``-c``, the runner type, the
credentials requests are signed with."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.wire import AdminError, parse_addr
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.spec.acl_file import TOOLS_FILE

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


def credentials(access_key: str | None, secret_key: str | None, home: str | None) -> Credentials | None:
    """What requests are signed with: the keys given, else mqadmin's ``tools.yml`` under ``home`` when
    there is one (its keys blank: unsigned, as mqadmin goes on unsigned), else nothing. A key given
    without the other, or a ``tools.yml`` that is not a YAML map, is an AdminError."""
    if access_key is not None or secret_key is not None:
        if not access_key or not secret_key:
            raise AdminError("--access-key and --secret-key are given together, neither empty")
        return Credentials(access_key, secret_key)
    path = Path(home, TOOLS_FILE) if home else None
    if path is None or not path.is_file():
        return None
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AdminError(f"cannot read the credentials in {path}: {' '.join(str(exc).split())}") from None
    if loaded is None:
        return None
    if not isinstance(loaded, dict):
        raise AdminError(f"{path}: expected a map with accessKey and secretKey, found "
                         f"{type(loaded).__name__}")
    found_key, found_secret = loaded.get("accessKey"), loaded.get("secretKey")
    if not found_key or not found_secret:
        return None
    return Credentials(str(found_key), str(found_secret))
