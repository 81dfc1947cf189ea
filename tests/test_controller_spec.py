"""The controller's tables read what Apache 5.5.0's controller wrote: extFields and bodies as captured from
a controller inside a 5.5.0 name server (enableControllerInNamesrv=true), and the refusal order."""

from __future__ import annotations

import pytest

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import (
    BROKER_REPLICAS_INFO,
    CONTROLLER_COMMANDS,
    CONTROLLER_REQUEST_HEADERS,
    ELECT_MASTER_BODY,
    ELECT_MASTER_REQUEST,
    ELECT_MASTER_RESPONSE,
    GET_METADATA_RESPONSE,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import CONTROLLER_ANSWERS
from rocketmq_spec.spec.errors import HeaderError
from rocketmq_spec.spec.releases import ordinal

ELECTED = {"masterBrokerId": "1", "masterAddress": "127.0.0.1:1", "syncStateSetEpoch": "1",
           "masterEpoch": "1"}
ELECT_BODY = (b'{"brokerMemberGroup":{"brokerAddrs":{1:"127.0.0.1:1",2:"127.0.0.1:2"},"brokerName":"b1",'
              b'"cluster":"c"},"syncStateSet":[1]}')
SYNC_STATE_DATA = (b'{"replicasInfoTable":{"b1":{"inSyncReplicas":[{"alive":true,'
                   b'"brokerAddress":"127.0.0.1:1","brokerId":1,"brokerName":"b1"}],"masterAddress":"127.0.0.1:1","masterBrokerId":1,'
                   b'"masterEpoch":1,"notInSyncReplicas":[],"syncStateSetEpoch":2}}}')
METADATA = {"controllerLeaderId": "n0", "controllerLeaderAddress": "127.0.0.1:40077", "isLeader": "true",
            "peers": "n0:127.0.0.1:40077;", "group": "group1"}


def test_captured_answers_decode() -> None:
    assert decode_header(ELECT_MASTER_RESPONSE, ELECTED) == {
        "masterBrokerId": 1, "masterAddress": "127.0.0.1:1", "syncStateSetEpoch": 1, "masterEpoch": 1}
    assert decode_header(GET_METADATA_RESPONSE, METADATA)["isLeader"] is True
    body = decode_body(ELECT_MASTER_BODY, ELECT_BODY)
    assert body["syncStateSet"] == [1] and body["brokerMemberGroup"]["brokerAddrs"] == {1: "127.0.0.1:1",
                                                                                          2: "127.0.0.1:2"}
    table = decode_body(BROKER_REPLICAS_INFO, SYNC_STATE_DATA)["replicasInfoTable"]
    assert table["b1"]["inSyncReplicas"][0]["alive"] is True


def test_sync_state_set_is_written_as_fastjson_does() -> None:
    assert encode_body(SYNC_STATE_SET, {"syncStateSet": [1, 2], "syncStateSetEpoch": 1}) == \
        b'{"syncStateSet":[1,2],"syncStateSetEpoch":1}'


def test_elect_master_requires_its_not_null_fields() -> None:
    with pytest.raises(HeaderError):
        encode_header(ELECT_MASTER_REQUEST, {"clusterName": "c", "brokerName": "b"})


def test_every_command_is_a_controller_code_with_its_header() -> None:
    codes = [command.code for command in CONTROLLER_COMMANDS]
    assert len(codes) == len(set(codes))
    assert RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET in CONTROLLER_REQUEST_HEADERS
    assert RequestCode.CONTROLLER_GET_SYNC_STATE_DATA not in CONTROLLER_REQUEST_HEADERS  # a body, no header


def test_invoke_time_is_newer_than_its_headers() -> None:
    fields = [f for header in CONTROLLER_REQUEST_HEADERS.values() for f in header.fields
              if f.name == "invokeTime"]
    assert len(fields) == 4
    assert not any(field.releases.holds_for_version(ordinal("5.3.3")) for field in fields)
    assert all(field.releases.holds_for_version(ordinal("5.4.0")) for field in fields)


def test_fenced_answers_are_checked_master_first() -> None:
    alter = [answer.code for answer in CONTROLLER_ANSWERS
             if answer.request == RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET]
    order = [ResponseCode.CONTROLLER_INVALID_MASTER, ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH,
             ResponseCode.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH]
    assert [code for code in alter if code in order] == order
