"""What cases read off a recording: the client's sends decoded into fields, properties and bodies.

SEND_MESSAGE_V2's one-letter keys are turned back into SendMessageRequestHeader's names (the table of
``spec.headers``), so a case judges V1 and V2 sends alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.codec.batch import decode_batch
from rocketmq_spec.codec.compression import decompress_for_sys_flag
from rocketmq_spec.conformance.clients.recording import Frame, Role, requests
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.headers import SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.properties import parse_properties

SEND_CODES = (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE)
_LONG_NAMES = {f.name: f.long_name for f in SEND_MESSAGE_REQUEST_V2.fields if f.long_name}


@dataclass(frozen=True)
class Send:
    frame: Frame
    fields: dict[str, str]
    """The header under SendMessageRequestHeader's names."""

    @property
    def properties_text(self) -> str:
        return self.fields.get("properties", "")

    @property
    def properties(self) -> dict[str, str]:
        return parse_properties(self.properties_text)

    @property
    def sys_flag(self) -> int:
        return int(self.fields.get("sysFlag", "0") or 0)

    @property
    def is_batch(self) -> bool:
        return self.frame.command.code == RequestCode.SEND_BATCH_MESSAGE

    @property
    def raw_body(self) -> bytes:
        return self.frame.command.body or b""

    def body(self) -> bytes:
        """The application's body (decompressed when sysFlag says so)."""
        return decompress_for_sys_flag(self.raw_body, self.sys_flag)

    def batch_blocks_properties(self) -> list[dict[str, str]]:
        return [parse_properties(block.properties) for block in decode_batch(self.raw_body)]


def long_names(fields: dict[str, str] | None, code: int) -> dict[str, str]:
    fields = dict(fields or {})
    if code == RequestCode.SEND_MESSAGE:
        return fields
    return {_LONG_NAMES.get(k, k): v for k, v in fields.items()}


def sends(frames: list[Frame]) -> list[Send]:
    return [
        Send(f, long_names(f.command.ext_fields, f.command.code))
        for f in requests(frames, *SEND_CODES, role=Role.BROKER)
    ]
