"""Codes by release: every code a server writes, in the requests it sends and the answers it gives, is one
its release declares (``rocketmq_spec.spec.codes``, read off each release's RequestCode and ResponseCode).

The release is the one the server's own ``version`` word names, so a 5.x server answering with a code
only 4.x declares (or the other way round) fails here.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Connection, Wire
from rocketmq_spec.spec.codes import RequestCode, code_name
from rocketmq_spec.spec.releases import release_of_version
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

from .messaging import Client
from .support import unique
from .test_clients import _joined
from .test_headers import UNKNOWN_CODE


def _declared(check: Check, what: str, command: RemotingCommand) -> None:
    """``command``'s code is declared by the release its version word names."""
    release = release_of_version(command.version)
    check.that(f"{what}: a covered release announced", release is not None, expected="4.9.0 or newer",
               actual=command.version)
    assert release is not None
    name = code_name(command.code, is_response=command.is_response, release=release.name)
    check.that(f"{what}: code {command.code} declared by {release.name}", name is not None,
               expected=f"a {'Response' if command.is_response else 'Request'}Code of {release.name}",
               actual=command.code)
    check.note(f"{what}: code name", name)


@case("RMQ-CODE-REQUEST", "A request a broker sends a client (NOTIFY_CONSUMER_IDS_CHANGED when a second "
      "consumer joins the group) has a RequestCode of the broker's release.")
def test_server_request_code(broker: Server, client: Client, wire: Wire, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    _joined(client, group, topic)
    client.connection.drain()
    _joined(Client(wire.connect(broker.endpoint), check), group, topic)
    pushed = client.connection.next_command(RESPONSE_TIMEOUT)
    check.that("a request pushed to the first consumer", pushed is not None and not pushed.is_response,
               expected="a request", actual=pushed)
    assert pushed is not None
    _declared(check, "pushed request", pushed)


Ask = Callable[[Connection], RemotingCommand]

ANSWERS_NAMESRV: list[tuple[str, str, Ask]] = [
    ("route-unknown-topic", "a route of an unknown topic (17)",
     lambda c: c.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": unique("absent")})),
    ("kv-unknown-key", "GET_KV_CONFIG of an unknown key (22)",
     lambda c: c.call(RequestCode.GET_KV_CONFIG, {"namespace": unique("ns"), "key": "k"})),
    ("cluster-info", "GET_BROKER_CLUSTER_INFO (0)", lambda c: c.call(RequestCode.GET_BROKER_CLUSTER_INFO)),
]
ANSWERS_BROKER: list[tuple[str, str, Ask]] = [
    ("unknown-code", "an unknown request code (3)", lambda c: c.call(UNKNOWN_CODE)),
    ("offset-unknown-group", "QUERY_CONSUMER_OFFSET of an unknown group",
     lambda c: c.call(RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": unique("cg"),
                                                          "topic": DEFAULT_TOPIC, "queueId": "0"})),
    ("bad-topic-name", "UPDATE_AND_CREATE_TOPIC of a name with spaces",
     lambda c: c.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
         "topic": "bad name", "defaultTopic": DEFAULT_TOPIC, "readQueueNums": "1", "writeQueueNums": "1",
         "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"})),
    ("pull-unknown-topic", "PULL_MESSAGE of an unknown topic",
     lambda c: c.call(RequestCode.PULL_MESSAGE, {
         "consumerGroup": unique("cg"), "topic": unique("absent"), "queueId": "0", "queueOffset": "0",
         "maxMsgNums": "1", "sysFlag": "2", "commitOffset": "0", "suspendTimeoutMillis": "0",
         "subscription": "*", "subVersion": "0"})),
]


def _rows(role: str, asks: list[tuple[str, str, Ask]]) -> list[Row]:
    return [Row(f"{role}-{name}", "RMQ-CODE-RESPONSE", f"The {role}'s answer to {what} has a ResponseCode of "
                "its release.", ask) for name, what, ask in asks]


@table("ask", _rows("namesrv", ANSWERS_NAMESRV))
def test_namesrv_response_code(ask: Ask, namesrv: Server, wire: Wire, check: Check) -> None:
    _declared(check, "answer", ask(wire.connect(namesrv.endpoint)))


@table("ask", _rows("broker", ANSWERS_BROKER))
def test_broker_response_code(ask: Ask, broker: Server, wire: Wire, check: Check) -> None:
    _declared(check, "answer", ask(wire.connect(broker.endpoint)))
