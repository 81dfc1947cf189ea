"""``rmq-admin``'s ACL 2.0 commands (createUser ... listAcl): one scenario, with mqadmin's options, against
the embedded broker and against Apache RocketMQ 5.5.0's broker, both naming the local metadata providers;
the rows each prints must be the same, and be what the commands asked for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.admin.auth import acl_info
from rocketmq_spec.admin.cli import main
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import cached_classpath
from rocketmq_spec.apache.releases import release
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.auth import ACL_INFO, LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER

APACHE = "5.5.0"
PROVIDERS = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
             "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER}
USER = "rmqAdminAuthUser"
SUBJECT = f"User:{USER}"


def _admin(capsys: pytest.CaptureFixture[str], ns: str, *argv: str) -> Any:
    code = main([argv[0], "-n", ns, *argv[1:], "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _scenario(capsys: pytest.CaptureFixture[str], ns: str, broker: str) -> dict[str, Any]:
    """Every command once, in an order where each one's effect shows in the next read."""
    b = ("-b", broker)
    seen: dict[str, Any] = {}
    seen["createUser"] = _admin(capsys, ns, "createUser", *b, "-u", USER, "-p", "secret1")
    seen["getUser"] = _admin(capsys, ns, "getUser", *b, "-u", USER)
    seen["updateUser"] = _admin(capsys, ns, "updateUser", *b, "-u", USER, "-p", "secret2", "-s", "disable")
    seen["listUser"] = _admin(capsys, ns, "listUser", *b, "-f", "AdminAuth")
    seen["createAcl"] = _admin(capsys, ns, "createAcl", *b, "-s", SUBJECT, "-r",
                               "Topic:orders,Group:billing*", "-a", "Pub,Sub", "-i", "127.0.0.1,10.0.0.0/8",
                               "-d", "Allow")
    seen["updateAcl"] = _admin(capsys, ns, "updateAcl", *b, "-s", SUBJECT, "-r", "Topic:orders", "-a", "Sub",
                               "-d", "Deny")
    seen["getAcl"] = _admin(capsys, ns, "getAcl", *b, "-s", SUBJECT)
    seen["deleteAcl"] = _admin(capsys, ns, "deleteAcl", *b, "-s", SUBJECT, "-r", "Group:billing*")
    seen["listAcl"] = _admin(capsys, ns, "listAcl", *b, "-s", USER)
    seen["deleteUser"] = _admin(capsys, ns, "deleteUser", *b, "-u", USER)
    seen["gone"] = _admin(capsys, ns, "listUser", *b, "-f", "AdminAuth")
    return seen


def expected_rows(broker: str) -> dict[str, Any]:
    def done(verb: str) -> list[dict[str, str]]:
        return [{"broker": broker, "result": f"{verb} success"}]

    def row(resource: str, actions: str, ips: str, decision: str) -> dict[str, str]:
        return {"Subject": SUBJECT, "PolicyType": "Custom", "Resource": resource, "Actions": actions,
                "SourceIp": ips, "Decision": decision}

    orders = row("Topic:orders", "[Sub]", "null", "Deny")
    return {
        "createUser": done("create user"),
        "getUser": [{"UserName": USER, "Password": "secret1", "UserType": "Normal", "UserStatus": "enable"}],
        "updateUser": done("update user"),
        "listUser": [{"UserName": USER, "Password": "secret2", "UserType": "Normal",
                      "UserStatus": "disable"}],
        "createAcl": done("create acl"), "updateAcl": done("update acl"),
        "getAcl": [orders, row("Group:billing*", "[Pub, Sub]", "[127.0.0.1, 10.0.0.0/8]", "Allow")],
        "deleteAcl": done("delete acl"), "listAcl": [orders],
        "deleteUser": done("delete user"), "gone": [],
    }


def test_createAcl_body_is_mqadmins() -> None:
    """``AclInfo.of``: one untyped policy, an entry per resource with the same actions, IPs and decision;
    fastjson2 writes keys in order and leaves nulls out."""
    body = encode_body(ACL_INFO, acl_info(SUBJECT, "Topic:a, Group:b", "Pub", None, "Allow"))
    assert body == (b'{"policies":[{"entries":[{"actions":["Pub"],"decision":"Allow","resource":"Topic:a"},'
                    b'{"actions":["Pub"],"decision":"Allow","resource":"Group:b"}]}],"subject":"User:rmqAdminAuthUser"}')


@pytest.fixture
def embedded() -> Iterator[SyncEmbeddedRocketMQ]:
    config = BrokerConfig(listen_port=0, authentication_metadata_provider=LOCAL_AUTHENTICATION_PROVIDER,
                          authorization_metadata_provider=LOCAL_AUTHORIZATION_PROVIDER)
    with SyncEmbeddedRocketMQ(broker_config=config) as mq:
        yield mq


def test_reference_broker(embedded: SyncEmbeddedRocketMQ, capsys: pytest.CaptureFixture[str]) -> None:
    seen = _scenario(capsys, embedded.namesrv_addr, embedded.broker_addr)
    assert seen == expected_rows(embedded.broker_addr)


def test_a_command_without_b_or_c_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["getUser", "-n", "127.0.0.1:9876", "-u", USER])
    assert code == 1 and "getUser needs -b BROKER_ADDR or -c CLUSTER" in capsys.readouterr().err


@pytest.mark.interop
def test_apache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if cached_classpath(release(APACHE)) is None:
        pytest.skip(f"Apache RocketMQ {APACHE} is not provisioned (rmq-apache classpath {APACHE})")
    with ApacheRocketMQ(APACHE, home=tmp_path / "apache", broker_config=PROVIDERS, heap_mb=384) as apache:
        assert _scenario(capsys, apache.namesrv_addr, apache.broker_addr) == expected_rows(apache.broker_addr)
