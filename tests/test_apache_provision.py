"""Provisioning Apache RocketMQ releases: the Maven failure reading, the JDK choice, and a real start."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from rocketmq_spec.apache import drivers, maven
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.jdk import find_jdk
from rocketmq_spec.apache.maven import NotServed, ToolMissing
from rocketmq_spec.apache.releases import RELEASES, UnknownRelease, release
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store.epoch_file import read_epochs
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.wire import Connection, Endpoint
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import GET_REPLICA_INFO_REQUEST, GET_REPLICA_INFO_RESPONSE
from rocketmq_spec.targets import EMBEDDED, PROJECT_TARGETS, UnknownTarget, parse_target, target_names

MAVEN_NOT_SERVED = (
    "[ERROR] Failed to execute goal on project apache-rocketmq: Could not resolve dependencies for project "
    "x:y:pom:4.9.8: The following artifacts could not be resolved: org.apache.rocketmq:rocketmq-namesrv:jar:"
    "4.9.8, org.apache.rocketmq:rocketmq-broker:jar:4.9.8: org.apache.rocketmq:rocketmq-namesrv:jar:4.9.8 "
    "was not found in https://repo.maven.apache.org/maven2 during a previous attempt. -> [Help 1]")


def test_a_release_not_served_is_named_with_its_missing_jars() -> None:
    failure = maven._failure(release("4.9.8"), MAVEN_NOT_SERVED, Path("maven.log"))
    assert isinstance(failure, NotServed)
    assert failure.seen == "missing rocketmq-broker:4.9.8, rocketmq-namesrv:4.9.8"


def test_an_unreachable_repository_is_told_apart() -> None:
    output = "[ERROR] Could not transfer artifact org.apache.rocketmq:rocketmq-all:pom:5.5.0 from/to central"
    failure = maven._failure(release("5.5.0"), output, Path("maven.log"))
    assert not isinstance(failure, NotServed)
    assert "not reachable" in str(failure)


def test_versions_are_looked_up_with_or_without_the_target_prefix() -> None:
    assert release("apache-5.3.3") is RELEASES["5.3.3"]
    with pytest.raises(UnknownRelease, match=r"known: 4\.9\.7"):
        release("6.0.0")


def test_the_pom_names_every_artifact_of_the_release() -> None:
    text = maven.pom(release("4.9.7"))
    for artifact in release("4.9.7").artifacts:
        assert f"<artifactId>{artifact}</artifactId><version>4.9.7</version>" in text


def test_a_jdk_older_than_required_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "jdk8"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    (home / "release").write_text('JAVA_VERSION="1.8.0_392"\n')
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("rocketmq_spec.apache.jdk.JVM_DIRS", ())
    assert find_jdk(8).major == 8
    with pytest.raises(ToolMissing, match="Java 8 at"):
        find_jdk(11)


def test_a_missing_maven_is_a_tool_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(maven.MAVEN_ENV, raising=False)
    with pytest.raises(ToolMissing, match="Maven"):
        maven.maven_command()


def test_a_started_release_registers_and_stops(tmp_path: Path) -> None:
    cluster = ApacheRocketMQ("4.9.7", home=tmp_path / "home")
    try:
        cluster.start()
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    try:
        assert cluster.broker_addr.startswith("127.0.0.1:")
        assert (cluster.home / "conf" / "logback_broker.xml").is_file()
        pid = cluster.broker_pid
    finally:
        cluster.stop()
    assert not Path(f"/proc/{pid}").exists()


def test_a_release_with_a_controller_elects_its_broker(tmp_path: Path) -> None:
    """The name server runs a leading controller; the broker in controller mode registers there, is elected
    its set's master (epoch 1) and writes the epoch file."""
    cluster = ApacheRocketMQ("5.5.0", home=tmp_path / "home", controller=True)
    try:
        cluster.start()
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    try:
        connection = Connection(Endpoint.parse(cluster.controller_addr), Exchange())
        asked = encode_header(GET_REPLICA_INFO_REQUEST, {"brokerName": cluster.broker_name})
        response = connection.call(RequestCode.CONTROLLER_GET_REPLICA_INFO, asked)
        connection.close()
        epochs = read_epochs(cluster.store_path)
    finally:
        cluster.stop()
    assert response.code == ResponseCode.SUCCESS
    assert decode_header(GET_REPLICA_INFO_RESPONSE, response.ext_fields)["masterEpoch"] == 1
    assert epochs is not None and epochs.entries[-1][0] == 1


def test_a_release_without_a_controller_is_refused() -> None:
    with pytest.raises(maven.ProvisionError, match="has no controller"):
        ApacheRocketMQ("4.9.7", controller=True)


def test_targets_are_named_embedded_or_apache_and_a_release() -> None:
    assert parse_target(EMBEDDED) is None
    assert parse_target("apache-5.5.0") is RELEASES["5.5.0"]
    for name in ("5.5.0", "apache-6.0.0", "rocketmq"):
        with pytest.raises(UnknownTarget, match=r"known: embedded, apache-4\.9\.7"):
            parse_target(name)
    assert set(PROJECT_TARGETS) <= set(target_names())


def test_a_subset_of_a_release_is_cached_apart_and_may_leave_out_dependencies() -> None:
    subset = dataclasses.replace(release("4.9.8"), subset="config", transitive=False,
                                 artifacts=("rocketmq-common",))
    assert maven.release_dir(subset).name == "4.9.8-config"
    assert "<exclusion><groupId>*</groupId>" in maven.pom(subset)
    assert "<exclusion>" not in maven.pom(release("4.9.8"))


def test_the_drivers_compile_against_a_release_and_are_cached_by_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        first = drivers.compiled("4.9.7")
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    assert (first / "rmqspec" / "drivers" / "Produce.class").is_file()
    assert drivers.compiled("4.9.7") == first
    sources = tmp_path / "java"
    shutil.copytree(drivers.SOURCES, sources)
    (sources / "Produce.java").write_text((sources / "Produce.java").read_text() + "\n// changed\n")
    monkeypatch.setattr(drivers, "SOURCES", sources)
    assert drivers._digest(release("4.9.7")) not in first.name
