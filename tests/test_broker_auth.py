"""ACL 2.0 on the reference broker (spec.auth): the AUTH_* commands with the metadata providers named,
their answers without them, a 4.9.8 wire release that has no such codes, tables that survive a restart,
and authentication of every request. The answers were read off Apache 5.5.0 (the conformance area
``auth`` judges the commands over the wire against both)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import (
    BrokerConfig,
    NamesrvConfig,
    apply_properties,
    load_config_file,
)
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.auth import (
    LOCAL_AUTHENTICATION_PROVIDER,
    LOCAL_AUTHORIZATION_PROVIDER,
    AuthenticationRemark,
    Remark,
)
from rocketmq_spec.spec.auth_resource import ResourcePattern, ip_in_range, is_valid_ip_or_cidr, parse_resource
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests.broker_support import body, run
from tests.java_programs import require_release

C = RequestCode
PROVIDERS = {"authentication_metadata_provider": LOCAL_AUTHENTICATION_PROVIDER,
             "authorization_metadata_provider": LOCAL_AUTHORIZATION_PROVIDER}
ACL = {"policies": [{"entries": [{"resource": "topic:orders*", "actions": ["pub", "Sub"],
                                  "sourceIps": ["10.0.0.0/8"], "decision": "allow"}]}]}


def _broker(store: Path, wire_release: str | None = None, **settings: Any) -> EmbeddedRocketMQ:
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(store), **settings)
    return EmbeddedRocketMQ(broker_config=config, wire_release=wire_release)


async def _ask(client: RemotingClient, code: int, header: dict[str, str],
               body: object = None) -> RemotingCommand:
    data = json.dumps(body).encode() if body is not None else None
    return await client.invoke(client.request(code, header, data))


async def _session(store: Path, steps: Any, wire_release: str | None = None, **settings: Any) -> Any:
    broker = _broker(store, wire_release, **settings)
    await broker.start()
    client = await RemotingClient.connect(broker.broker_addr)
    try:
        return await steps(client)
    finally:
        await client.close()
        await broker.stop()


def test_users_and_acls_survive_a_restart(tmp_path: Path) -> None:
    async def create(client: RemotingClient) -> None:
        assert (await _ask(client, C.AUTH_CREATE_USER, {"username": "alice"}, {"password": "pw"})).code == 0
        answer = await _ask(client, C.AUTH_CREATE_ACL, {"subject": "User:alice"}, ACL)
        assert answer.code == ResponseCode.SUCCESS, answer.remark

    async def read(client: RemotingClient) -> tuple[Any, Any]:
        user = await _ask(client, C.AUTH_GET_USER, {"username": "alice"})
        acl = await _ask(client, C.AUTH_GET_ACL, {"subject": "User:alice"})
        return json.loads(body(user)), json.loads(body(acl))

    run(_session(tmp_path, create, **PROVIDERS))
    user, acl = run(_session(tmp_path, read, **PROVIDERS))
    assert user == {"password": "pw", "userStatus": "enable", "userType": "Normal", "username": "alice"}
    assert acl == {"policies": [{"entries": [{"actions": ["Pub", "Sub"], "decision": "Allow",
                                              "resource": "Topic:orders*", "sourceIps": ["10.0.0.0/8"]}],
                                 "policyType": "Custom"}], "subject": "User:alice"}


def test_update_merges_entries_and_delete_by_resource(tmp_path: Path) -> None:
    async def steps(client: RemotingClient) -> list[Any]:
        await _ask(client, C.AUTH_CREATE_USER, {"username": "bob"}, {"password": "pw"})
        await _ask(client, C.AUTH_CREATE_ACL, {"subject": "User:bob"}, ACL)
        more = {"policies": [{"entries": [
            {"resource": "Group:g1", "actions": ["Sub"], "decision": "Deny"},
            {"resource": "Topic:orders*", "actions": ["Get"], "decision": "Allow"}]}]}
        await _ask(client, C.AUTH_UPDATE_ACL, {"subject": "User:bob"}, more)
        merged = json.loads(body(await _ask(client, C.AUTH_GET_ACL, {"subject": "User:bob"})))
        await _ask(client, C.AUTH_DELETE_ACL, {"subject": "User:bob", "resource": "Topic:orders*"})
        left = json.loads(body(await _ask(client, C.AUTH_GET_ACL, {"subject": "User:bob"})))
        await _ask(client, C.AUTH_DELETE_USER, {"username": "bob"})
        listed = await _ask(client, C.AUTH_LIST_ACL, {})
        return [merged, left, listed.body]

    merged, left, listed = run(_session(tmp_path, steps, **PROVIDERS))
    assert [e["resource"] for e in merged["policies"][0]["entries"]] == ["Topic:orders*", "Group:g1"]
    assert merged["policies"][0]["entries"][0] == {"actions": ["Get"], "decision": "Allow",
                                                   "resource": "Topic:orders*"}
    assert [e["resource"] for e in left["policies"][0]["entries"]] == ["Group:g1"]
    assert listed is None  # deleting the user dropped its ACL


def test_without_providers_the_tables_answer_system_error(tmp_path: Path) -> None:
    async def steps(client: RemotingClient) -> list[RemotingCommand]:
        return [await _ask(client, C.AUTH_CREATE_USER, {"username": "x"}, {"password": "pw"}),
                await _ask(client, C.AUTH_CREATE_USER, {"username": "x"}, {}),
                await _ask(client, C.AUTH_GET_USER, {})]

    created, no_password, blank = run(_session(tmp_path, steps))
    assert (created.code, created.remark) == (ResponseCode.SYSTEM_ERROR, Remark.SYSTEM_ERROR)
    assert (no_password.code, no_password.remark) == (ResponseCode.NO_PERMISSION, Remark.PASSWORD_BLANK)
    assert (blank.code, blank.remark) == (ResponseCode.INVALID_PARAMETER, Remark.USERNAME_BLANK)


def test_a_498_wire_release_does_not_serve_them(tmp_path: Path) -> None:
    async def steps(client: RemotingClient) -> RemotingCommand:
        return await _ask(client, C.AUTH_LIST_USER, {})

    answer = run(_session(tmp_path, steps, wire_release="4.9.8", **PROVIDERS))
    assert answer.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED


@pytest.mark.parametrize(("key", "canonical", "pattern"), [
    ("*", "*", ResourcePattern.ANY), ("topic:*", "Topic:*", ResourcePattern.ANY),
    ("GROUP:g*", "Group:g*", ResourcePattern.PREFIXED), ("Cluster:c", "Cluster:c", ResourcePattern.LITERAL)])
def test_resource_keys_are_read_and_written_canonically(key: str, canonical: str,
                                                        pattern: ResourcePattern) -> None:
    resource = parse_resource(key)
    assert resource is not None and (resource.key, resource.pattern) == (canonical, pattern)


def test_unreadable_resources_and_addresses() -> None:
    assert parse_resource("Queue:x") is None and parse_resource(" ") is None
    assert is_valid_ip_or_cidr("10.0.0.0/8") and is_valid_ip_or_cidr("::1")
    assert not is_valid_ip_or_cidr("999.1.1.1") and not is_valid_ip_or_cidr("10.0.0.0/33")
    assert ip_in_range("10.1.2.3", "10.0.0.0/8") and not ip_in_range("10.1.2.3", "10.1.2.4")


ROOT = Credentials("rocketmq", "12345678")
AUTHENTICATED = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
                 "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER,
                 "authenticationEnabled": "true", "authenticationWhitelist": " 26 ,",
                 "initAuthenticationUser": json.dumps({"username": ROOT.access_key,
                                                       "password": ROOT.secret_key})}
"""Java's broker.conf keys, given alike to the reference broker and to Apache RocketMQ."""
APACHE = "5.5.0"


async def _signed(client: RemotingClient, code: int, header: dict[str, str], body: object = None,
                  credentials: Credentials = ROOT) -> RemotingCommand:
    data = json.dumps(body).encode() if body is not None else None
    return await client.invoke(sign(client.request(code, dict(header), data), credentials))


async def _authentication_answers(client: RemotingClient) -> list[tuple[int, str | None]]:
    answers = [await _ask(client, C.AUTH_LIST_USER, {}),
               await _signed(client, C.AUTH_LIST_USER, {}, credentials=Credentials("nobody", "x")),
               await _signed(client, C.AUTH_LIST_USER, {}, credentials=Credentials(ROOT.access_key, "x")),
               await _signed(client, C.AUTH_CREATE_USER, {"username": "n"}, {"password": "npw"}),
               await _signed(client, C.AUTH_CREATE_USER, {"username": "s"},
                             {"password": "p", "userType": "Super"}, Credentials("n", "npw")),
               await _signed(client, C.AUTH_UPDATE_USER, {"username": "n"}, {"userStatus": "disable"}),
               await _signed(client, C.AUTH_LIST_USER, {}, credentials=Credentials("n", "npw")),
               await _ask(client, C.GET_BROKER_CONFIG, {})]
    return [(answer.code, answer.remark) for answer in answers]


EXPECTED_AUTHENTICATION = [
    (ResponseCode.NO_PERMISSION, AuthenticationRemark.NO_USERNAME),
    (ResponseCode.NO_PERMISSION, "User:nobody is not found."),
    (ResponseCode.NO_PERMISSION, AuthenticationRemark.SIGNATURE),
    (ResponseCode.SUCCESS, remarks.UNSET.template),
    (ResponseCode.SYSTEM_ERROR, Remark.SUPER_CREATE),
    (ResponseCode.SUCCESS, remarks.UNSET.template),
    (ResponseCode.NO_PERMISSION, "User:n is disabled."),
    (ResponseCode.SUCCESS, None)]  # 26 GET_BROKER_CONFIG is whitelisted
"""RMQ-AUTH-AUTHENTICATE: what Apache 5.5.0 answers (test_apache_authenticates_alike)."""


def _java_settings(store: Path, wire_release: str | None = None) -> EmbeddedRocketMQ:
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(store))
    apply_properties(AUTHENTICATED, config, NamesrvConfig())
    return EmbeddedRocketMQ(broker_config=config, wire_release=wire_release)


def test_authentication_refuses_what_a_known_user_did_not_sign(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[int, str | None]]:
        broker = await _java_settings(tmp_path).start()
        client = await RemotingClient.connect(broker.broker_addr)
        try:
            return await _authentication_answers(client)
        finally:
            await client.close()
            await broker.stop()

    assert run(scenario()) == EXPECTED_AUTHENTICATION


@pytest.mark.interop
def test_apache_authenticates_alike(tmp_path: Path) -> None:
    """The same requests to Apache RocketMQ 5.5.0's broker with the same broker.conf keys."""
    require_release(APACHE)

    async def scenario(addr: str) -> list[tuple[int, str | None]]:
        client = await RemotingClient.connect(addr)
        try:
            return await _authentication_answers(client)
        finally:
            await client.close()

    with ApacheRocketMQ(APACHE, home=tmp_path / "apache", broker_config=AUTHENTICATED, heap_mb=384) as apache:
        assert run(scenario(apache.broker_addr)) == EXPECTED_AUTHENTICATION


def test_authentication_needs_a_release_with_acl_2(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"5\.3\.0\+ wire release"):
        run(_java_settings(tmp_path, "4.9.8").start())


def test_authorization_needs_a_release_with_acl_2(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("authorizationEnabled=true\n", encoding="utf-8")
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(tmp_path))
    load_config_file(conf, config, NamesrvConfig())
    assert config.authorization_enabled
    with pytest.raises(ValueError, match=r"authorizationEnabled needs a 5\.3\.0\+ wire release"):
        run(EmbeddedRocketMQ(broker_config=config, wire_release="4.9.8").start())
