"""Life cycle: what a broker does across a clean stop, a crash and a start.

Each case starts a name server and broker of the target's own implementation
(``rocketmq_spec.conformance.launcher``) in a directory of its own, so it may stop, kill and restart that
broker while the other cases go on against the run's target. A target given by address cannot be started
afresh: these cases are left out of its run. Apache RocketMQ starts in 10-30 s on a loaded machine, so the
cases start as few brokers as their clause needs. """

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from rocketmq_spec.apache.servers import LoopbackServers, StartFailed
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Failure, Unsupported
from rocketmq_spec.conformance.wire import ConnectionLost, Endpoint, Wire, WireError
from rocketmq_spec.spec.acl_file import DEFAULT_ACL_FILE, KEY_MIN_LENGTH
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.release_rules import Rule
from rocketmq_spec.spec.shutdown import GO_AWAY_REMARK, go_away_newer_than
from rocketmq_spec.spec.store_layout import ABORT_FILE

from .admin_support import properties
from .messaging import Client, Message
from .pop_support import require_5x
from .support import eventually

PENDING_MS = 15_000
"""How far ahead the timer message is due: far enough that it is still pending when the stop begins (a
JVM's clean stop takes seconds), near enough that the case does not wait long after the restart."""
DELIVERY_WAIT_S = 60.0
"""Bound on the delivery after the restart: what is left of the delay, the recovery and a loaded machine."""
GRACE_SECONDS = 3
"""``shutdownWaitTimeSeconds`` of the graceful case: long enough to be asked during, short to wait out."""
GO_AWAY_WAIT_S = 60.0
SHORT_SECRET_ACL = f"""\
accounts:
  - accessKey: rmqShortSecretKey
    secretKey: {"s" * KEY_MIN_LENGTH}
    admin: true
"""
"""An ACL file Java cannot use: a secretKey of 6 characters (RMQ-ACL-FILE)."""
UNKNOWN_CODE = 99999
"""A request code no release serves: GO_AWAY comes before dispatch, so it is told to go away too."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "launched"


def _client(wire: Wire, servers: LoopbackServers, check: Check) -> Client:
    return Client(wire.connect(Endpoint.parse(servers.broker_addr)), check)


@case("RMQ-STORE-ABORT", "The abort file is in the store while the broker runs, is still there after a "
      "crash, and is gone after a clean stop.")
def test_abort_file_across_a_crash_and_a_clean_stop(launcher: Launcher, home: Path, check: Check) -> None:
    with launcher.servers(home) as servers:
        abort = servers.store_path / ABORT_FILE
        check.that("abort file while the broker runs", abort.is_file(), expected="present", actual="absent")
        servers.kill_broker()
        check.that("abort file after the broker was killed", abort.is_file(), expected="present",
                   actual="absent")
        servers.restart_broker()
        check.that("abort file while the broker runs again", abort.is_file(), expected="present",
                   actual="absent")
        servers.stop_broker()
        check.that("abort file after a clean stop", not abort.exists(), expected="absent", actual="present")


def _pulled(client: Client, topic: str) -> list:
    answer = client.pull(topic, 0, 0)
    return client.pulled(topic).records if answer.code == ResponseCode.SUCCESS else []


@case("RMQ-TIMER-RESTART", "A timer message pending when the broker stops cleanly is delivered, once, after "
      "it starts again.")
def test_pending_timer_survives_a_restart(launcher: Launcher, home: Path, client: Client, wire: Wire,
                                          check: Check) -> None:
    require_5x(client, "a timer message", "RMQ-TIMER-RESTART")  # the run's broker: same release
    with launcher.servers(home) as servers:
        launched = _client(wire, servers, check)
        topic = launched.create_topic()
        due = int(time.time() * 1000) + PENDING_MS
        timer = Message(b"pending", user={PropertyKey.TIMER_DELIVER_MS: str(due)})
        sent = launched.send_request(topic, timer)
        check.equal("send of the timer message", ResponseCode.SUCCESS, sent.code)
        before = _pulled(launched, topic)
        if before:
            raise Failure("the timer message was readable before it was due", expected="nothing before "
                          f"{due}", actual=f"{len(before)} message(s) at {int(time.time() * 1000)}")
        servers.stop_broker()
        servers.restart_broker()
        again = _client(wire, servers, check)
        delivered = eventually(lambda: _pulled(again, topic), bool, DELIVERY_WAIT_S)
        check.equal("messages delivered after the restart", 1, len(delivered))
        if delivered:
            check.equal("body", b"pending", delivered[0].body)


@case("RMQ-SRV-GO-AWAY", "A broker stopping with enableShutdownGracefully answers 1500 GO_AWAY to clients "
      "newer than its release's threshold (even for a code it does not serve) and serves clients at the "
      "threshold, until it closes.")
def test_stopping_broker_tells_new_clients_to_go_away(launcher: Launcher, home: Path, client: Client,
                                                      wire: Wire, check: Check) -> None:
    version = client.target_version()  # the run's broker: the release the launched one is
    threshold = go_away_newer_than(version)
    if threshold is None:
        raise Unsupported(f"the target announces version {version}, a release without graceful shutdown "
                          "(RMQ-SRV-GO-AWAY)", expected="5.2.0 or newer", actual=version)
    settings = {"enableShutdownGracefully": "true", "shutdownWaitTimeSeconds": GRACE_SECONDS}
    _require_settings(client, settings)
    with launcher.servers(home, **settings) as servers:
        launched = _client(wire, servers, check)
        broker = Server("broker", launched.connection.endpoint)
        stopping = threading.Thread(target=servers.stop_broker, name="stopping broker", daemon=True)
        stopping.start()
        try:
            deadline = time.monotonic() + GO_AWAY_WAIT_S
            while (answer := broker.ping(launched.connection, version=version)).code != ResponseCode.GO_AWAY:
                check.equal("answer before GO_AWAY", ResponseCode.SUCCESS, answer.code)
                if not stopping.is_alive() or time.monotonic() > deadline:
                    raise Failure("the broker stopped without answering GO_AWAY", expected="1500 GO_AWAY",
                                  actual=f"{answer.code} until the stop ended")
                time.sleep(0.05)
            check.remark("GO_AWAY remark", GO_AWAY_REMARK, answer.remark)
            check.equal("a client at the threshold", ResponseCode.SUCCESS,
                        broker.ping(launched.connection, version=threshold).code)
            check.equal("an unknown code from a new client", ResponseCode.GO_AWAY,
                        launched.connection.call(UNKNOWN_CODE, None, version=version).code)
        except (ConnectionLost, WireError) as exc:
            raise Failure("the connection closed before GO_AWAY was answered", expected="1500 GO_AWAY",
                          actual=str(exc)) from None
        finally:
            stopping.join()


def _require_settings(client: Client, settings: dict[str, object]) -> None:
    """Ask the run's broker (the implementation the case launches) whether it has the settings the case
    starts its broker with. One whose GET_BROKER_CONFIG does not list them lacks the feature (UNSUPPORTED,
    asked rather than inferred from its version word), and launching it would say nothing of the clause:
    rocketmq-rust 1.0.0 refuses to start on a key it does not know."""
    listed = properties(client.call(RequestCode.GET_BROKER_CONFIG, {}).body)
    missing = sorted(key for key in settings if key not in listed)
    if missing:
        raise Unsupported(f"the target's GET_BROKER_CONFIG lists no {', '.join(missing)}: it has no graceful "
                          "shutdown to judge (RMQ-SRV-GO-AWAY)", expected=", ".join(settings),
                          actual=f"{len(listed)} settings without {', '.join(missing)}")


@case("RMQ-ACL-FILE-UNUSABLE", "A broker with aclEnable=true does not start on an ACL file it cannot use (an "
      "account's secretKey of 6 characters).")
def test_unusable_acl_file_stops_the_start(launcher: Launcher, home: Path, client: Client,
                                           check: Check) -> None:
    version = client.target_version()
    if not client.follows(Rule.ACL_V1):
        raise Unsupported(f"the target announces version {version}: Apache RocketMQ removed ACL 1.0 "
                          "(aclEnable, plain_acl.yml) in 5.3.3 (RMQ-ACL-FILE-UNUSABLE)",
                          expected="a release up to 5.3.2", actual=version)
    servers = launcher.servers(home, aclEnable="true")
    acl_file = home / DEFAULT_ACL_FILE
    acl_file.parent.mkdir(parents=True, exist_ok=True)
    acl_file.write_text(SHORT_SECRET_ACL, encoding="utf-8")
    try:
        servers.start()
    except StartFailed as exc:
        check.that("what did not start", str(exc.expected).endswith("broker"), expected="the broker",
                   actual=exc.expected)
        check.note("the start refused", str(exc))
        return
    try:
        raise Failure("the broker started on an unusable ACL file", expected="no start",
                      actual=f"registered at {servers.broker_addr}")
    finally:
        servers.stop()
