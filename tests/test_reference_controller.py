"""The reference controller: its table's decisions (sans-IO, time given), its liveness and election policy,
its file, and the edge that elects a new master when the master's connection closes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.apache.cluster import controller_answers
from rocketmq_spec.apache.servers import free_port
from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import ConfigError, NamesrvConfig, load_namesrv_config_file
from rocketmq_spec.reference_broker.controller.liveness import Heartbeat, Liveness, elect
from rocketmq_spec.reference_broker.controller.peers import peers_of
from rocketmq_spec.reference_broker.controller.persistence import TableFile
from rocketmq_spec.reference_broker.controller.replicas import BrokerSet, ReplicaTable
from rocketmq_spec.reference_broker.controller.server import Controller
from rocketmq_spec.spec.behaviour import BROKER_SCAN_INTERVAL_MS
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import (
    CONTROLLER_REQUEST_HEADERS,
    ELECT_MASTER_BODY,
    GET_REPLICA_INFO_RESPONSE,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import HEARTBEAT_SCAN_INTERVAL_MS
from rocketmq_spec.targets.reference import ReferenceServers

_R = ResponseCode
CLUSTER, NAME = "c", "bs"
LIFE_MS = 1000


def _code(broker_id: int) -> str:
    return f"127.0.0.1:{100 + broker_id};1"


class World:
    """A table, a heartbeat table and a clock the test moves."""

    def __init__(self, *, unclean: bool = False) -> None:
        self.table = ReplicaTable()
        self.liveness = Liveness()
        self.now = 0
        self.unclean = unclean

    def join(self, *ids: int, alive: bool = True) -> None:
        for broker_id in ids:
            assert self.table.apply_broker_id(CLUSTER, NAME, broker_id, _code(broker_id)).code == _R.SUCCESS
            if alive:
                self.beat(broker_id)

    def beat(self, broker_id: int, *, epoch: int = 0, offset: int = 0, priority: int | None = None) -> None:
        self.liveness.beat(Heartbeat(CLUSTER, NAME, f"127.0.0.1:{100 + broker_id}", broker_id, LIFE_MS, epoch,
                                     offset, None, priority), self.now, channel=broker_id)

    def alive(self, cluster: str, name: str, broker_id: int) -> bool:
        return self.liveness.alive(cluster, name, broker_id, self.now)

    def elect(self, broker_id: int, designate: bool = False) -> tuple[int, int | None, int, int]:
        def policy(known: BrokerSet, preferred: int | None) -> int | None:
            return elect(self.liveness, known.cluster, known.name, known.in_sync,
                         known.brokers if self.unclean else None, known.master, preferred, self.now)
        outcome = self.table.elect(NAME, broker_id, designate, policy)
        known = self.table.sets[NAME]
        return outcome.code, known.master, known.master_epoch, known.in_sync_epoch


def test_broker_ids_are_granted_in_order_and_held_by_their_check_code() -> None:
    table = ReplicaTable()
    assert table.next_broker_id(CLUSTER, NAME).header["nextBrokerId"] == 1
    assert table.apply_broker_id(CLUSTER, NAME, 2, _code(2)).code == _R.CONTROLLER_BROKER_ID_INVALID
    assert table.apply_broker_id(CLUSTER, NAME, 1, _code(1)).changed
    again = table.apply_broker_id(CLUSTER, NAME, 1, _code(1))
    assert (again.code, again.changed) == (_R.SUCCESS, False)
    assert table.apply_broker_id(CLUSTER, NAME, 1, "127.0.0.1:9;2").code == _R.CONTROLLER_BROKER_ID_INVALID
    assert table.next_broker_id(CLUSTER, NAME).header["nextBrokerId"] == 2
    assert table.sets[NAME].address(1) == "127.0.0.1:101"


def test_first_election_then_a_failover_within_the_sync_state_set() -> None:
    world = World()
    world.join(1, 2)
    assert world.elect(2) == (_R.SUCCESS, 2, 1, 1)
    assert world.elect(1)[:2] == (_R.CONTROLLER_MASTER_STILL_EXIST, 2)
    assert world.table.alter(NAME, 2, 1, [1, 2], 1, world.alive).header == {"newSyncStateSetEpoch": 2}
    world.now += LIFE_MS // 2
    world.beat(1)
    world.now += LIFE_MS  # 2 has stopped heartbeating
    assert world.elect(-1) == (_R.SUCCESS, 1, 2, 3)
    assert world.table.sets[NAME].in_sync == {1}


def test_a_killed_master_restarted_is_taken_back_into_the_sync_state_set() -> None:
    """The requests three Apache 5.5.0 brokers made of the reference controller in a failover cycle of
    benchmarks.failover, in their order: 1 elected, 2 and 3 taken in, 1's connection closes, 2 elected, 1
    restarted heartbeats and registers as 2's slave, 2 takes 3 back; then the change that brings 1 back,
    which 2 reports once 1 has caught up, is accepted."""
    world = World()
    world.join(1)
    assert world.elect(1) == (_R.SUCCESS, 1, 1, 1)
    world.join(2, 3)
    assert world.table.alter(NAME, 1, 1, [1, 2], 1, world.alive).header == {"newSyncStateSetEpoch": 2}
    assert world.table.alter(NAME, 1, 1, [1, 2, 3], 2, world.alive).header == {"newSyncStateSetEpoch": 3}
    assert world.liveness.channel_closed(1) == [(CLUSTER, NAME, 1)]
    assert world.table.need_reelect(world.alive) == [NAME]
    assert world.elect(-1) == (_R.SUCCESS, 2, 2, 4)
    world.beat(1)
    registered = world.table.register(CLUSTER, NAME, 1, "127.0.0.1:101", world.alive)
    assert registered.header == {"clusterName": CLUSTER, "brokerName": NAME, "masterBrokerId": 2,
                                 "masterAddress": "127.0.0.1:102", "masterEpoch": 2, "syncStateSetEpoch": 4}
    assert world.table.alter(NAME, 2, 2, [2, 3], 4, world.alive).header == {"newSyncStateSetEpoch": 5}
    taken = world.table.alter(NAME, 2, 2, [1, 2, 3], 5, world.alive)
    assert (taken.code, taken.header) == (_R.SUCCESS, {"newSyncStateSetEpoch": 6})
    assert world.table.sets[NAME].in_sync == {1, 2, 3}


def test_no_unclean_election_by_default() -> None:
    world = World()
    world.join(1, 2)
    world.elect(1)
    world.now += LIFE_MS // 2
    world.beat(2)
    world.now += LIFE_MS
    assert world.elect(2) == (_R.CONTROLLER_ELECT_MASTER_FAILED, 1, 1, 1)
    assert world.elect(-1) == (_R.CONTROLLER_MASTER_NOT_AVAILABLE, None, 2, 1)
    assert world.table.need_reelect(world.alive) == []


def test_unclean_election_takes_a_broker_outside_the_set() -> None:
    world = World(unclean=True)
    world.join(1, 2)
    world.elect(1)
    world.now += LIFE_MS // 2
    world.beat(2)
    world.now += LIFE_MS
    assert world.table.need_reelect(world.alive) == [NAME]
    assert world.elect(-1) == (_R.SUCCESS, 2, 2, 2)


def test_the_policy_ranks_epoch_then_offset_then_priority() -> None:
    world = World(unclean=True)
    world.join(1, 2, 3)
    world.beat(1, epoch=3, offset=10)
    world.beat(2, epoch=3, offset=10, priority=1)
    world.beat(3, epoch=2, offset=99)
    assert elect(world.liveness, CLUSTER, NAME, [], [1, 2, 3], None, None, world.now) == 2
    assert elect(world.liveness, CLUSTER, NAME, [], [1, 2, 3], None, 3, world.now) == 3
    assert elect(world.liveness, CLUSTER, NAME, [], [1, 2, 3], 1, 9, world.now) is None


@pytest.mark.parametrize(("master", "master_epoch", "set_epoch", "members", "expected"), [
    (2, 7, 5, [1, 2], _R.CONTROLLER_INVALID_MASTER),
    (1, 0, 1, [1, 2], _R.CONTROLLER_FENCED_MASTER_EPOCH),
    (1, 1, 5, [1, 2], _R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH),
    (1, 1, 1, [1, 9], _R.CONTROLLER_INVALID_REPLICAS),
    (1, 1, 1, [1, 3], _R.CONTROLLER_BROKER_NOT_ALIVE),
    (1, 1, 1, [2], _R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED),
    (1, 1, 1, [1], _R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED),
])
def test_sync_state_set_changes_are_fenced(master: int, master_epoch: int, set_epoch: int, members: list[int],
                                           expected: int) -> None:
    world = World()
    world.join(1, 2)
    world.join(3, alive=False)
    world.elect(1)
    outcome = world.table.alter(NAME, master, master_epoch, members, set_epoch, world.alive)
    assert (outcome.code, outcome.header, outcome.changed) == (expected, {"newSyncStateSetEpoch": 0}, False)


def test_cleaning_living_brokers_forgets_the_whole_set() -> None:
    world = World()
    world.join(1, 2)
    world.elect(1)
    assert world.table.clean(CLUSTER, NAME, None, False, world.alive).code == \
        _R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    assert world.table.clean(CLUSTER, NAME, "2", True, world.alive).changed
    assert NAME not in world.table.sets


def test_an_expired_broker_is_forgotten_with_the_connection_to_close() -> None:
    world = World()
    world.join(1, 2)
    world.now = LIFE_MS // 2
    world.beat(2)
    world.now = LIFE_MS + 1
    assert world.liveness.expire(world.now) == [((CLUSTER, NAME, 1), 1)]
    assert not world.alive(CLUSTER, NAME, 1) and world.alive(CLUSTER, NAME, 2)
    assert world.liveness.expire(world.now) == []


def test_a_closed_connection_makes_its_broker_inactive() -> None:
    world = World()
    world.join(1, 2)
    assert world.liveness.channel_closed(1) == [(CLUSTER, NAME, 1)]
    assert not world.alive(CLUSTER, NAME, 1) and world.alive(CLUSTER, NAME, 2)


def test_the_table_survives_a_restart(tmp_path: Path) -> None:
    world = World()
    world.join(1, 2)
    world.elect(1)
    world.table.alter(NAME, 1, 1, [1, 2], 1, world.alive)
    TableFile(tmp_path).save(world.table)
    assert TableFile(tmp_path).load().sets == world.table.sets
    assert TableFile(None).load().sets == {}


def test_one_scan_key_sets_both_scans_which_default_apart(tmp_path: Path) -> None:
    """A namesrv.conf's scanNotActiveBrokerInterval sets the name server's scan and its controller's, as
    Java reads it into NamesrvConfig and ControllerConfig alike; unset, each keeps its own default."""
    assert NamesrvConfig().scan_interval_ms(HEARTBEAT_SCAN_INTERVAL_MS) == 5_000
    assert NamesrvConfig().scan_interval_ms(BROKER_SCAN_INTERVAL_MS) == 10_000
    conf = tmp_path / "namesrv.conf"
    conf.write_text("enableControllerInNamesrv=true\nscanNotActiveBrokerInterval=1500\n")
    config = NamesrvConfig()
    load_namesrv_config_file(conf, config)
    assert config.scan_interval_ms(HEARTBEAT_SCAN_INTERVAL_MS) == 1500
    assert config.scan_interval_ms(BROKER_SCAN_INTERVAL_MS) == 1500
    conf.write_text("scanNotActiveBrokerInterval=0\n")
    with pytest.raises(ConfigError, match="scanNotActiveBrokerInterval"):
        load_namesrv_config_file(conf, NamesrvConfig())


def test_peers_decide_the_port_and_leadership() -> None:
    lone = peers_of(NamesrvConfig(controller_d_leger_peers="n0-127.0.0.1:9878",
                                  controller_d_leger_self_id="n0"))
    assert (lone.port, lone.leads, lone.metadata()["peers"]) == (9878, True, "n0:127.0.0.1:9878;")
    pair = peers_of(NamesrvConfig(controller_d_leger_peers="n0-127.0.0.1:1;n1-127.0.0.1:2",
                                  controller_d_leger_self_id="n1"))
    assert not pair.leads and "controllerLeaderAddress" not in pair.metadata()
    with pytest.raises(ConfigError, match="controllerDLegerSelfId"):
        peers_of(NamesrvConfig(controller_d_leger_peers="n0-127.0.0.1:1", controller_d_leger_self_id="n9"))


async def _call(client: RemotingClient, code: RequestCode, values: dict[str, object],
                body: bytes | None = None) -> tuple[int, dict[str, str], bytes | None]:
    ext = encode_header(CONTROLLER_REQUEST_HEADERS[code], values)
    answer = await client.invoke(client.request(code, ext, body))
    return answer.code, answer.ext_fields or {}, answer.body


def test_a_master_whose_connection_closes_is_replaced_at_once(tmp_path: Path) -> None:
    """A killed master's connection closes: the controller elects from the SyncStateSet without waiting
    for the heartbeat to run out (BrokerHousekeepingService.onChannelClose)."""
    port = free_port()
    config = NamesrvConfig(controller_d_leger_peers=f"n0-127.0.0.1:{port}", controller_d_leger_self_id="n0",
                           controller_store_path=str(tmp_path), notify_broker_role_changed=False)

    async def scenario() -> dict[str, Any]:
        controller = Controller(config)
        await controller.start()
        try:
            brokers = {b: await RemotingClient.connect(controller.addr) for b in (1, 2)}
            for b, client in brokers.items():
                ids = {"clusterName": CLUSTER, "brokerName": NAME}
                await _call(client, RequestCode.CONTROLLER_APPLY_BROKER_ID,
                            {**ids, "appliedBrokerId": b, "registerCheckCode": _code(b)})
                await _call(client, RequestCode.BROKER_HEARTBEAT, {
                    **ids, "brokerAddr": f"127.0.0.1:{100 + b}", "brokerId": b,
                    "heartbeatTimeoutMills": 60_000})
            code, _, body = await _call(brokers[1], RequestCode.CONTROLLER_ELECT_MASTER, {
                "clusterName": CLUSTER, "brokerName": NAME, "brokerId": 1, "designateElect": False})
            assert code == _R.SUCCESS and decode_body(ELECT_MASTER_BODY, body or b"")["syncStateSet"] == [1]
            code, _, _ = await _call(brokers[1], RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, {
                "brokerName": NAME, "masterBrokerId": 1, "masterEpoch": 1},
                b'{"syncStateSet":[1,2],"syncStateSetEpoch":1}')
            assert code == _R.SUCCESS
            await brokers[1].close()
            for _ in range(100):
                code, ext, body = await _call(brokers[2], RequestCode.CONTROLLER_GET_REPLICA_INFO,
                                              {"brokerName": NAME})
                header = decode_header(GET_REPLICA_INFO_RESPONSE, ext)
                if header.get("masterBrokerId") == 2:
                    return {**header, **decode_body(SYNC_STATE_SET, body or b"")}
                await asyncio.sleep(0.05)
            return header
        finally:
            await controller.stop()

    result = asyncio.run(scenario())
    assert result == {"masterBrokerId": 2, "masterAddress": "127.0.0.1:102", "masterEpoch": 2,
                      "syncStateSet": [2], "syncStateSetEpoch": 3}
    assert TableFile(tmp_path).load().sets[NAME].master == 2


def test_the_embedded_target_runs_a_leading_and_a_following_controller(tmp_path: Path) -> None:
    """``rmq-namesrv`` with enableControllerInNamesrv leads its lone group; ``rmq-controller`` in a group of
    two, whose other peer is absent, never leads (what --target embedded --controller judges)."""
    with ReferenceServers(home=tmp_path, controller=True) as servers:
        assert controller_answers(servers.controller_addr) is True
        assert controller_answers(servers.quorumless_controller_addr) is False
