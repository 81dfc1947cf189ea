"""The launcher of the life-cycle cases: its option text, and the reference broker as the processes it
starts, stops, kills and restarts like a release's."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import pytest

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.apache.servers import LOOPBACK, listening
from rocketmq_spec.conformance import cli
from rocketmq_spec.conformance.launcher import Launcher, LauncherError
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.store_layout import ABORT_FILE
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, servers
from rocketmq_spec.targets.reference import ReferenceServers


def test_the_option_text_round_trips() -> None:
    launcher = Launcher.of(EMBEDDED, {"wireRelease": "4.9.8", "aclEnable": True})
    assert str(launcher) == "embedded,wireRelease=4.9.8,aclEnable=True"
    assert Launcher.parse(str(launcher)) == launcher
    assert Launcher.parse("apache-5.5.0") == Launcher("apache-5.5.0")


def test_bad_option_text_is_refused() -> None:
    with pytest.raises(LauncherError, match="KEY=VALUE"):
        Launcher.parse("embedded,wireRelease")
    with pytest.raises(UnknownTarget):
        Launcher.parse("apache-0.0.1")


def test_the_cli_hands_the_launcher_to_the_cases() -> None:
    args = argparse.Namespace(report=None, profile=None, strict=False, selection=None, workers=None,
                              verbose=False)
    target = Target(Endpoint("h", 1), Endpoint("h", 2), launcher=Launcher.of("apache-5.5.0", {"a": 1}))
    assert "--rmq-launch=apache-5.5.0,a=1" in cli.pytest_args(target, args)
    assert not any(arg.startswith("--rmq-launch") for arg in cli.pytest_args(Target(Endpoint("h", 1)), args))


def test_the_reference_broker_stops_dies_and_starts_again_as_a_release_does(tmp_path: Path) -> None:
    pair = servers(EMBEDDED, tmp_path, broker_config={"brokerName": "broker-life"})
    assert isinstance(pair, ReferenceServers)
    with pair:
        abort = pair.store_path / ABORT_FILE
        first_pid, address = pair.broker_pid, pair.broker_addr
        assert abort.is_file() and pair.grpc_addr
        pair.kill_broker()
        assert abort.is_file()  # a crash leaves it
        pair.restart_broker()
        assert pair.broker_pid != first_pid and pair.broker_addr == address
        pair.stop_broker()
        assert not abort.exists()
        assert Admin(pair.namesrv_addr, 2.0).cluster_info()  # the name server outlives its broker


def test_a_grpc_port_taken_before_the_bind_is_picked_again(tmp_path: Path) -> None:
    """Another process may bind a picked port before the broker does: the start is tried again on ports
    picked again, the gRPC port among them (it was kept, so every attempt failed on the same port)."""
    with socket.socket() as taken:
        taken.bind((LOOPBACK, 0))
        taken.listen()
        port = taken.getsockname()[1]
        pair = ReferenceServers(home=tmp_path, grpc=True)
        pair.grpc_addr = f"{LOOPBACK}:{port}"  # as picked for the first attempt, then taken
        with pair:
            assert pair.grpc_addr and pair.grpc_addr != f"{LOOPBACK}:{port}"
            assert listening(int(pair.grpc_addr.rsplit(":", 1)[1]))
        first_attempt = (tmp_path / "logs" / "broker.out.0").read_text()
        assert f"{LOOPBACK}:{port}" in first_attempt and "Address already in use" in first_attempt
