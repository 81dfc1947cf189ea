"""Where the broker keeps its config/*.json files; reading and writing is the codec's (Java's protocol).

The codec's ``load_config``/``save_config`` implement fastjson pretty format and the tmp/.bak replacement
(RMQ-STORE-CONFIG-BAK); this class only binds them to the broker's config directory and turns "no file
yet" into None, the normal state of a fresh store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketmq_spec.codec.store.configs import load_config, save_config
from rocketmq_spec.spec.errors import StoreError


class ConfigFiles:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def save(self, name: str, content: Any) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        save_config(self.directory / name, content)

    def load(self, name: str) -> Any:
        """The parsed file (or its backup), or None when neither holds anything readable."""
        try:
            return load_config(self.directory / name)
        except StoreError:
            return None
