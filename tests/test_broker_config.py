"""broker.conf reading: Java property syntax and names, unknown keys reported."""

from __future__ import annotations

import logging

from reference_broker.cli import build_parser, configure
from reference_broker.config import (
    BrokerConfig,
    NamesrvConfig,
    load_config_file,
    parse_properties,
    snake_case,
)
from tests.golden import GOLDEN


def test_properties_syntax() -> None:
    text = "# comment\n! other\nbrokerName = b1\nlistenPort:10000\nnamesrvAddr a:1;\\\n  b:2\nempty=\n"
    assert parse_properties(text) == {"brokerName": "b1", "listenPort": "10000", "namesrvAddr": "a:1;b:2",
                                      "empty": ""}


def test_java_names_map_to_fields() -> None:
    assert snake_case("brokerIP1") == "broker_ip1"
    assert snake_case("mappedFileSizeCommitLog") == "mapped_file_size_commit_log"
    assert snake_case("autoCreateTopicEnable") == "auto_create_topic_enable"


def test_golden_broker_conf_applies_and_reports_unknown(tmp_path, caplog) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text((GOLDEN / "java-4.9.8" / "store-4x.broker.conf").read_text()
                    + "\nnoSuchKey=1\nautoCreateTopicEnable=false\nmaxHashSlotNum=100\n")
    broker, namesrv = BrokerConfig(), NamesrvConfig()
    with caplog.at_level(logging.WARNING):
        unknown = load_config_file(conf, broker, namesrv)
    assert unknown == ["noSuchKey"]
    assert "noSuchKey" in caplog.text and "deleteWhen" in caplog.text
    assert broker.broker_role == "ASYNC_MASTER" and "haListenPort 10912 is replaced" in caplog.text
    assert broker.resolved_ha_port == 10912
    assert (broker.broker_name, broker.default_topic_queue_nums, broker.listen_port) == ("broker-a", 4, 10911)
    assert (broker.auto_create_topic_enable, broker.max_hash_slot_num) == (False, 100)
    assert broker.namesrv_addrs == ["127.0.0.1:9876"] and broker.resolved_fast_port == 10909


def test_cli_options_override_file(tmp_path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("listenPort=20911\nstorePathRootDir=/nowhere\n")
    args = build_parser().parse_args(["-c", str(conf), "--store", str(tmp_path), "--namesrv-port", "0"])
    broker, namesrv = configure(args)
    assert (broker.listen_port, broker.store_path_root_dir, namesrv.listen_port) == (20911, str(tmp_path), 0)
    assert broker.bind_address == namesrv.bind_address == "127.0.0.1"
