"""The broker's config JSON files (topics, consumer offsets, subscription groups, delay offsets).

Reading falls back to ``<name>.bak`` like ``ConfigManager.load``; writing goes through ``<name>.tmp`` and
keeps the previous content in ``<name>.bak`` like ``MixAll.string2File``, in fastjson's pretty layout, so
a Java broker can start on files written here and the bytes match what it would have written. Bean-like
entries (TopicConfig, SubscriptionGroupConfig) are plain dicts in their JSON field names, written in
alphabetical key order as fastjson does; unknown (newer-version) fields survive a round trip.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.fastjson import dumps, loads
from rocketmq_spec.spec.errors import BodyError, StoreError
from rocketmq_spec.spec.store_layout import (
    BACKUP_SUFFIX,
    RMQ_STORE_CONFIG_BAK,
    TMP_SUFFIX,
    offset_table_key,
    split_offset_table_key,
)

OffsetTable = dict[tuple[str, str], dict[int, int]]
"""(topic, group) -> queue id -> offset."""


def load_config(path: Path | str) -> Any:
    """The parsed content of ``path`` or, if that is missing, empty or unparsable, of ``path.bak``."""
    path = Path(path)
    for candidate in (path, path.with_name(path.name + BACKUP_SUFFIX)):
        try:
            text = candidate.read_bytes()
        except FileNotFoundError:
            continue
        if text.strip():
            try:
                return loads(text)
            except BodyError:
                continue
    raise StoreError("no readable config file", expected=f"{path.name} or {path.name}{BACKUP_SUFFIX}",
                     seen="missing, empty or unparsable", clause=RMQ_STORE_CONFIG_BAK.id)


def save_config(path: Path | str, content: Any, *, pretty: bool = True) -> None:
    """Write ``content`` as Java's ConfigManager does: tmp file, old content to .bak, then rename.

    ``pretty=False`` is the one-line layout of ``RemotingSerializable.toJson()``, which the name server's
    kvConfig.json is written in."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    tmp.write_text(dumps(content, pretty=pretty), encoding="utf-8")
    if path.exists():
        path.with_name(path.name + BACKUP_SUFFIX).write_bytes(path.read_bytes())
    os.replace(tmp, path)


def bean(fields: dict[str, Any]) -> dict[str, Any]:
    """A bean-like JSON object in fastjson's field order (alphabetical)."""
    return dict(sorted(fields.items()))


def consumer_offsets_from_json(content: Any) -> OffsetTable:
    return {split_offset_table_key(key): {int(q): int(o) for q, o in queues.items()}
            for key, queues in content.get("offsetTable", {}).items()}


def consumer_offsets_to_json(table: OffsetTable) -> dict[str, Any]:
    return {"offsetTable": {offset_table_key(topic, group): dict(queues)
                            for (topic, group), queues in table.items()}}


def delay_offsets_from_json(content: Any) -> dict[int, int]:
    return {int(level): int(offset) for level, offset in content.get("offsetTable", {}).items()}


def delay_offsets_to_json(table: dict[int, int]) -> dict[str, Any]:
    return {"offsetTable": dict(table)}


def table_from_json(content: Any, table_name: str) -> dict[str, dict[str, Any]]:
    """``topicConfigTable`` / ``subscriptionGroupTable``: name -> bean."""
    return dict(content.get(table_name, {}))


def table_to_json(table: dict[str, dict[str, Any]], table_name: str, counter: int,
                  timestamp: int) -> dict[str, Any]:
    """A data-versioned table file (topics.json, subscriptionGroup.json)."""
    return {"dataVersion": {"counter": counter, "timestamp": timestamp},
            table_name: {name: bean(fields) for name, fields in table.items()}}


TOPIC_TABLE = "topicConfigTable"
SUBSCRIPTION_TABLE = "subscriptionGroupTable"
