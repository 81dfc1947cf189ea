"""``rmq-admin``'s ACL 2.0 commands (createUser ... listAcl): one scenario, with mqadmin's options, against
the embedded broker and against Apache RocketMQ 5.5.0's broker, both naming the local metadata providers
(Apache's authenticating every request, which rmq-admin signs); the rows each prints must be the same, and
be what the commands asked for. Then the signing itself: unsigned, wrong and right keys, mqadmin's
tools.yml."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.admin.auth import acl_info
from rocketmq_spec.admin.cli import main
from rocketmq_spec.admin.options import credentials
from rocketmq_spec.admin.wire import AdminError
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig, apply_properties
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.acl_file import ROCKETMQ_HOME_ENV, TOOLS_FILE
from rocketmq_spec.spec.auth import ACL_INFO, LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from tests.java_programs import require_release

APACHE = "5.5.0"
PROVIDERS = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
             "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER}
USER = "rmqAdminAuthUser"
SUBJECT = f"User:{USER}"


def _admin(capsys: pytest.CaptureFixture[str], ns: str, *argv: str, keys: tuple[str, ...] = ()) -> Any:
    code = main([argv[0], "-n", ns, *argv[1:], "--json", *keys])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _scenario(capsys: pytest.CaptureFixture[str], ns: str, broker: str,
              keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every command once, in an order where each one's effect shows in the next read; ``keys``: the
    options that sign them."""
    b = ("-b", broker)
    seen: dict[str, Any] = {}

    def run(*argv: str) -> Any:
        return _admin(capsys, ns, *argv, keys=keys)

    seen["createUser"] = run("createUser", *b, "-u", USER, "-p", "secret1")
    seen["getUser"] = run("getUser", *b, "-u", USER)
    seen["updateUser"] = run("updateUser", *b, "-u", USER, "-p", "secret2", "-s", "disable")
    seen["listUser"] = run("listUser", *b, "-f", "AdminAuth")
    seen["createAcl"] = run("createAcl", *b, "-s", SUBJECT, "-r", "Topic:orders,Group:billing*", "-a",
                            "Pub,Sub", "-i", "127.0.0.1,10.0.0.0/8", "-d", "Allow")
    seen["updateAcl"] = run("updateAcl", *b, "-s", SUBJECT, "-r", "Topic:orders", "-a", "Sub", "-d", "Deny")
    seen["getAcl"] = run("getAcl", *b, "-s", SUBJECT)
    seen["deleteAcl"] = run("deleteAcl", *b, "-s", SUBJECT, "-r", "Group:billing*")
    seen["listAcl"] = run("listAcl", *b, "-s", USER)
    seen["deleteUser"] = run("deleteUser", *b, "-u", USER)
    seen["gone"] = run("listUser", *b, "-f", "AdminAuth")
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




ROOT = ("rocketmq", "12345678")
AUTHENTICATED = {**PROVIDERS, "authenticationEnabled": "true",
                 "initAuthenticationUser": json.dumps({"username": ROOT[0], "password": ROOT[1]})}
"""Java's broker.conf keys of a broker that authenticates every request, its first user a Super one."""


def _signed_listing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path, ns: str,
                    broker: str) -> list[tuple[int, str]]:
    """listUser unsigned, with wrong keys, with the right ones, and with them in mqadmin's tools.yml."""
    monkeypatch.delenv(ROCKETMQ_HOME_ENV, raising=False)
    seen = []
    for keys in ((), ("--access-key", ROOT[0], "--secret-key", "wrong"),
                 ("--access-key", ROOT[0], "--secret-key", ROOT[1]), None):
        if keys is None:
            (home / TOOLS_FILE).parent.mkdir(parents=True, exist_ok=True)
            (home / TOOLS_FILE).write_text(f"accessKey: {ROOT[0]}\nsecretKey: {ROOT[1]}\n")
            monkeypatch.setenv(ROCKETMQ_HOME_ENV, str(home))
        code = main(["listUser", "-n", ns, "-b", broker, "--json", *(keys or ())])
        out, err = capsys.readouterr()
        seen.append((code, out if code == 0 else err))
    return seen


def _judge_signed_listing(seen: list[tuple[int, str]]) -> None:
    unsigned, wrong, signed, from_tools = seen
    assert unsigned[0] == 1 and "NO_PERMISSION (16)" in unsigned[1], unsigned
    assert wrong[0] == 1 and "NO_PERMISSION (16)" in wrong[1], wrong
    assert signed[0] == 0 and [row["UserName"] for row in json.loads(signed[1])] == [ROOT[0]], signed
    assert from_tools == signed


def test_an_authenticating_broker_takes_signed_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(tmp_path / "store"))
    apply_properties(AUTHENTICATED, config, NamesrvConfig())
    with SyncEmbeddedRocketMQ(broker_config=config) as mq:
        _judge_signed_listing(_signed_listing(capsys, monkeypatch, tmp_path / "home", mq.namesrv_addr,
                                              mq.broker_addr))


@pytest.mark.interop
def test_apache(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenario signed, against Apache's broker authenticating every request; then the signing."""
    require_release(APACHE)
    keys = ("--access-key", ROOT[0], "--secret-key", ROOT[1])
    with ApacheRocketMQ(APACHE, home=tmp_path / "apache", broker_config=AUTHENTICATED, heap_mb=384) as apache:
        assert _scenario(capsys, apache.namesrv_addr, apache.broker_addr, keys) == \
            expected_rows(apache.broker_addr)
        _judge_signed_listing(_signed_listing(capsys, monkeypatch, tmp_path / "home", apache.namesrv_addr,
                                              apache.broker_addr))


@pytest.mark.parametrize(("given", "tools", "expected"), [
    (("ak", "sk"), "accessKey: other\nsecretKey: other\n", Credentials("ak", "sk")),
    ((None, None), "accessKey: ak\nsecretKey: sk\n", Credentials("ak", "sk")),
    ((None, None), "accessKey: ak\nsecretKey: ''\n", None),
    ((None, None), "", None),
    ((None, None), None, None),
])
def test_credentials_are_the_options_else_mqadmins_tools_yml(tmp_path: Path,
                                                              given: tuple[str | None, str | None],
                                                              tools: str | None,
                                                              expected: Credentials | None) -> None:
    if tools is not None:
        (tmp_path / TOOLS_FILE).parent.mkdir(parents=True)
        (tmp_path / TOOLS_FILE).write_text(tools)
    assert credentials(*given, str(tmp_path)) == expected


@pytest.mark.parametrize(("given", "tools", "message"), [
    (("ak", None), None, "--access-key and --secret-key are given together"),
    (("", "sk"), None, "--access-key and --secret-key are given together"),
    ((None, None), "- a list\n", "expected a map with accessKey and secretKey, found list"),
    ((None, None), "accessKey: [unclosed\n", "cannot read the credentials in"),
])
def test_bad_credentials_are_one_line(tmp_path: Path, given: tuple[str | None, str | None], tools: str | None,
                                      message: str) -> None:
    if tools is not None:
        (tmp_path / TOOLS_FILE).parent.mkdir(parents=True)
        (tmp_path / TOOLS_FILE).write_text(tools)
    with pytest.raises(AdminError, match=re.escape(message)) as caught:
        credentials(*given, str(tmp_path))
    assert "\n" not in str(caught.value)


def test_one_key_alone_is_refused_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["listUser", "-n", "127.0.0.1:1", "-b", "127.0.0.1:1", "--access-key", "ak"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "--access-key and --secret-key are given together" in err
    assert "cannot connect" not in err
