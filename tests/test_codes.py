"""The code tables against the facts they were read from."""

from __future__ import annotations

import pytest

from rocketmq_spec.spec.codes import (
    REQUEST_CODES,
    RESPONSE_CODES,
    RequestCode,
    ResponseCode,
    code_name,
    codes_for,
)


def test_request_names_are_unique_and_values_unique() -> None:
    names = [c.name for c in REQUEST_CODES]
    values = [c.value for c in REQUEST_CODES]
    assert len(set(names)) == len(names)
    assert len(set(values)) == len(values)


@pytest.mark.parametrize(("release", "requests", "responses"), [
    ("4.9.8", 95, 37), ("5.3.3", 158, 66), ("5.5.0", 169, 68), ("5.5.1", 171, 68)])
def test_table_sizes_by_release(release: str, requests: int, responses: int) -> None:
    """The counts of each release's jar (responses include RemotingSysResponseCode's 0-4)."""
    assert sum(c.present_in(release) for c in REQUEST_CODES) == requests
    assert sum(c.present_in(release) for c in RESPONSE_CODES) == responses


@pytest.mark.parametrize(("name", "value"), [
    ("SEND_MESSAGE", 10), ("PULL_MESSAGE", 11), ("HEART_BEAT", 34), ("REGISTER_BROKER", 103),
    ("GET_ROUTEINFO_BY_TOPIC", 105), ("SEND_MESSAGE_V2", 310), ("SEND_BATCH_MESSAGE", 320),
    ("GET_TOPICS_BY_CLUSTER", 224), ("QUERY_TOPIC_CONSUME_BY_WHO", 300), ("POP_MESSAGE", 200050),
])
def test_request_values(name: str, value: int) -> None:
    assert RequestCode[name] == value


def test_system_response_codes_are_part_of_response_table() -> None:
    assert [ResponseCode(v).name for v in range(5)] == [
        "SUCCESS", "SYSTEM_ERROR", "SYSTEM_BUSY", "REQUEST_CODE_NOT_SUPPORTED", "TRANSACTION_FAILED"]


def test_response_collision_is_resolved_by_release() -> None:
    assert [c.name for c in codes_for(209, is_response=True)] == [
        "UPDATE_AND_CREATE_ACL_CONFIG_FAILED", "POLLING_FULL"]
    assert code_name(209, is_response=True) == "UPDATE_AND_CREATE_ACL_CONFIG_FAILED"
    assert code_name(209, is_response=True, release="5.3.3") == "POLLING_FULL"
    assert ResponseCode.POLLING_FULL == 209
    # 5.0.0-5.3.2 declare both names: the request answered picks one
    assert code_name(209, is_response=True, release="5.3.2") == "UPDATE_AND_CREATE_ACL_CONFIG_FAILED"
    pop = RequestCode.POP_MESSAGE
    assert code_name(209, is_response=True, release="5.3.2", request=pop) == "POLLING_FULL"
    assert code_name(210, is_response=True, release="5.3.2",
                     request=RequestCode.DELETE_ACL_CONFIG) == "DELETE_ACL_CONFIG_FAILED"


def test_removed_and_added_codes() -> None:
    assert code_name(50, is_response=False) == "UPDATE_AND_CREATE_ACL_CONFIG"
    assert code_name(50, is_response=False, release="5.3.3") is None
    assert code_name(54, is_response=False) is None
    assert code_name(54, is_response=False, release="4.9.7") == "GET_BROKER_CLUSTER_ACL_CONFIG"
    assert code_name(54, is_response=False, release="5.0.0") == "GET_BROKER_CLUSTER_ACL_CONFIG"
    assert code_name(370, is_response=False, release="5.3.0") is None
    assert code_name(370, is_response=False, release="5.3.3") == "RECALL_MESSAGE"
    assert code_name(-1006, is_response=True, release="5.3.0") == "RPC_TIME_OUT"
    assert code_name(12345, is_response=False) is None


def test_every_response_code_is_named_in_some_release() -> None:
    for code in RESPONSE_CODES:
        assert code.present_in(code.since or "4.9.0")


def test_moved_controller_codes_keep_their_newest_value() -> None:
    assert code_name(2010, is_response=True, release="5.1.0") == "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED"
    assert code_name(2010, is_response=True, release="5.5.0") == "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED"
    assert ResponseCode.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED == 2013
