"""Lanes: the commonest requests answered as soon as their frame is read, without the general path.

Nearly every request a client makes is one of two: a plain send (a JSON SEND_MESSAGE_V2 to an existing topic
and queue, no delay, no transaction, no batch, nothing to wait for once the record is in the log) or a pull
that finds messages or may not wait. For those the general path spends most of its time on structure rather
than work: a task per request, the command, request and handler objects, the message, draft, record and result
objects, the header encoded field by field. A lane does the same work in one synchronous call from the
connection's read callback: the request read straight from its frame (``rocketmq_spec.codec.request_scan``),
the handler's own checks, the store's calls, the answer joined from a template of its header
(``rocketmq_spec.codec.answer_template``).

Anything else, including every request a check refuses, is left to the general path: a lane returns False
before anything is written, and the frame is decoded and dispatched as before. ``tests/test_lanes.py``
holds the two paths equal on the answers and the store they leave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rocketmq_spec.codec.request_scan import RequestScanner
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.headers import HeaderSpec, header_for

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.server import Connection

Taker = Callable[["Connection", int, dict[str, Any], bytes], bool]
"""A lane of one code: (connection, opaque, typed header, body) -> True once it has answered, False having
done nothing."""


def _request_header(code: int) -> HeaderSpec:
    spec = header_for(code, is_response=False)
    if spec is None:
        raise LookupError(f"the spec has no request header for code {code}")
    return spec


class Lanes:
    """The lanes of a server, by request code (``RemotingServer.use_lane``)."""

    def __init__(self, takers: Mapping[RequestCode, Taker]) -> None:
        self._takers = {int(code): taker for code, taker in takers.items()}
        self._scanner = RequestScanner({code: _request_header(code) for code in self._takers})

    def take(self, connection: Connection, frame: bytes) -> bool:
        request = self._scanner.scan(frame)
        if request is None:
            return False
        code, opaque, header, body = request
        return self._takers[code](connection, opaque, header, body)
