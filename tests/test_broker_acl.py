"""The reference broker with ``aclEnable=true``: where it finds the file, when it refuses to start, the check
itself (``rocketmq_spec.reference_broker.acl.guard``), hot reload and the file rewrites of the admin commands.

The check's answers over the wire are judged by the conformance ``acl`` area (``test_conformance_acl``);
these tests cover what that area cannot reach: start-up, bad files, pattern forms and Java's quirks.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.reference_broker.acl.addresses import AddressPatternError, compile_pattern
from rocketmq_spec.reference_broker.acl.guard import AccessGuard, AclRefused, access_guard, needed_resources
from rocketmq_spec.reference_broker.acl.plain_file import AclFileError
from rocketmq_spec.reference_broker.cli import main as broker_main
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig, LoadedConfig, NamesrvConfig, load_config_file
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.acl import Permission, Refusal
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.releases import ordinal
from rocketmq_spec.spec.system_topics import RETRY_PREFIX
from tests.broker_support import run

PEER = "127.0.0.1:50000"
ELSEWHERE = "10.1.2.3:50000"


@pytest.fixture
def acl_file(tmp_path: Path) -> Path:
    return policy.write_acl_file(tmp_path / "conf" / "plain_acl.yml")


@pytest.fixture
def guard(acl_file: Path) -> AccessGuard:
    return AccessGuard(acl_file)


def _refusal(guard: AccessGuard, command: RemotingCommand, peer: str = ELSEWHERE) -> str | None:
    try:
        guard.check(command, peer)
    except AclRefused as refused:
        return refused.remark
    return None


# -- configuration and start-up ------------------------------------------------------------------------


def test_broker_conf_enables_acl_with_the_file_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("ROCKETMQ_HOME", raising=False)
    conf = tmp_path / "broker.conf"
    conf.write_text("aclEnable=true\n")
    broker = BrokerConfig()
    assert load_config_file(conf, broker, NamesrvConfig()) == LoadedConfig()
    assert broker.acl_enable and broker.acl_file == str(tmp_path / "plain_acl.yml")
    assert "aclEnable" not in caplog.text, "honoured, not reported as having no effect"
    conf.write_text("aclEnable=true\naclFile=conf/my_acl.yml\n")
    load_config_file(conf, broker := BrokerConfig(), NamesrvConfig())
    assert broker.acl_file == str(tmp_path / "conf" / "my_acl.yml")


def test_rocketmq_home_is_where_java_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rocketmq_spec.reference_broker.acl.guard import acl_file_path
    monkeypatch.setenv("ROCKETMQ_HOME", str(tmp_path))
    assert acl_file_path(BrokerConfig(acl_enable=True)) == tmp_path / "conf" / "plain_acl.yml"
    monkeypatch.delenv("ROCKETMQ_HOME")
    with pytest.raises(AclFileError, match="no ACL file"):
        acl_file_path(BrokerConfig(acl_enable=True))


@pytest.mark.parametrize(("content", "reason"), [
    (None, "does not exist"),
    ("accounts: [\n", "cannot read"),
    ("accounts:\n  - accessKey: short\n    secretKey: longEnoughSecret\n", "length should longer than 6"),
    ("globalWhiteRemoteAddresses: ['300.1.1.x']\n", "globalWhiteRemoteAddresses"),
    ("accounts:\n  - accessKey: rocketmq2\n    secretKey: 12345678\n    topicPerms: [a=b=c]\n",
     "Parse resource permission failed"),
])
def test_unusable_file_refuses_start_in_one_line(tmp_path: Path, content: str | None, reason: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    acl = tmp_path / "plain_acl.yml"
    if content is not None:
        acl.write_text(content)
    conf = tmp_path / "broker.conf"
    conf.write_text(f"aclEnable=true\naclFile={acl}\nstorePathRootDir={tmp_path / 'store'}\n"
                    f"wireRelease={policy.ACL_RELEASE}\n")
    assert broker_main(["-c", str(conf), "--namesrv-port", "0", "--broker-port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and reason in err and err.startswith("rmq-broker: not starting:")


def test_a_release_without_acl_1_reads_no_acl_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Apache RocketMQ 5.3.3 dropped the acl module: with aclEnable=true on a file it could not use, its
    broker started and served unsigned requests. Answering as 5.3.3 or 5.5.0, so does this one."""
    acl = tmp_path / "plain_acl.yml"
    acl.write_text("accounts:\n  - accessKey: short\n    secretKey: longEnoughSecret\n")
    for release in ("5.3.3", "5.5.0"):
        config = BrokerConfig(acl_enable=True, acl_file=str(acl), wire_release=release)
        assert access_guard(config, ordinal(release)) is None
        assert f"is read by nothing in the release this broker answers as ({release})" in caplog.text
    with pytest.raises(AclFileError, match="length should longer than 6"):
        access_guard(BrokerConfig(acl_enable=True, acl_file=str(acl)), ordinal("5.3.2"))


# -- the check -----------------------------------------------------------------------------------------


def _signed(code: int, fields: dict[str, str], body: bytes | None = None,
            credentials: Credentials = policy.USER) -> RemotingCommand:
    return sign(RemotingCommand.request(code, fields, body), credentials)


def test_yaml_number_secret_is_text(tmp_path: Path) -> None:
    path = tmp_path / "plain_acl.yml"
    path.write_text("accounts:\n  - accessKey: RocketMQ\n    secretKey: 12345678\n    admin: true\n")
    guard = AccessGuard(path)
    assert _refusal(guard, _signed(21, {}, credentials=Credentials("RocketMQ", "12345678"))) is None


def test_resources_follow_java_hashmap_order(guard: AccessGuard) -> None:
    """A pull needing two refused resources is refused for the one Java's HashMap yields first."""
    fields = {"topic": policy.TOPIC_PUB, "consumerGroup": policy.GROUP_DENY}
    command = _signed(RequestCode.PULL_MESSAGE, fields)
    needs = needed_resources(command)
    assert set(needs) == {policy.TOPIC_PUB, f"{RETRY_PREFIX}{policy.GROUP_DENY}"}
    first = next(iter(needs))
    label = f"topic:{first}" if first == policy.TOPIC_PUB else f"group:{policy.GROUP_DENY}"
    assert _refusal(guard, command) == Refusal.NO_PERMISSION.remark(resource=label)


def test_heartbeat_resources_come_from_the_body() -> None:
    body = encode_body(HEARTBEAT_DATA, {"clientID": "c", "producerDataSet": [], "consumerDataSet": [
        {"groupName": "g1", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
         "consumeType": "CONSUME_PASSIVELY",
         "messageModel": "CLUSTERING", "unitMode": False, "subscriptionDataSet": [
             {"classFilterMode": False, "codeSet": [], "expressionType": "TAG", "subString": "*",
              "subVersion": 0, "tagsSet": [], "topic": "t1"}]}]})
    needs = needed_resources(RemotingCommand.request(RequestCode.HEART_BEAT, {}, body))
    assert needs == {"%RETRY%g1": Permission.SUB, "t1": Permission.SUB}


def test_unreadable_requests_are_refused_like_java(guard: AccessGuard) -> None:
    """Answers of the 4.9.8 peer: a missing group or a malformed number adds no resource and refuses
    nothing; an absent heartbeat body refuses the request from inside ``PlainAccessValidator.parse``."""
    missing = _signed(RequestCode.UPDATE_CONSUMER_OFFSET, {"topic": "t", "queueId": "x"})
    assert _refusal(guard, missing) == Refusal.NO_DEFAULT_PERMISSION.remark(resource="topic:t")
    no_body = _signed(RequestCode.HEART_BEAT, {})
    assert _refusal(guard, no_body) == Refusal.UNREADABLE_REQUEST.remark(
        detail='Cannot read the array length because "bytes" is null')


def test_unknown_code_is_checked_too(guard: AccessGuard) -> None:
    assert _refusal(guard, RemotingCommand.request(9999, {})) == Refusal.NO_ACCESS_KEY.remark()


@pytest.mark.parametrize(("pattern", "inside", "outside"), [
    ("*", ["1.2.3.4", "::1"], []),
    ("", [], ["127.0.0.1"]),
    ("192.168.0.1", ["192.168.0.1"], ["192.168.0.2"]),
    ("192.168.0.1,10.0.0.1", ["10.0.0.1"], ["10.0.0.2"]),
    ("192.168.0.{1,2}", ["192.168.0.2"], ["192.168.0.3"]),
    ("192.168.*.*", ["192.168.77.1"], ["192.169.0.1"]),
    ("192.168.1.1-100", ["192.168.1.100"], ["192.168.1.101", "192.168.2.50"]),
    ("::1", ["0:0:0:0:0:0:0:1"], ["::2"]),
    ("1:2:3:4:5:6:7:{8,9}", ["1:2:3:4:5:6:7:9"], ["1:2:3:4:5:6:7:a"]),
    ("1:2:3:4:5:6:7:1-ff", ["1:2:3:4:5:6:7:fe"], ["1:2:3:4:5:6:7:100"]),
])
def test_address_patterns(pattern: str, inside: list[str], outside: list[str]) -> None:
    match = compile_pattern(pattern)
    assert all(match(ip) for ip in inside) and not any(match(ip) for ip in outside)


@pytest.mark.parametrize("pattern", ["192.168.0.{1", "1.2.3", "192.168.1.100-1", "not-an-address"])
def test_unreadable_patterns(pattern: str) -> None:
    with pytest.raises(AddressPatternError):
        compile_pattern(pattern)


# -- reload and the admin commands ---------------------------------------------------------------------


def test_reload_keeps_removed_keys_known(guard: AccessGuard, acl_file: Path) -> None:
    data = yaml.safe_load(acl_file.read_text())
    data["accounts"] = [a for a in data["accounts"] if a["accessKey"] != policy.OPEN.access_key]
    acl_file.write_text(yaml.safe_dump(data))
    os.utime(acl_file, (1, 1))
    assert guard.reload_if_changed()
    assert _refusal(guard, _signed(21, {}, credentials=policy.OPEN)) == Refusal.ACCOUNT_GONE.remark(
        access_key=policy.OPEN.access_key)


def test_unusable_change_keeps_the_policy(guard: AccessGuard, acl_file: Path) -> None:
    acl_file.write_text("accounts: [\n")
    os.utime(acl_file, (2, 2))
    assert not guard.reload_if_changed()
    assert _refusal(guard, _signed(21, {}, credentials=policy.OPEN)) is None


def test_admin_commands_rewrite_the_file(acl_file: Path) -> None:
    """ACL 1.0's admin codes 50-53 are 4.x (and 5.0.0-5.3.2) codes: the broker answers as 4.9.8."""
    config = BrokerConfig(listen_port=0, acl_enable=True, acl_file=str(acl_file), wire_release="4.9.8",
                          store_path_root_dir=str(acl_file.parent.parent / "store"))

    async def scenario() -> None:
        async with EmbeddedRocketMQ(broker_config=config) as running:
            client = await RemotingClient.connect(running.broker_addr)
            new = {"accessKey": "rmqFileKey", "secretKey": "rmqFileSecret", "topicPerms": "t1=PUB,t2=SUB"}
            created = await client.invoke(_signed(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, new,
                                                  credentials=policy.ADMIN))
            assert created.code == ResponseCode.SUCCESS and created.ext_fields is None
            whites = await client.invoke(_signed(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {
                "globalWhiteAddrs": "10.0.0.*,10.0.1.1", "aclFileFullPath": ""}, credentials=policy.ADMIN))
            assert whites.code == ResponseCode.SUCCESS
            elsewhere = await client.invoke(_signed(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {
                "globalWhiteAddrs": "1.1.1.1", "aclFileFullPath": "/etc/other.yml"},
                credentials=policy.ADMIN))
            assert elsewhere.code == ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
            await client.close()

    run(scenario())
    data = yaml.safe_load(acl_file.read_text())
    account = next(a for a in data["accounts"] if a["accessKey"] == "rmqFileKey")
    assert account["topicPerms"] == ["t1=PUB", "t2=SUB"] and account["admin"] is False
    assert data["globalWhiteRemoteAddresses"] == ["10.0.0.*", "10.0.1.1"]
    assert data["dataVersion"][0]["counter"] == 2


def test_refused_answer_is_java_s(acl_file: Path) -> None:
    config = BrokerConfig(listen_port=0, acl_enable=True, acl_file=str(acl_file),
                          wire_release=policy.ACL_RELEASE,
                          store_path_root_dir=str(acl_file.parent.parent / "store"))

    async def scenario() -> None:
        async with EmbeddedRocketMQ(broker_config=config) as running:
            for addr in (running.broker_addr, running.broker_fast_addr):
                client = await RemotingClient.connect(addr)
                answer = await client.invoke(client.request(RequestCode.GET_ALL_TOPIC_CONFIG, {}))
                assert answer.code == ResponseCode.SYSTEM_ERROR
                assert answer.remark == Refusal.NO_ACCESS_KEY.remark()
                await client.close()

    run(scenario())


def test_files_below_conf_acl_are_merged(acl_file: Path) -> None:
    """RMQ-ACL-FILE-LOCATION: conf/acl/*.yml beside the default file; a key belongs to its first file."""
    extra = acl_file.parent / "acl" / "team" / "extra.yaml"
    extra.parent.mkdir(parents=True)
    extra.write_text("globalWhiteRemoteAddresses: ['10.9.9.9']\naccounts:\n"
                     f"  - accessKey: {policy.OPEN.access_key}\n    secretKey: shadowedSecret\n"
                     "  - accessKey: rmqExtraKey\n    secretKey: rmqExtraSecret\n    admin: true\n")
    guard = AccessGuard(acl_file)
    assert _refusal(guard, _signed(21, {}, credentials=Credentials("rmqExtraKey", "rmqExtraSecret"))) is None
    assert _refusal(guard, _signed(21, {}, credentials=policy.OPEN)) is not None, "the acl/ file came first"
    assert _refusal(guard, RemotingCommand.request(21, {}), peer="10.9.9.9:1") is None


def test_a_file_added_to_conf_acl_reloads_everything(guard: AccessGuard, acl_file: Path) -> None:
    extra = acl_file.parent / "acl" / "late.yml"
    extra.parent.mkdir()
    extra.write_text("accounts:\n  - accessKey: rmqLateKey\n    secretKey: rmqLateSecret\n    admin: true\n")
    assert guard.reload_if_changed()
    assert _refusal(guard, _signed(21, {}, credentials=Credentials("rmqLateKey", "rmqLateSecret"))) is None
    extra.unlink()
    assert guard.reload_if_changed()
    assert _refusal(guard, _signed(21, {}, credentials=Credentials("rmqLateKey", "rmqLateSecret"))) == \
        Refusal.UNKNOWN_ACCESS_KEY.remark(access_key="rmqLateKey"), "a full reload forgets removed keys"
