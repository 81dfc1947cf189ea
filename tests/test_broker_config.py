"""broker.conf reading: Java property syntax and names, every Java key honoured, refused with its reason or
ignored with a warning, unknown keys reported, unreadable values stopping start-up in one line."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rocketmq_spec.apache import NotServed, ToolMissing, release
from rocketmq_spec.apache.jdk import find_jdk
from rocketmq_spec.apache.maven import resolve
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.cli import build_parser, configure
from rocketmq_spec.reference_broker.config import (
    BrokerConfig,
    ConfigError,
    NamesrvConfig,
    load_config_file,
    parse_properties,
    snake_case,
)
from rocketmq_spec.reference_broker.java_keys import BY_NAME, KEYS, Disposition, Owner, markdown
from rocketmq_spec.spec.golden import GOLDEN
from tests import process_tree
from tests.golden import PROJECT_ROOT


def test_properties_syntax() -> None:
    text = "# comment\n! other\nbrokerName = b1\nlistenPort:10000\nnamesrvAddr a:1;\\\n  b:2\nempty=\n"
    assert parse_properties(text) == {"brokerName": "b1", "listenPort": "10000", "namesrvAddr": "a:1;b:2",
                                      "empty": ""}


def test_java_names_map_to_fields() -> None:
    assert snake_case("brokerIP1") == "broker_ip1"
    assert snake_case("mappedFileSizeCommitLog") == "mapped_file_size_commit_log"
    assert snake_case("autoCreateTopicEnable") == "auto_create_topic_enable"


def _golden_conf(tmp_path: Path, extra: str = "", drop: tuple[str, ...] = ()) -> Path:
    lines = (GOLDEN / "java-4.9.8" / "store-4x.broker.conf").read_text().splitlines()
    kept = [line for line in lines if line.split("=", 1)[0] not in drop]
    conf = tmp_path / "broker.conf"
    conf.write_text("\n".join(kept) + "\n" + extra)
    return conf


def test_golden_broker_conf_applies_and_reports_unknown(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    conf = _golden_conf(tmp_path, "noSuchKey=1\nautoCreateTopicEnable=false\nmaxHashSlotNum=100\n")
    broker, namesrv = BrokerConfig(), NamesrvConfig()
    loaded = load_config_file(conf, broker, namesrv)
    assert loaded.unknown == ["noSuchKey"]
    assert {key.name for key in loaded.ignored} == {"brokerIP2", "rocketmqHome", "haListenPort"}
    with caplog.at_level(logging.WARNING):
        loaded.warn()
    assert "noSuchKey" in caplog.text and "brokerIP2" in caplog.text and "HA address" in caplog.text
    assert caplog.text.count("brokerIP2") == 1
    assert broker.broker_role == "ASYNC_MASTER" and broker.resolved_ha_port == 10912
    assert (broker.broker_name, broker.default_topic_queue_nums, broker.listen_port) == ("broker-a", 4, 10911)
    assert (broker.auto_create_topic_enable, broker.max_hash_slot_num) == (False, 100)
    assert (broker.delete_when, broker.file_reserved_time) == ("04", 48)
    assert broker.store_path_commit_log == "${STORE_ROOT}/commitlog"
    assert broker.namesrv_addrs == ["127.0.0.1:9876"] and broker.resolved_fast_port == 10909


def test_refused_key_names_its_reason(tmp_path: Path) -> None:
    conf = _golden_conf(tmp_path, "enableDLegerCommitLog=true\n")
    with pytest.raises(ConfigError, match=r"enableDLegerCommitLog='true': expected false "
                                          r"\(DLedger commitlog is not supported\)"):
        load_config_file(conf, BrokerConfig(), NamesrvConfig())


@pytest.mark.parametrize("line, accepted", [
    ("offsetCheckInSlave=false", True), ("enableDLegerCommitLog=true", False),
    ("transientStorePoolEnable=true", False), ("useTLS=FALSE", True),
    ("enablePropertyFilter=true", False), ("clusterTest=true", False),
])
def test_refused_keys_accept_what_the_broker_behaves_as(tmp_path: Path, line: str, accepted: bool) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(line + "\n")
    if accepted:
        load_config_file(conf, BrokerConfig(), NamesrvConfig())
    else:
        with pytest.raises(ConfigError, match=line.split("=")[0]):
            load_config_file(conf, BrokerConfig(), NamesrvConfig())


@pytest.mark.parametrize("line, expected", [
    ("flushDiskType=SOMETIMES", "one of ASYNC_FLUSH, SYNC_FLUSH"),
    ("mappedFileSizeCommitLog=lots", "an integer"),
    ("autoCreateTopicEnable=yes", "true or false"),
    ("deleteWhen=25", "hours 00-23"),
    ("messageDelayLevel=1s 2x", "levels like"),
    ("storePathCommitLog=/a;/b", "one directory"),
    ("diskSpaceWarningLevelRatio=high", "a number"),
    ("mappedFileSizeConsumeQueue=0", "a number above 0"),
    ("cleanResourceInterval=-5", "a number above 0"),
])
def test_unreadable_value_names_key_value_and_expectation(tmp_path: Path, line: str, expected: str) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(line + "\n")
    key, value = line.split("=")
    with pytest.raises(ConfigError) as raised:
        load_config_file(conf, BrokerConfig(), NamesrvConfig())
    assert (raised.value.key, raised.value.value) == (key, value)
    assert expected in str(raised.value) and str(conf) in str(raised.value)


def test_every_honoured_key_has_a_field() -> None:
    fields = {"broker": {f.name for f in dataclasses.fields(BrokerConfig)},
              "namesrv": {f.name for f in dataclasses.fields(NamesrvConfig)}}
    for key in KEYS:
        owners = ("broker", "namesrv") if key.owner is Owner.BOTH else (key.owner.value,)
        for owner in owners:
            if key.disposition is Disposition.HONOURED:
                assert (key.field or snake_case(key.name)) in fields[owner], key.name
        if key.disposition is not Disposition.HONOURED:
            assert key.reason, key.name


JAVA_CONFIG_CLASSES = ("org.apache.rocketmq.common.BrokerConfig",
                       "org.apache.rocketmq.store.config.MessageStoreConfig",
                       "org.apache.rocketmq.remoting.netty.NettyServerConfig",
                       "org.apache.rocketmq.remoting.netty.NettyClientConfig",
                       "org.apache.rocketmq.common.namesrv.NamesrvConfig")
CONFIG_JARS = dataclasses.replace(release("4.9.8"), subset="config", transitive=False,
                                  artifacts=("rocketmq-common", "rocketmq-store", "rocketmq-remoting"))
"""4.9.8's config classes: the jars that hold them are on Maven Central (its broker and name server are not
served to the project's machines, which does not matter here)."""
JAVA_FIELD = re.compile(r"^\s+private (?!static )[^();]* (\w+);$", re.M)


def test_table_covers_every_java_key() -> None:
    """Every instance field of 4.9.8's config classes is in the table, read off the classes with javap."""
    try:
        jars = resolve(CONFIG_JARS, progress=False)
        javap = find_jdk(8).home / "bin" / "javap"
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    done = process_tree.run([str(javap), "-p", "-cp", os.pathsep.join(map(str, jars)), *JAVA_CONFIG_CLASSES],
                            check=True, capture_output=True, text=True, timeout=120)
    names = {match.group(1) for match in JAVA_FIELD.finditer(done.stdout)}
    assert len(names) > 150
    assert sorted(names - set(BY_NAME)) == []


def test_docs_list_the_table() -> None:
    document = (PROJECT_ROOT / "docs" / "broker-conf.md").read_text(encoding="utf-8")
    assert markdown() in document, "regenerate with: python3 -m rocketmq_spec.reference_broker.java_keys"


def test_settings_made_in_code_are_checked_before_any_port(tmp_path: Path) -> None:
    broker = Broker(BrokerConfig(listen_port=0, store_path_root_dir=str(tmp_path), namesrv_addr=None,
                                 flush_disk_type="SOMETIMES"))
    with pytest.raises(ConfigError, match="flushDiskType='SOMETIMES'"):
        asyncio.run(broker.start())
    assert broker.server.port == 0 and not (tmp_path / "commitlog").exists()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return process_tree.run([sys.executable, "-m", "rocketmq_spec.reference_broker.cli",
                             *args], cwd=cwd, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})


def test_cli_missing_config_file_is_one_line(tmp_path: Path) -> None:
    result = _cli("-c", "missing.conf", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "rmq-broker: cannot read config file missing.conf: No such file or directory\n"


@pytest.mark.parametrize("line", ["flushDiskType=SOMETIMES", "mappedFileSizeCommitLog=lots"])
def test_cli_unreadable_value_stops_before_binding(tmp_path: Path, line: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = tmp_path / "store"
    (tmp_path / "broker.conf").write_text(f"listenPort={port}\nstorePathRootDir={store}\n{line}\n")
    result = _cli("-c", "broker.conf", "--namesrv-port", "0", cwd=tmp_path)
    key, value = line.split("=")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and f"{key}={value!r}: expected" in result.stderr
    assert not (tmp_path / "store").exists()


def test_cli_options_override_file(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("listenPort=20911\nstorePathRootDir=/nowhere\n")
    args = build_parser().parse_args(["-c", str(conf), "--store", str(tmp_path), "--namesrv-port", "0"])
    broker, namesrv, _ = configure(args)
    assert (broker.listen_port, broker.store_path_root_dir, namesrv.listen_port) == (20911, str(tmp_path), 0)
    assert broker.bind_address == namesrv.bind_address == "127.0.0.1"


@pytest.mark.parametrize(("option", "key"), [("--namesrv-port", "namesrv listenPort"),
                                             ("--grpc-port", "grpcServerPort")])
def test_cli_port_in_use_is_refused_before_anything_starts(tmp_path: Path, option: str, key: str) -> None:
    """A port another process listens on is bad input: one line naming it, exit 2, no store written (the
    gRPC port used to be found taken only after the other ports were bound and the store opened)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        others = [o for o in ("--namesrv-port", "--grpc-port") if o != option]
        result = _cli("--store", str(tmp_path / "store"), "--broker-port", "0", option, str(port),
                      *(arg for other in others for arg in (other, "0")), cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"rmq-broker: command line: {key}='{port}': expected a port free")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not (tmp_path / "store").exists()


def test_namesrv_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = f"import sys; from rocketmq_spec.reference_broker.cli import namesrv_main; " \
               f"sys.exit(namesrv_main(['-p', '{port}']))"
        result = process_tree.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                  timeout=60, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"listenPort='{port}'" in result.stderr

