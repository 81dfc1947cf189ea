"""The controller (RocketMQ 5's automatic failover), judged over the wire as the brokers of a set see it:
broker ids, registration, heartbeats, elections, SyncStateSet changes and the fenced answers that keep a
deposed master out, replica info and sync state data, cleaning, configuration.

Each case plays the brokers of a broker-set of its own (``controller_support``); a controller that does
not know a code answers 3 and the case is UNSUPPORTED (a 5.0.x controller has no broker ids).
"""

from __future__ import annotations

from collections.abc import Callable

from rocketmq_spec.codec.bodies import decode_properties_text, encode_properties_text
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.admin import BLACK_LIST_REMARK
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import (
    BROKER_REPLICAS_INFO,
    ELECT_MASTER_BODY,
    GET_METADATA_RESPONSE,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import FIRST_BROKER_ID

from .controller_support import CLUSTER, Answer, BrokerSet, address
from .support import eventually, expect_code, expect_success

_R = ResponseCode
SHORT_LIFE_MS = 500
"""heartbeatTimeoutMills of a master a case lets die."""
DEATH_WAIT_S = 20.0
"""How long a case waits for a dead master to be replaced: its heartbeat's life plus the controller's
scan (scanInactiveMasterInterval, 5 s) with room for a loaded machine."""


def _set(controller: Server, wire: Wire, check: Check) -> BrokerSet:
    return BrokerSet(lambda: wire.connect(controller.endpoint), check)


def _sync_state(brokers: BrokerSet) -> tuple[list[int], int]:
    body = brokers.body("replica info", SYNC_STATE_SET, brokers.expect("replica info",
                        brokers.replica_info(), 0))
    return sorted(body["syncStateSet"]), body["syncStateSetEpoch"]


@case("RMQ-CTL-METADATA", "CONTROLLER_GET_METADATA_INFO answers SUCCESS naming the group, a leader that is "
      "among the peers, and isLeader; a lone controller leads and is the leader it names.")
def test_metadata(controller: Server, wire: Wire, check: Check) -> None:
    response = expect_success(check, "metadata", wire.connect(controller.endpoint).call(
        RequestCode.CONTROLLER_GET_METADATA_INFO))
    header = decode_header(GET_METADATA_RESPONSE, response.ext_fields)
    check.that("a group", bool(header.get("group")), expected="a DLedger group", actual=header.get("group"))
    leader = f"{header.get('controllerLeaderId')}:{header.get('controllerLeaderAddress')}"
    peers = (header.get("peers") or "").split(";")
    check.that("the leader is a peer", leader in peers, expected=f"{leader} in peers", actual=peers)
    check.equal("this controller leads", (True, str(controller.endpoint)),
                (header.get("isLeader"), header.get("controllerLeaderAddress")))


@case("RMQ-CTL-PORT", "A code the controller does not serve (SEND_MESSAGE) is answered 3 "
      "REQUEST_CODE_NOT_SUPPORTED.")
def test_other_codes_not_supported(controller: Server, wire: Wire, check: Check) -> None:
    response = wire.connect(controller.endpoint).call(RequestCode.SEND_MESSAGE)
    check.equal("response code", _R.REQUEST_CODE_NOT_SUPPORTED, response.code)


@case("RMQ-CTL-NEXT-ID", "GET_NEXT_BROKER_ID answers 1 for an unknown broker-set and, once ids 1 and 2 are "
      "granted, 3; asking again reserves nothing.")
def test_next_broker_id(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    first = brokers.expect("next id of a new set", brokers.next_id(), 0)
    check.equal("first id", FIRST_BROKER_ID, first.header.get("nextBrokerId"))
    brokers.join(1, 2)
    ids = [brokers.expect("next id", brokers.next_id(), 0).header.get("nextBrokerId") for _ in range(2)]
    check.equal("next id, asked twice", [3, 3], ids)


APPLY_ROWS = [
    Row("unknown_set_other_id", "RMQ-CTL-APPLY-ID", "A broker-set the controller does not know grants id 1 "
        "only: applying for 2 is 2014 CONTROLLER_BROKER_ID_INVALID.", ("new", 2, None)),
    Row("held_id", "RMQ-CTL-APPLY-ID", "An id another check code holds is 2014 CONTROLLER_BROKER_ID_INVALID.",
        ("known", 1, "127.0.0.1:9;2")),
    Row("own_id_again", "RMQ-CTL-APPLY-ID", "Applying again for an id with the check code that holds it is "
        "SUCCESS (a broker restarting between apply and register).", ("known", 1, None)),
]


@table("row", APPLY_ROWS)
def test_apply_broker_id(row: tuple[str, int, str | None], controller: Server, wire: Wire,
                         check: Check) -> None:
    which, broker_id, check_code = row
    brokers = _set(controller, wire, check)
    if which == "known":
        brokers.join(1)
    expected = _R.SUCCESS if check_code is None and which == "known" else _R.CONTROLLER_BROKER_ID_INVALID
    brokers.expect(f"apply for {broker_id}", brokers.apply(broker_id, check_code), expected)


@case("RMQ-CTL-HEARTBEAT", "BROKER_HEARTBEAT with a brokerId answers SUCCESS; without one it is 2005 "
      "CONTROLLER_INVALID_REQUEST.")
def test_heartbeat(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.expect("apply", brokers.apply(1), 0)
    brokers.expect("heartbeat", brokers.heartbeat(1), 0)
    brokers.expect("heartbeat without brokerId", brokers.heartbeat(None), _R.CONTROLLER_INVALID_REQUEST)


@case("RMQ-CTL-REGISTER", "REGISTER_BROKER of an unknown set, or of an id never granted, is 2010 "
      "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED; of a granted id in a set without master it is SUCCESS with "
      "no master named and an empty SyncStateSet of epoch 0.")
def test_register(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.expect("register in an unknown set", brokers.register(1),
                   _R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED)
    brokers.expect("apply", brokers.apply(1), 0)
    brokers.expect("register an id never granted", brokers.register(2),
                   _R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED)
    answer = brokers.expect("register", brokers.register(1), 0)
    check.equal("no master named", None, answer.header.get("masterBrokerId"))
    check.equal("SyncStateSet", {"syncStateSet": [], "syncStateSetEpoch": 0},
                brokers.body("register", SYNC_STATE_SET, answer))


@case("RMQ-CTL-REGISTER", "Once a master is elected, REGISTER_BROKER of another broker names it: id, "
      "address, master epoch and SyncStateSet epoch, with the SyncStateSet as body.")
def test_register_names_the_master(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    answer = brokers.expect("register", brokers.register(2), 0)
    check.equal("master", {"masterBrokerId": 1, "masterAddress": address(1), "masterEpoch": 1,
                           "syncStateSetEpoch": 1},
                {key: answer.header.get(key) for key in ("masterBrokerId", "masterAddress", "masterEpoch",
                                                         "syncStateSetEpoch")})
    check.equal("SyncStateSet", {"syncStateSet": [1], "syncStateSetEpoch": 1},
                brokers.body("register", SYNC_STATE_SET, answer))


@case("RMQ-CTL-ELECT-FIRST", "The first election of a set elects the broker asking: master epoch and "
      "SyncStateSet epoch 1, SyncStateSet {it}, and the body lists every broker of the set.")
def test_first_election(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.join(1, 2)
    answer = brokers.expect("elect", brokers.elect(2), 0)
    check.equal("new master", {"masterBrokerId": 2, "masterAddress": address(2), "masterEpoch": 1,
                               "syncStateSetEpoch": 1}, answer.header)
    body = brokers.body("elect", ELECT_MASTER_BODY, answer)
    check.equal("SyncStateSet", [2], body.get("syncStateSet"))
    group = body.get("brokerMemberGroup") or {}
    check.equal("member group", (CLUSTER, brokers.name, {1: address(1), 2: address(2)}),
                (group.get("cluster"), group.get("brokerName"), group.get("brokerAddrs")))


@case("RMQ-CTL-ELECT-STILL", "Electing again while the master is alive answers 2011 "
      "CONTROLLER_MASTER_STILL_EXIST naming the same master with unchanged epochs.")
def test_election_keeps_a_live_master(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    answer = brokers.expect("elect again", brokers.elect(2), _R.CONTROLLER_MASTER_STILL_EXIST)
    check.equal("still the master", {"masterBrokerId": 1, "masterAddress": address(1), "masterEpoch": 1,
                                     "syncStateSetEpoch": 1}, answer.header)
    check.equal("SyncStateSet", [1], brokers.body("elect again", ELECT_MASTER_BODY,
                answer).get("syncStateSet"))


@case("RMQ-CTL-ELECT-NONE", "Electing in a broker-set the controller does not know is 2010 "
      "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED.")
def test_election_of_unknown_set(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.expect("elect", brokers.elect(1), _R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED)


@case("RMQ-CTL-ELECT-WHO", "A designated election of an alive broker outside the SyncStateSet fails (2012 "
      "CONTROLLER_ELECT_MASTER_FAILED) with unclean election off, and the master stays.")
def test_designated_outside_the_set(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.expect("designate 2", brokers.elect(2, designate=True), _R.CONTROLLER_ELECT_MASTER_FAILED)
    check.equal("master", 1, brokers.expect("replica info", brokers.replica_info(),
                0).header.get("masterBrokerId"))


@case("RMQ-CTL-ELECT-WHO", "When the master stops heartbeating, a member of the SyncStateSet that is alive "
      "becomes master with master epoch 2 and a SyncStateSet of itself (elected by the broker or by the "
      "controller's own scan, whichever comes first).")
def test_failover_to_a_set_member(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.expect("alter", brokers.alter(1, 1, [1, 2], 1), 0)
    brokers.expect("short heartbeat of the master", brokers.heartbeat(1, SHORT_LIFE_MS), 0)
    answer = eventually(lambda: brokers.elect(2), lambda a: a.header.get("masterBrokerId") == 2, DEATH_WAIT_S)
    check.that("elected or already elected", answer.code in (_R.SUCCESS, _R.CONTROLLER_MASTER_STILL_EXIST),
               expected="0 or 2011", actual=answer.code)
    check.equal("new master", (2, 2), (answer.header.get("masterBrokerId"), answer.header.get("masterEpoch")))
    check.equal("SyncStateSet", ([2], 3), _sync_state(brokers))


@case("RMQ-CTL-ELECT-WHO", "When the master stops heartbeating and no other member of the SyncStateSet is "
      "alive, a live broker outside it is not elected (2012 CONTROLLER_ELECT_MASTER_FAILED): unclean "
      "election is off by default.")
def test_no_unclean_failover(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.expect("short heartbeat of the master", brokers.heartbeat(1, SHORT_LIFE_MS), 0)
    answer = eventually(lambda: brokers.elect(2), lambda a: a.code != _R.CONTROLLER_MASTER_STILL_EXIST,
                        DEATH_WAIT_S)
    brokers.expect("elect 2", answer, _R.CONTROLLER_ELECT_MASTER_FAILED)


@case("RMQ-CTL-HEARTBEAT", "A broker whose heartbeat ran out has the connection it heartbeated on closed by "
      "the controller; another broker of its set keeps its own connection and stays alive.")
def test_an_expired_heartbeat_closes_its_connection(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.expect("short heartbeat of 2", brokers.heartbeat(2, SHORT_LIFE_MS), 0)
    check.that("2's connection closed", brokers.of(2).wait_closed(DEATH_WAIT_S),
               expected=f"closed within {DEATH_WAIT_S:.0f} s", actual="still open")
    brokers.expect("heartbeat of 1 afterwards", brokers.heartbeat(1), 0)
    check.equal("master", 1, brokers.expect("replica info", brokers.replica_info(),
                0).header.get("masterBrokerId"))


@case("RMQ-CTL-ALTER", "The master's SyncStateSet change with both current epochs succeeds: "
      "newSyncStateSetEpoch is one more, the body is the new set, and replica info shows it.")
def test_alter_sync_state_set(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    answer = brokers.expect("alter", brokers.alter(1, 1, [1, 2], 1), 0)
    check.equal("new epoch", 2, answer.header.get("newSyncStateSetEpoch"))
    body = brokers.body("alter", SYNC_STATE_SET, answer)
    check.equal("answered set", ([1, 2], 2), (sorted(body["syncStateSet"]), body["syncStateSetEpoch"]))
    check.equal("replica info", ([1, 2], 2), _sync_state(brokers))


FENCED_ROWS = [
    Row("other_master", "RMQ-CTL-FENCED", "A change naming a broker that is not the master is 2002 "
        "CONTROLLER_INVALID_MASTER.", ((2, 1, 1), _R.CONTROLLER_INVALID_MASTER)),
    Row("stale_master_epoch", "RMQ-CTL-FENCED", "A change with a master epoch that is not the current one is "
        "2000 CONTROLLER_FENCED_MASTER_EPOCH.", ((1, 0, 1), _R.CONTROLLER_FENCED_MASTER_EPOCH)),
    Row("future_master_epoch", "RMQ-CTL-FENCED", "A master epoch ahead of the controller's is fenced too "
        "(2000 CONTROLLER_FENCED_MASTER_EPOCH).", ((1, 7, 1), _R.CONTROLLER_FENCED_MASTER_EPOCH)),
    Row("stale_set_epoch", "RMQ-CTL-FENCED", "A change whose body carries a SyncStateSet epoch that is "
                                             "not the "
        "current one is 2001 CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH.",
        ((1, 1, 5), _R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH)),
    Row("master_checked_first", "RMQ-CTL-FENCED", "With every field wrong the master is checked first "
                                                  "(2002).",
        ((2, 7, 5), _R.CONTROLLER_INVALID_MASTER)),
]


@table("row", FENCED_ROWS)
def test_fenced(row: tuple[tuple[int, int, int], int], controller: Server, wire: Wire, check: Check) -> None:
    (master, master_epoch, set_epoch), expected = row
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    answer = brokers.expect("alter", brokers.alter(master, master_epoch, [1, 2], set_epoch), expected)
    check.equal("newSyncStateSetEpoch of a refusal", 0, answer.header.get("newSyncStateSetEpoch"))
    check.equal("set unchanged", ([1], 1), _sync_state(brokers))


REFUSED_ROWS = [
    Row("equal_set", "RMQ-CTL-ALTER-REFUSED", "A set equal to the current one is 2013 "
        "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED.", ([1], _R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED)),
    Row("without_master", "RMQ-CTL-ALTER-REFUSED", "A set without the master is 2013 "
        "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED.", ([2], _R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED)),
    Row("unknown_member", "RMQ-CTL-ALTER-REFUSED", "A member never granted an id is 2003 "
        "CONTROLLER_INVALID_REPLICAS.", ([1, 9], _R.CONTROLLER_INVALID_REPLICAS)),
    Row("dead_member", "RMQ-CTL-ALTER-REFUSED", "A member that never heartbeated is 2006 "
        "CONTROLLER_BROKER_NOT_ALIVE.", ([1, 3], _R.CONTROLLER_BROKER_NOT_ALIVE)),
]


@table("row", REFUSED_ROWS)
def test_alter_refused(row: tuple[list[int], int], controller: Server, wire: Wire, check: Check) -> None:
    members, expected = row
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.join(3, alive=False)
    brokers.expect("alter", brokers.alter(1, 1, members, 1), expected)
    check.equal("set unchanged", ([1], 1), _sync_state(brokers))


@case("RMQ-CTL-REPLICA-INFO", "GET_REPLICA_INFO names the master (id, address, epoch) with the SyncStateSet "
      "as body; for an unknown set it is 2008 CONTROLLER_BROKER_METADATA_NOT_EXIST.")
def test_replica_info(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.expect("unknown set", brokers.replica_info(), _R.CONTROLLER_BROKER_METADATA_NOT_EXIST)
    brokers.with_master(1, 2)
    answer = brokers.expect("replica info", brokers.replica_info(), 0)
    check.equal("master", {"masterBrokerId": 1, "masterAddress": address(1), "masterEpoch": 1}, answer.header)
    check.equal("SyncStateSet", ([1], 1), _sync_state(brokers))


@case("RMQ-CTL-SYNC-STATE-DATA", "GET_SYNC_STATE_DATA answers, per known set asked for, the master, both "
      "epochs and the brokers split into in-sync and not-in-sync with their liveness; unknown names are left "
      "out.")
def test_sync_state_data(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.with_master(1, 2)
    brokers.join(3, alive=False)
    answer = brokers.expect("sync state data", brokers.sync_state_data(brokers.name, "no-such-set"), 0)
    table_ = brokers.body("sync state data", BROKER_REPLICAS_INFO, answer).get("replicasInfoTable") or {}
    check.equal("sets answered", [brokers.name], list(table_))
    info = table_.get(brokers.name, {})

    def members(key: str) -> list[tuple[int, str, bool]]:
        return sorted((r.get("brokerId"), r.get("brokerAddress"), r.get("alive")) for r in info.get(key, []))

    check.equal("master and epochs", (1, address(1), 1, 1), (info.get("masterBrokerId"),
                info.get("masterAddress"), info.get("masterEpoch"), info.get("syncStateSetEpoch")))
    check.equal("in sync", [(1, address(1), True)], members("inSyncReplicas"))
    check.equal("not in sync", [(2, address(2), True), (3, address(3), False)], members("notInSyncReplicas"))


@case("RMQ-CTL-CLEAN", "CLEAN_BROKER_DATA of a set with a master is refused (2009 "
      "CONTROLLER_INVALID_CLEAN_BROKER_METADATA) unless isCleanLivingBroker is true; then the set is "
      "forgotten (replica info 2008); an unknown set is 2009.")
def test_clean_broker_data(controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set(controller, wire, check)
    brokers.expect("clean an unknown set", brokers.clean(living=True),
                   _R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA)
    brokers.with_master(1)
    brokers.expect("clean a living set", brokers.clean(living=False),
                   _R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA)
    brokers.expect("clean it anyway", brokers.clean(living=True), 0)
    brokers.expect("replica info", brokers.replica_info(), _R.CONTROLLER_BROKER_METADATA_NOT_EXIST)


@case("RMQ-CTL-CONFIG", "GET_CONTROLLER_CONFIG answers the settings as Properties text (the DLedger peers "
      "among them); UPDATE_CONTROLLER_CONFIG of configStorePath is 16 NO_PERMISSION.")
def test_controller_config(controller: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(controller.endpoint)
    answer = expect_success(check, "get config", connection.call(RequestCode.GET_CONTROLLER_CONFIG))
    settings = decode_properties_text(answer.body or b"")
    peers = settings.get("controllerDLegerPeers", "")
    check.that("peers name this controller", str(controller.endpoint) in peers,
               expected=f"{controller.endpoint} in controllerDLegerPeers", actual=peers)
    refused = connection.call(RequestCode.UPDATE_CONTROLLER_CONFIG, None,
                              encode_properties_text({"configStorePath": "/tmp/elsewhere"}))
    expect_code(check, "update a black-listed key", refused, _R.NO_PERMISSION)
    check.equal("remark", BLACK_LIST_REMARK, refused.remark)



NOT_LEADER_ROWS = [
    Row(name, "RMQ-CTL-NOT-LEADER", f"A controller that does not lead answers {name} 2007 "
                                    f"CONTROLLER_NOT_LEADER.",
        ask)
    for name, ask in (
        ("next_id", lambda b: b.next_id()),
        ("apply_id", lambda b: b.apply(1)),
        ("register", lambda b: b.register(1)),
        ("elect", lambda b: b.elect(1)),
        ("alter", lambda b: b.alter(1, 1, [1, 2], 1)),
        ("replica_info", lambda b: b.replica_info()),
        ("sync_state_data", lambda b: b.sync_state_data(b.name)),
        ("clean", lambda b: b.clean(living=True)),
    )
]


@table("ask", NOT_LEADER_ROWS)
def test_not_leader(ask: Callable[[BrokerSet], Answer], follower_controller: Server, wire: Wire,
                    check: Check) -> None:
    brokers = _set(follower_controller, wire, check)
    metadata = expect_success(check, "metadata",
                              brokers.connection.call(RequestCode.CONTROLLER_GET_METADATA_INFO))
    check.equal("does not lead", False, decode_header(GET_METADATA_RESPONSE,
                metadata.ext_fields).get("isLeader"))
    brokers.expect("request", ask(brokers), _R.CONTROLLER_NOT_LEADER)
