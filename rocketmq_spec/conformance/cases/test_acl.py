"""ACL 1.0: signed requests, whitelists, permissions, the ACL admin commands and hot reload.

These cases run only against a broker started with ``aclEnable=true`` on the policy of
``rocketmq_spec.conformance.acl_policy`` (``--acl-file``), and one at a time: some change the policy for a
moment. """

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import SILENCE_WAIT, Wire
from rocketmq_spec.spec.acl import ADMIN_CODES, UNIQUE_KEY_QUERY, AclRefusal, Refusal
from rocketmq_spec.spec.acl_file import RELOAD_INTERVAL_S
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import header_for
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, RETRY_PREFIX, TRACE_TOPIC

from .acl_support import (
    AclTarget,
    acl_message,
    append_to_body,
    drop_field,
    drop_signature,
    expect_acl_refusal,
    expect_allowed,
    set_field,
    unsorted_signature,
)
from .messaging import Client, subscription
from .support import eventually, expect_code, expect_success, unique

RELOAD_WAIT = RELOAD_INTERVAL_S * 2 + 5
"""Seconds given a policy change to take effect: two watcher periods and slack for a loaded machine."""
PING = RequestCode.GET_ALL_TOPIC_CONFIG
"""A code that needs no resource and no header: only the signature decides."""
USER_KEY = policy.USER.access_key


# -- signatures ----------------------------------------------------------------------------------------


@table("refused", [
    Row("unsigned", "RMQ-ACL-NO-ACCESS-KEY", "A request without AccessKey is refused.",
        (None, {}, Refusal.NO_ACCESS_KEY)),
    Row("no-ext-fields", "RMQ-ACL-NO-ACCESS-KEY", "A request with no extFields at all is refused.",
        (None, None, Refusal.NO_ACCESS_KEY)),
    Row("unknown-access-key", "RMQ-ACL-UNKNOWN-KEY", "A request signed with an unknown key is refused.",
        (Credentials("rmqNobodyKey", "whatever-secret"), {}, Refusal.UNKNOWN_ACCESS_KEY)),
    Row("wrong-secret", "RMQ-ACL-SIGNATURE", "A request signed with the wrong secret is refused.",
        (Credentials(policy.USER.access_key, "not-the-secret"), {}, Refusal.SIGNATURE)),
])
def test_refused(refused: tuple[Credentials | None, dict[str, str] | None, AclRefusal], acl: AclTarget,
                 check: Check) -> None:
    credentials, fields, refusal = refused
    connection = acl.connect(credentials)
    response = connection.call(PING, fields)
    expect_acl_refusal(check, "request", response, refusal,
                       access_key=credentials.access_key if credentials else None)


Tampering = Callable[[RemotingCommand], None]


@table("tampering", [
    Row("no-signature", "RMQ-ACL-SIGNATURE", "A request with AccessKey but no Signature is refused.",
        drop_signature),
    Row("altered-body", "RMQ-ACL-SIGNATURE", "A body changed after signing is refused.", append_to_body),
    Row("altered-header", "RMQ-ACL-SIGNATURE", "A header value changed after signing is refused.",
        set_field("topic", "anotherTopic")),
    Row("added-field", "RMQ-ACL-SIGNATURE", "A field added after signing is refused.",
        set_field("extra", "x")),
    Row("removed-field", "RMQ-ACL-SIGNATURE", "A field removed after signing is refused.", drop_field("zz")),
    Row("unsorted-content", "RMQ-ACL-SIGN-CONTENT", "A signature over the values in insertion order "
        "rather than sorted by key is refused.", unsorted_signature(policy.USER.secret_key)),
    Row("changed-security-token", "RMQ-ACL-SECURITY-TOKEN", "A SecurityToken changed after signing is "
        "refused.", set_field("SecurityToken", "other-token")),
])
def test_tampered_signature(tampering: Tampering, acl: AclTarget, check: Check) -> None:
    credentials = Credentials(policy.USER.access_key, policy.USER.secret_key, "token-1")
    fields = {"zz": "last", "topic": policy.TOPIC_PUB, "aa": "first"}
    response = acl.tampered(credentials, PING, fields, b"body bytes", change=tampering)
    expect_acl_refusal(check, "tampered request", response, Refusal.SIGNATURE, access_key=USER_KEY)


@case("RMQ-ACL-SIGN-CONTENT", "A correctly signed request is accepted whatever the order of extFields on the "
      "wire (the signature is over the values sorted by key).")
def test_fields_in_another_order(acl: AclTarget, check: Check) -> None:
    def reverse(cmd: RemotingCommand) -> None:
        assert cmd.ext_fields is not None
        cmd.ext_fields = dict(reversed(list(cmd.ext_fields.items())))
    response = acl.tampered(policy.USER, PING, {"b": "2", "a": "1", "c": "3"}, b"x", change=reverse)
    expect_allowed(check, "signed request, fields reversed", response)


@table("unique_key_query", [
    Row("added-after-signing", "RMQ-ACL-UNIQUE-KEY-QUERY", "A QUERY_MESSAGE whose _UNIQUE_KEY_QUERY was "
        "added after signing is let through.", False),
    Row("signed-with-it", "RMQ-ACL-UNIQUE-KEY-QUERY", "A QUERY_MESSAGE signed with _UNIQUE_KEY_QUERY in the "
        "content (as 4.9.8's client signs it) is refused.", True),
])
def test_unique_key_query(unique_key_query: bool, acl: AclTarget, check: Check) -> None:
    fields = {"topic": policy.TOPIC_BOTH, "key": "k", "maxNum": "1", "beginTimestamp": "0",
              "endTimestamp": "1"}
    if unique_key_query:
        with_it = {**fields, UNIQUE_KEY_QUERY: "false"}
        response = acl.tampered(policy.USER, RequestCode.QUERY_MESSAGE, with_it)
        expect_acl_refusal(check, "signed with it", response, Refusal.SIGNATURE, access_key=USER_KEY)
    else:
        response = acl.tampered(policy.USER, RequestCode.QUERY_MESSAGE, fields,
                                change=set_field(UNIQUE_KEY_QUERY, "false"))
        check.that("not refused by ACL", acl_message(response) is None, expected="no AclException",
                   actual=response.remark)


@case("RMQ-ACL-SECURITY-TOKEN", "A request signed with a SecurityToken is accepted (the token is signed, "
      "not checked).")
def test_security_token(acl: AclTarget, check: Check) -> None:
    token = Credentials(policy.USER.access_key, policy.USER.secret_key, "any-token")
    expect_allowed(check, "signed with a token", acl.connect(token).call(PING))


@case("RMQ-ACL-REFUSAL", "A refused oneway request gets no answer.")
def test_oneway_refusal_unanswered(acl: AclTarget, check: Check) -> None:
    connection = acl.connect()
    connection.send(connection.command(PING, {}, oneway=True))
    check.equal("answer to a refused oneway request", None, connection.next_command(SILENCE_WAIT))


@case("RMQ-ACL-UNGUARDED", "The check runs before the code is looked up: an unknown code is refused unsigned "
      "and answered REQUEST_CODE_NOT_SUPPORTED once signed (GET_BROKER_CLUSTER_ACL_CONFIG 54 in 4.9.8).")
def test_unknown_code(acl: AclTarget, check: Check) -> None:
    code = RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG
    expect_acl_refusal(check, "unsigned", acl.connect().call(code, {}), Refusal.NO_ACCESS_KEY)
    signed = acl.connect(policy.USER).call(code, {})
    check.equal("signed: response code", ResponseCode.REQUEST_CODE_NOT_SUPPORTED, signed.code)


# -- whitelists ----------------------------------------------------------------------------------------


@case("RMQ-ACL-WHITELIST-ACCOUNT", "An account whitelisting the client's address is let in unsigned.")
def test_account_whitelist(acl: AclTarget, check: Check) -> None:
    connection = acl.connect(access_key=policy.LOCAL.access_key)
    expect_allowed(check, "unsigned, whitelisted key", connection.call(PING, {}))


@case("RMQ-ACL-WHITELIST-ACCOUNT", "A whitelisted account is not held to its permissions either: a send to a "
      "topic its default DENY covers is served.")
def test_account_whitelist_skips_permissions(acl: AclTarget, check: Check) -> None:
    topic = acl.topic(unique("aclLocal"))
    client = acl.client(access_key=policy.LOCAL.access_key)
    expect_allowed(check, "send (default topic permission DENY)", client.send_request(topic))


@case("RMQ-ACL-WHITELIST-GLOBAL", "After UPDATE_GLOBAL_WHITE_ADDRS_CONFIG adds the client's address, "
      "unsigned requests are served; after it is taken out again they are refused.")
def test_global_whitelist(acl: AclTarget, check: Check) -> None:
    def unsigned() -> RemotingCommand:
        return acl.connect().call(PING)
    expect_success(check, "add 127.0.0.1", acl.set_global_whites([*policy.GLOBAL_WHITES, "127.0.0.1"]))
    try:
        expect_allowed(check, "unsigned, globally whitelisted",
                       eventually(unsigned, lambda r: r.code == ResponseCode.SUCCESS, RELOAD_WAIT))
    finally:
        expect_success(check, "restore the whitelist", acl.set_global_whites(list(policy.GLOBAL_WHITES)))
    expect_acl_refusal(check, "unsigned once the whitelist is restored",
                       eventually(unsigned, lambda r: acl_message(r) is not None, RELOAD_WAIT),
                       Refusal.NO_ACCESS_KEY)


# -- permissions ---------------------------------------------------------------------------------------

SEND, PULL = "send", "pull"


def _perm_row(id: str, who: Credentials, action: str, topic: str, group: str, refused: str | None,
              clause_id: str = "RMQ-ACL-PERM-RESOURCE") -> Row:
    verdict = f"refused for {refused}" if refused else "let through"
    return Row(id, clause_id, f"A {action} by {who.access_key} on {topic} as group {group} is {verdict}.",
               (who, action, topic, group, refused))


_U, _ANY = policy.USER, "aclAnyTopic"
_DENY_G = policy.GROUP_DENY


PermRow = tuple[Credentials, str, str, str, str | None]


@table("perm", [
    _perm_row("pub-topic-send", _U, SEND, policy.TOPIC_PUB, policy.GROUP_SUB, None),
    _perm_row("pub-topic-pull", _U, PULL, policy.TOPIC_PUB, policy.GROUP_SUB, f"topic:{policy.TOPIC_PUB}"),
    _perm_row("sub-topic-send", _U, SEND, policy.TOPIC_SUB, policy.GROUP_SUB, f"topic:{policy.TOPIC_SUB}"),
    _perm_row("sub-topic-pull", _U, PULL, policy.TOPIC_SUB, policy.GROUP_SUB, None),
    _perm_row("both-topic-send", _U, SEND, policy.TOPIC_BOTH, policy.GROUP_SUB, None,
              "RMQ-ACL-PERM-VALUES"),
    _perm_row("both-topic-pull", _U, PULL, policy.TOPIC_BOTH, policy.GROUP_SUB, None, "RMQ-ACL-PERM-VALUES"),
    _perm_row("deny-topic-send", _U, SEND, policy.TOPIC_DENY, policy.GROUP_SUB, f"topic:{policy.TOPIC_DENY}",
              "RMQ-ACL-PERM-VALUES"),
    _perm_row("deny-group-pull", _U, PULL, policy.TOPIC_BOTH, _DENY_G, f"group:{_DENY_G}"),
    _perm_row("default-topic-deny", _U, SEND, _ANY, policy.GROUP_SUB, f"topic:{_ANY}"),
    _perm_row("default-group-sub", _U, PULL, policy.TOPIC_BOTH, "aclAnyGroup", None),
    _perm_row("open-defaults-send", policy.OPEN, SEND, _ANY, "aclAnyGroup", None),
    _perm_row("open-defaults-pull", policy.OPEN, PULL, _ANY, "aclAnyGroup", None),
    _perm_row("admin-all-resources", policy.ADMIN, SEND, policy.TOPIC_DENY, _DENY_G, None,
              "RMQ-ACL-PERM-ADMIN-ALL"),
])
def test_permissions(perm: PermRow, acl: AclTarget, check: Check) -> None:
    who, action, topic, group, refused = perm
    acl.topic(topic)
    client = acl.client(who)
    response = (client.send_request(topic) if action == SEND else client.pull(topic, 0, 0, group=group))
    if refused:
        expect_acl_refusal(check, action, response, Refusal.NO_PERMISSION, resource=refused)
    elif action == SEND:
        expect_allowed(check, action, response)
    else:
        check.that(f"{action}: not refused by ACL", acl_message(response) is None, expected="no AclException",
                   actual=response.remark)


@table("admin_code", [
    Row(f"user-{RequestCode(code).name.lower()}", "RMQ-ACL-ADMIN-ONLY", f"{RequestCode(code).name} from a "
        "non-admin account is refused.", int(code)) for code in ADMIN_CODES
])
def test_admin_only(admin_code: int, acl: AclTarget, check: Check) -> None:
    response = acl.connect(policy.USER).call(admin_code, {"topic": unique("aclAdminOnly")})
    expect_acl_refusal(check, "non-admin", response, Refusal.NOT_ADMIN, code=admin_code, access_key=USER_KEY)


@case("RMQ-ACL-UNGUARDED", "SEND_BATCH_MESSAGE and QUERY_CONSUMER_OFFSET need no resource permission: a "
      "user whose topic is DENY is not refused by ACL.")
def test_unguarded_codes(acl: AclTarget, check: Check) -> None:
    acl.topic(policy.TOPIC_DENY)
    client = acl.client(policy.USER)
    for what, response in (
            ("QUERY_CONSUMER_OFFSET", client.call(RequestCode.QUERY_CONSUMER_OFFSET, {
                "consumerGroup": policy.GROUP_DENY, "topic": policy.TOPIC_DENY, "queueId": 0})),
            ("SEND_BATCH_MESSAGE", client.connection.call(RequestCode.SEND_BATCH_MESSAGE, {
                "a": client.producer_group, "b": policy.TOPIC_DENY, "c": DEFAULT_TOPIC, "d": "4", "e": "0",
                "f": "0", "g": "0", "h": "0", "i": "", "j": "0", "k": "false", "m": "true"}, b"")),
    ):
        check.that(f"{what}: not refused by ACL", acl_message(response) is None, expected="no AclException",
                   actual=response.remark)


@case("RMQ-ACL-PERM-RESOURCE", "A send to a %RETRY% topic needs SUB on the group, not PUB on the topic.")
def test_retry_send_needs_group(acl: AclTarget, check: Check) -> None:
    client = acl.client(policy.USER)
    client.producer_group = policy.GROUP_DENY
    response = client.send_request(RETRY_PREFIX + policy.GROUP_DENY)
    expect_acl_refusal(check, "retry send for a DENY group", response, Refusal.NO_PERMISSION,
                       resource=f"group:{policy.GROUP_DENY}")


@case("RMQ-ACL-PERM-RESOURCE", "HEART_BEAT needs SUB on each consumer group of its body.")
def test_heartbeat_group(acl: AclTarget, check: Check) -> None:
    client = acl.client(policy.USER)
    response = client.heartbeat(unique("client"), [subscription(policy.GROUP_DENY, policy.TOPIC_SUB)])
    expect_acl_refusal(check, "heartbeat of a DENY group", response, Refusal.NO_PERMISSION,
                       resource=f"group:{policy.GROUP_DENY}")


@case("RMQ-ACL-TRACE-TOPIC", "A signed send to RMQ_SYS_TRACE_TOPIC passes ACL whatever the topic defaults.")
def test_trace_topic(acl: AclTarget, check: Check) -> None:
    response = acl.client(policy.USER).send_request(TRACE_TOPIC)
    check.that("not refused by ACL", acl_message(response) is None, expected="no AclException",
               actual=response.remark)


@case("RMQ-ACL-NAMESRV", "The name server serves unsigned requests while the broker checks ACL.")
def test_namesrv_open(namesrv: Server, wire: Wire, check: Check, acl_file: Path) -> None:
    expect_success(check, "unsigned GET_BROKER_CLUSTER_INFO", namesrv.ping(wire.connect(namesrv.endpoint)))


# -- admin commands and reload ---------------------------------------------------------------------------


def _create(client: Client, access_key: str, secret_key: str, **more: Any) -> RemotingCommand:
    return client.call(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, {
        "accessKey": access_key, "secretKey": secret_key, "defaultTopicPerm": "PUB|SUB", **more})


@case("RMQ-ACL-ADMIN-UPDATE", "An account created with UPDATE_AND_CREATE_ACL_CONFIG (by any account, "
      "admin or not) is in force at once; DELETE_ACL_CONFIG removes it (RMQ-ACL-ADMIN-DELETE).")
def test_create_and_delete_account(acl: AclTarget, check: Check) -> None:
    created = Credentials(f"rmqNew{uuid.uuid4().hex[:8]}", "rmqNewSecret")
    expect_success(check, "create (signed by a non-admin)",
                   _create(acl.client(policy.USER), created.access_key, created.secret_key))
    try:
        expect_allowed(check, "request signed by the new account", acl.connect(created).call(PING))
    finally:
        expect_success(check, "delete", acl.client(policy.ADMIN).call(
            RequestCode.DELETE_ACL_CONFIG, {"accessKey": created.access_key}))
    expect_acl_refusal(check, "request of the deleted account", acl.connect(created).call(PING),
                       Refusal.UNKNOWN_ACCESS_KEY, access_key=created.access_key)


@table("bad_account", [
    Row("short-secret", "RMQ-ACL-ADMIN-UPDATE", "A secret of 6 characters is refused with 209.",
        {"secretKey": "123456"}),
    Row("bad-permission", "RMQ-ACL-ADMIN-UPDATE", "A topicPerms entry with an unknown permission is refused "
        "with 209.", {"topicPerms": "t1=WRITE"}),
])
def test_bad_account(bad_account: dict[str, str], acl: AclTarget, check: Check) -> None:
    values = {"secretKey": "rmqGoodSecret", **bad_account}
    secret = values.pop("secretKey")
    response = _create(acl.client(policy.ADMIN), unique("rmqBad"), secret, **values)
    failed = ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
    expect_code(check, "UPDATE_AND_CREATE_ACL_CONFIG", response, failed)


@case("RMQ-ACL-ADMIN-DELETE", "DELETE_ACL_CONFIG of an unknown key is answered 210 with Java's remark.")
def test_delete_unknown(acl: AclTarget, check: Check) -> None:
    key = unique("rmqGhost")
    response = acl.client(policy.ADMIN).call(RequestCode.DELETE_ACL_CONFIG, {"accessKey": key})
    expect_code(check, "DELETE_ACL_CONFIG", response, ResponseCode.DELETE_ACL_CONFIG_FAILED)
    check.equal("remark", f"The accesskey[{key}] corresponding to accessConfig has been deleted failed.",
                response.remark)


@case("RMQ-ACL-ADMIN-VERSION", "GET_BROKER_CLUSTER_ACL_INFO names the broker and the ACL file versions; the "
      "file's counter grows when an admin command rewrites it.")
def test_acl_versions(acl: AclTarget, check: Check) -> None:
    admin = acl.client(policy.ADMIN)

    def counters() -> dict[str, int]:
        response = admin.connection.call(RequestCode.GET_BROKER_CLUSTER_ACL_INFO)
        expect_success(check, "GET_BROKER_CLUSTER_ACL_INFO", response)
        spec = header_for(RequestCode.GET_BROKER_CLUSTER_ACL_INFO, is_response=True)
        assert spec is not None
        header = decode_header(spec, response.ext_fields)
        for key in ("brokerName", "brokerAddr", "clusterName"):
            check.that(f"{key} present", bool(header.get(key)), expected="non-empty", actual=header.get(key))
        json.loads(header["version"])
        return {path: v["counter"] for path, v in json.loads(header.get("allAclFileVersion") or "{}").items()}
    before = counters()
    key = f"rmqVer{uuid.uuid4().hex[:8]}"
    expect_success(check, "create", _create(admin, key, "rmqVerSecret"))
    admin.call(RequestCode.DELETE_ACL_CONFIG, {"accessKey": key})
    after = counters()
    grew = any(after.get(path, 0) >= counter + 2 for path, counter in before.items())
    check.that("a file's counter grew by the two rewrites", grew, expected=f"> {before}", actual=after)


@case("RMQ-ACL-RELOAD", "An account added to the ACL file by hand is in force within the reload interval; "
      "once removed again its key is refused with 'No PlainAccessResource for accessKey=<ak>'.")
def test_hot_reload(acl: AclTarget, acl_file: Path, check: Check) -> None:
    original = acl_file.read_text(encoding="utf-8")
    data = yaml.safe_load(original)
    data["accounts"] = [*(data.get("accounts") or []), policy.RELOADED_ACCOUNT]
    acl_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    def ping() -> RemotingCommand:
        return acl.connect(policy.RELOADED).call(PING)
    try:
        expect_allowed(check, "the added account", eventually(ping, lambda r: r.code == 0, RELOAD_WAIT))
    finally:
        acl_file.write_text(original, encoding="utf-8")
    expect_acl_refusal(check, "the removed account", eventually(ping, lambda r: r.code != 0, RELOAD_WAIT),
                       Refusal.ACCOUNT_GONE, access_key=policy.RELOADED.access_key)


@case("RMQ-ACL-FILE-LOCATION", "An ACL file put below conf/acl beside the policy file is read within the "
      "reload interval; once it is gone again its keys are unknown.")
def test_acl_directory(acl: AclTarget, acl_file: Path, check: Check) -> None:
    extra = acl_file.parent / "acl" / f"rmq-conformance-{uuid.uuid4().hex[:8]}.yml"
    extra.parent.mkdir(exist_ok=True)
    account = {**policy.RELOADED_ACCOUNT, "accessKey": policy.IN_DIRECTORY.access_key,
               "secretKey": policy.IN_DIRECTORY.secret_key}
    extra.write_text(yaml.safe_dump({"accounts": [account]}, sort_keys=False), encoding="utf-8")

    def ping() -> RemotingCommand:
        return acl.connect(policy.IN_DIRECTORY).call(PING)
    try:
        expect_allowed(check, "the directory's account", eventually(ping, lambda r: r.code == 0, RELOAD_WAIT))
    finally:
        extra.unlink()
    expect_acl_refusal(check, "once the file is gone", eventually(ping, lambda r: r.code != 0, RELOAD_WAIT),
                       Refusal.UNKNOWN_ACCESS_KEY, access_key=policy.IN_DIRECTORY.access_key)
