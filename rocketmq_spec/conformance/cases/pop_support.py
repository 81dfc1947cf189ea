"""What the pop and timer cases share: the target's release read off its answers, and a POP client that
builds receipts from a POP answer as Java's ``MQClientAPIImpl.processPopResponse`` does.

A 4.x target has no POP processor and no timer: the cases of those areas ask :func:`require_5x` first, so a
4.x target is reported UNSUPPORTED with the reason instead of failing a rule it never had; a case about one
request code a release added asks the target with :func:`require_code` whether it serves the code.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.spec.codes import RequestCode, ResponseCode, codes_for
from rocketmq_spec.spec.pop import (
    ACK_MESSAGE_REQUEST,
    POP_MESSAGE_RESPONSE,
    InitMode,
    build_extra_info,
)
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.releases import is_5x, release_of_version

from .admin_support import properties
from .messaging import Client
from .support import eventually, expect_success, unique

HOLD_HEADROOM = 10.0
"""Seconds a held pop's answer may take beyond its pollTime on a loaded machine."""
REVIVE_WAIT_S = 60.0
"""Java's revive service reads each revive queue about once a second and waits for late acks: a message
whose invisible time ended comes back within seconds; the bound only keeps a broken target from hanging."""
SHORT_INVISIBLE_MS = 3000


def broker_setting(client: Client, name: str) -> str:
    """One setting of the target as GET_BROKER_CONFIG reports it ("" when it does not)."""
    return properties(client.connection.call(RequestCode.GET_BROKER_CONFIG).body).get(name, "")


def target_setting(client: Client, check: Check, name: str, java_default: str) -> str:
    """A setting a case's expectation depends on, as the target's GET_BROKER_CONFIG reports it: a case never
    assumes the target runs with Java's defaults. Java's default is taken only where the target reports
    none, and the report notes which it was."""
    reported = broker_setting(client, name)
    check.note(f"{name} ({'GET_BROKER_CONFIG' if reported else 'not reported: Java default'})",
               reported or java_default)
    return reported or java_default


def broker_name(client: Client) -> str:
    """The target's brokerName: a receipt names it, and Java matches acks by it."""
    return broker_setting(client, "brokerName")


def _release_name(version: int) -> str:
    found = release_of_version(version)
    return found.name if found else "older than 4.9.0"


def require_5x(client: Client, feature: str, clause: str) -> None:
    version = client.target_version()
    if not is_5x(version):
        raise Unsupported(f"{feature} is a 5.x feature; the target announces version {version} "
                          f"({_release_name(version)}) ({clause})", expected="a 5.x target", actual=version)


def require_4x(client: Client, feature: str, clause: str) -> None:
    """A clause about what a 4.x broker does without ``feature`` applies to a 4.x target only."""
    version = client.target_version()
    if is_5x(version):
        raise Unsupported(f"the clause is about 4.x brokers, which have no {feature}; the target announces "
                          f"version {version} ({_release_name(version)}) ({clause})", expected="a 4.x target",
                          actual=version)


PROBE_WAIT = 5.0
"""Seconds a capability probe waits for an answer: a target that serves a code answers an empty request of
it at once (with a refusal of the missing header); one that does not answer at all has not said "not
supported" either."""


def require_code(client: Client, code: RequestCode, clause: str) -> None:
    """A case about one request code applies to a target that serves it: the target is asked (an empty
    request of ``code``, which every release that has the code refuses for its missing header, and one that
    lacks it answers 3 REQUEST_CODE_NOT_SUPPORTED), not judged by the release its version word announces.
    What the probe decided is noted in the case's report, beside what the announced release declares."""
    version = client.target_version()
    declared = any(known.present_for_version(version) for known in codes_for(code, is_response=False))
    request = client.connection.command(code)
    client.connection.send(request)
    answer = client.connection.response_to(request.opaque, PROBE_WAIT)
    seen = "no answer" if answer is None else f"{answer.code} {answer.remark or ''}".strip()
    release = f"its announced release, version {version} ({_release_name(version)}), " \
              f"{'declares' if declared else 'does not declare'} it"
    client.check.note(f"probe: {code.name} ({int(code)}) with no header", f"{seen}; {release}")
    if answer is not None and answer.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
        raise Unsupported(f"the target answers {code.name} ({int(code)}) 3 REQUEST_CODE_NOT_SUPPORTED; "
                          f"{release} ({clause})", expected=f"a target serving {code.name}", actual=seen)


def ready_topic(client: Client, clause: str, count: int = 3, queues: int = 1) -> tuple[PopClient, str]:
    """A topic of its own holding ``count`` messages in queue 0, and a POP client of a group of its own."""
    require_5x(client, "POP", clause)
    topic = client.create_topic(queues)
    client.fill(topic, count)
    return PopClient(client), topic


def pop_again(check: Check, pops: PopClient, topic: str) -> RemotingCommand:
    """The first pop to find messages again once the last batch's invisible time has passed."""
    answer = eventually(lambda: pops.pop(topic, poll_ms=2000), lambda a: a.code == ResponseCode.SUCCESS,
                        REVIVE_WAIT_S)
    return expect_success(check, "pop after the invisible time", answer)


@dataclass
class Popped:
    record: MessageRecord
    receipt: str

    @property
    def offset(self) -> int:
        return int(self.receipt.split()[7])


class PopClient:
    """POP_MESSAGE, ACK_MESSAGE ... for one consumer group, over a case's client."""

    def __init__(self, client: Client, group: str | None = None) -> None:
        self.client = client
        self.group = group or unique("popgroup")
        self.broker_name = broker_name(client)

    def popped(self, answer: RemotingCommand) -> list[Popped]:
        return popped(answer, self.broker_name)

    def pop(self, topic: str, *, queue_id: int = -1, max_nums: int = 32, invisible_ms: int = 60_000,
            poll_ms: int = 0, order: bool = False, init_mode: int = InitMode.MIN) -> RemotingCommand:
        self.client.settle()
        values = {"consumerGroup": self.group, "topic": topic, "queueId": queue_id, "maxMsgNums": max_nums,
                  "invisibleTime": invisible_ms, "pollTime": poll_ms, "bornTime": int(time.time() * 1000),
                  "initMode": init_mode, "order": order}
        return self.client.connection.exchange(self.client.request(RequestCode.POP_MESSAGE, values),
                                               timeout=poll_ms / 1000 + HOLD_HEADROOM)

    def ack(self, topic: str, popped: Popped) -> RemotingCommand:
        return self.client.connection.call(RequestCode.ACK_MESSAGE, encode_header(ACK_MESSAGE_REQUEST, {
            "consumerGroup": self.group, "topic": topic, "queueId": popped.record.queue_id,
            "extraInfo": popped.receipt, "offset": popped.offset}))

    def call(self, code: int, values: dict[str, Any], body: bytes | None = None, *,
             timeout: float = HOLD_HEADROOM) -> RemotingCommand:
        return self.client.connection.exchange(self.client.request(code, {"consumerGroup": self.group,
                                                                          **values},
                                                                   body), timeout=timeout)


def popped(answer: RemotingCommand, broker_name: str = "") -> list[Popped]:
    """Each record of a POP answer with its receipt: its POP_CK when the broker set one (a retry topic's
    message), else built from the header's startOffsetInfo (``processPopResponse``)."""
    header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
    starts: dict[tuple[str, str], int] = {}
    for entry in filter(None, (header.get("startOffsetInfo") or "").split(";")):
        retry, queue, start = entry.split()
        starts[(retry, queue)] = int(start)
    found = []
    for record in decode_records(answer.body):
        receipt = record.properties.get(PropertyKey.POP_CK)
        if receipt is None:
            retry = next((r for r, q in starts if q == str(record.queue_id)), "0")
            receipt = build_extra_info(starts.get((retry, str(record.queue_id)), 0), header["popTime"],
                                       header["invisibleTime"], header["reviveQid"], retry, broker_name,
                                       record.queue_id, record.queue_offset)
        found.append(Popped(record, receipt))
    return found
