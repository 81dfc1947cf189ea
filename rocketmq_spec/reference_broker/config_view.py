"""Settings as admin tools see them: the Java property names and string values of GET_*_CONFIG, and updates.

``rocketmq_spec.reference_broker.config`` reads broker.conf into dataclasses; the admin commands need the way
back (every setting under its Java name, as ``MixAll.properties2String`` lists them) and a runtime update that
refuses the black-listed keys as Java does. Both the broker and the name server use this module. """

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig, apply_properties
from rocketmq_spec.reference_broker.java_keys import BY_NAME, Owner
from rocketmq_spec.spec.tls import TLS_KEYS_BY_NAME

log = logging.getLogger(__name__)

TLS_FIELD = "tls"
"""The configs' field holding the ``tls.*`` system properties, which no admin command lists or changes."""
_SPECIAL_WORDS = {"ip1": "IP1", "ip2": "IP2"}
"""snake_case words whose Java spelling is not simply capitalised (``brokerIP1``)."""


def java_name(field_name: str) -> str:
    """``mapped_file_size_commit_log`` -> ``mappedFileSizeCommitLog``; ``broker_ip1`` -> ``brokerIP1``."""
    first, *rest = field_name.split("_")
    return first + "".join(_SPECIAL_WORDS.get(word, word.capitalize()) for word in rest)


def _java_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def settings_of(config: BrokerConfig | NamesrvConfig) -> dict[str, str]:
    """Every setting under its Java name, as strings; unset (None) ones left out as Java leaves nulls, and
    the TLS settings, which are system properties in Java, not config."""
    return {java_name(f.name): _java_text(getattr(config, f.name)) for f in dataclasses.fields(config)
            if getattr(config, f.name) is not None and f.name != TLS_FIELD}


def black_listed(properties: Iterable[str], black_list: Iterable[str]) -> list[str]:
    """The keys of an update that Java's ``validateBlackListConfigExist`` refuses."""
    refused = set(black_list)
    return [key for key in properties if key in refused]


def update_settings(config: BrokerConfig | NamesrvConfig, properties: dict[str, str]) -> list[str]:
    """Apply an admin update through the key table (a value that cannot be read raises ConfigError);
    returns the keys that change nothing in this process: unknown, ignored, or the other process's
    (logged: Java's ``Configuration.update`` skips them the same way)."""
    system = [name for name in properties if name in TLS_KEYS_BY_NAME]  # read once at start, as Java's
    settable = {name: value for name, value in properties.items() if name not in system}
    if isinstance(config, BrokerConfig):
        loaded, other = apply_properties(settable, config, NamesrvConfig()), Owner.NAMESRV
    else:
        loaded, other = apply_properties(settable, BrokerConfig(), config), Owner.BROKER
    unknown = [*system, *loaded.unknown, *(key.name for key in loaded.ignored),
               *(name for name in properties if name in BY_NAME and BY_NAME[name].owner is other)]
    for key in unknown:
        log.warning("config update: key %s is not a setting of this process; ignored", key)
    return unknown
