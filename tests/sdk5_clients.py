"""Run Apache RocketMQ's 5.x SDKs (rocketmq_spec.conformance.clients.sdk5) against a gRPC endpoint and
read what they did.

Each call runs one driver in its own process with a hard timeout and returns its JSON events; a failed
run raises ``SdkRunError`` with the events and the stderr tail, so a test failure says what the SDK saw.
The broker side of a test (typed topics, reading back what was stored) goes over remoting.
"""

from __future__ import annotations

import json
from typing import Any

from rocketmq_spec.admin.groups import sub_group_body
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.conformance.clients import sdk5 as installer
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests import process_tree
from tests.messaging_support import pull

RUN_TIMEOUT_S = 180.0


SDK_NAMES = installer.SDK_NAMES


class SdkRunError(AssertionError):
    def __init__(self, sdk: str, scenario: str, events: list[dict[str, Any]], stderr: str) -> None:
        super().__init__(f"{sdk} driver {scenario} failed: events {events}, stderr tail:\n{stderr[-3000:]}")
        self.events = events


def availability(sdk: str) -> str | None:
    """None when the SDK is installed and its driver built here, else why not."""
    (result,) = installer.install((sdk,))
    return None if result.available else str(result.reason)


def run(sdk: str, scenario: str, endpoint: str, *, check: bool = True,
        **settings: Any) -> list[dict[str, Any]]:
    """Run ``scenario`` as the client suite does (``count=10`` is ``RMQ_COUNT=10``); the driver's events.
    With ``check``, the run must end with ``done``, exit 0 and report no error."""
    argv, env = installer.driver_command(next(s for s in installer.SDKS if s.name == sdk))
    env.update({"RMQ_PROTOCOL": "grpc", "RMQ_ENDPOINT": endpoint, "RMQ_TLS": "0", "RMQ_TIMEOUT_S": "60"})
    env.update({f"RMQ_{key.upper()}": str(value) for key, value in settings.items()})
    done = process_tree.run([*argv, scenario], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                            check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    failed = done.returncode != 0 or not events or events[-1]["event"] != "done" or of(events, "error")
    if check and failed:
        raise SdkRunError(sdk, scenario, events, done.stderr)
    return events


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


async def create_group(client: RemotingClient, group: str) -> None:
    """A consumer group on the broker, as ``mqadmin updateSubGroup`` makes it: 5.5.0's proxy refuses a
    consumer's settings for a group its broker does not have (RMQ-GRPC-SETTINGS-GROUP)."""
    answer = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None,
                                                sub_group_body(group, {})))
    if answer.code != ResponseCode.SUCCESS:
        raise AssertionError(f"group {group} not created: {answer.code} {answer.remark}")


async def create_topic(client: RemotingClient, topic: str, message_type: str, queues: int = 4) -> None:
    header = {"topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": str(queues),
              "writeQueueNums": str(queues), "perm": "6", "topicFilterType": "SINGLE_TAG", "order": "false",
              "attributes": f"+message.type={message_type}"}
    answer = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC, header))
    assert answer.code == ResponseCode.SUCCESS, answer.remark


async def stored(client: RemotingClient, topic: str, queues: int = 4) -> list[MessageRecord]:
    """Every message a consumer of ``topic`` can pull now, queue by queue."""
    records: list[MessageRecord] = []
    for queue_id in range(queues):
        answer = await pull(client, topic, queue_id, 0)
        if answer.code == ResponseCode.SUCCESS:
            records += decode_records(answer.body)
    return records
