"""ACL 2.0 authorization of remoting requests (``authorizationEnabled``): the resources a send, a heartbeat
and an offset query need, and the broker's answer 16 NO_PERMISSION when the signed user's ACL does not
allow them. Run with ``--authn`` / ``--auth-user`` only; judged when the broker reports
authorizationEnabled=true (``authz_support``)."""

from __future__ import annotations

import json
from typing import Any

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

from .admin_support import properties
from .authz_support import denied, entry, signed, user_with_acl
from .messaging import Client
from .support import expect_code

TOPIC, GROUP = "rmq_spec_authz_topic", "rmq_spec_authz_group"


def _refused(check: Check, answer: RemotingCommand, expected: str) -> None:
    expect_code(check, "refused", answer, ResponseCode.NO_PERMISSION)
    check.remark("remark", expected, answer.remark)


def _heartbeat() -> bytes:
    subscription = {"topic": TOPIC, "subString": "*", "classFilterMode": False, "tagsSet": [], "codeSet": [],
                    "subVersion": 0, "expressionType": "TAG"}
    consumer = {"groupName": GROUP, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet": [subscription],
                "unitMode": False}
    return json.dumps({"clientID": "127.0.0.1@authz", "consumerDataSet": [consumer],
                       "producerDataSet": []}).encode()


@table("send_refused", [
    Row("no-acl", "RMQ-AUTHZ-REMOTING", "A send by a Normal user without an ACL is refused 16 \"User:<u> has "
        "no permission to access Topic:<t> from <ip>, no matched policies.\".",
        ([], TOPIC, f"Topic:{TOPIC}")),
    Row("retry-topic", "RMQ-AUTHZ-REMOTING", "A send to %RETRY%<group> needs Sub on the group: Pub on a "
        "topic does not let it through.", ([entry(f"Topic:{TOPIC}", ["Pub"])], RETRY_PREFIX + GROUP,
                                            f"Group:{GROUP}")),
    Row("sub-only", "RMQ-AUTHZ-REMOTING", "A send needs Pub: Sub on the topic does not let it through.",
        ([entry(f"Topic:{TOPIC}", ["Sub"])], TOPIC, f"Topic:{TOPIC}")),
])
def test_send_refused(send_refused: tuple[list[dict[str, Any]], str, str], broker: Server, wire: Wire,
                      auth_user: Credentials, check: Check) -> None:
    entries, topic, resource = send_refused
    with user_with_acl(wire, broker, auth_user, check, entries) as user:
        answer = Client(signed(wire, broker, user), check).send_request(topic)
    _refused(check, answer, denied(user, resource))


@case("RMQ-AUTHZ-REMOTING", "A send by a user allowed Pub on the topic is not refused for permission.")
def test_send_allowed(broker: Server, wire: Wire, auth_user: Credentials, check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Pub"])]) as user:
        answer = Client(signed(wire, broker, user), check).send_request(TOPIC)
    check.that("not NO_PERMISSION", answer.code != ResponseCode.NO_PERMISSION, expected="any other code",
               actual=f"{answer.code} {answer.remark}")


@case("RMQ-AUTHZ-REMOTING", "A heartbeat needs Sub on each consumer group and each subscribed topic: a user "
      "allowed the group only is refused on the topic.")
def test_heartbeat_needs_topic(broker: Server, wire: Wire, auth_user: Credentials, check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Group:{GROUP}", ["Sub"])]) as user:
        answer = signed(wire, broker, user).call(RequestCode.HEART_BEAT, None, _heartbeat())
    _refused(check, answer, denied(user, f"Topic:{TOPIC}"))


@case("RMQ-AUTHZ-REMOTING", "QUERY_CONSUMER_OFFSET needs Sub or Get on the topic and on the group: a user "
      "allowed the topic only is refused on the group.")
def test_offset_query_needs_group(broker: Server, wire: Wire, auth_user: Credentials, check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Get"])]) as user:
        answer = signed(wire, broker, user).call(RequestCode.QUERY_CONSUMER_OFFSET,
                                                 {"consumerGroup": GROUP, "topic": TOPIC, "queueId": "0"})
    _refused(check, answer, denied(user, f"Group:{GROUP}"))


@case("RMQ-AUTHZ-REMOTING", "An admin command of a cluster-level header class (AUTH_LIST_USER: Cluster, Get) "
      "by a Normal user without an entry for the cluster is refused on Cluster:<brokerClusterName>.")
def test_cluster_command_needs_cluster(broker: Server, wire: Wire, auth_user: Credentials,
                                       check: Check) -> None:
    cluster = properties(signed(wire, broker, auth_user).call(RequestCode.GET_BROKER_CONFIG).body).get(
        "brokerClusterName", "")
    with user_with_acl(wire, broker, auth_user, check, [entry("Topic:*", ["All"])]) as user:
        answer = signed(wire, broker, user).call(RequestCode.AUTH_LIST_USER, {})
    _refused(check, answer, denied(user, f"Cluster:{cluster}"))


@case("RMQ-AUTHZ-REMOTING", "GET_MAX_OFFSET needs Get on its topic (its header class's annotation): Sub does "
      "not let it through, Get does.")
def test_max_offset_needs_get(broker: Server, wire: Wire, auth_user: Credentials, check: Check) -> None:
    header = {"topic": TOPIC, "queueId": "0"}
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Sub"])]) as user:
        answer = signed(wire, broker, user).call(RequestCode.GET_MAX_OFFSET, header)
    _refused(check, answer, denied(user, f"Topic:{TOPIC}"))
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Get"])]) as user:
        answer = signed(wire, broker, user).call(RequestCode.GET_MAX_OFFSET, header)
    check.that("not NO_PERMISSION", answer.code != ResponseCode.NO_PERMISSION, expected="any other code",
               actual=f"{answer.code} {answer.remark}")
