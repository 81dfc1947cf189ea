"""Installing and running rocketmq-rust releases: the cargo command, the missing-tool reading, the CLI's
bad input, and — where the binaries are installed — a real start that registers and stops."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rocketmq_spec.apache.maven import ToolMissing
from rocketmq_spec.conformance import profile
from rocketmq_spec.rocketmq_rust import cargo
from rocketmq_spec.rocketmq_rust.cluster import RocketMQRust, own_settings
from rocketmq_spec.rocketmq_rust.pytest_plugin import missing
from rocketmq_spec.rocketmq_rust.releases import RELEASES, UnknownRelease, release
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.targets import UnknownTarget, parse_target, servers, target_names
from tests import process_tree


def test_versions_are_looked_up_with_or_without_the_target_prefix() -> None:
    assert release("rocketmq-rust-1.0.0") is RELEASES["1.0.0"]
    assert release("1.0.0").target_name == "rocketmq-rust-1.0.0"
    with pytest.raises(UnknownRelease, match=r"known: 1\.0\.0"):
        release("0.1.0")


def test_the_install_names_both_crates_at_the_release_version_and_their_lock_files(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cargo.CACHE_ENV, str(tmp_path))
    command = cargo.install_command(release("1.0.0"), "cargo")
    assert command[:3] == ["cargo", "install", "--locked"]
    assert command[command.index("--root") + 1] == str(tmp_path / "1.0.0")
    assert command[-2:] == ["rocketmq-namesrv@1.0.0", "rocketmq-broker@1.0.0"]


def test_a_missing_cargo_is_a_tool_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(cargo.CARGO_ENV, raising=False)
    with pytest.raises(ToolMissing, match="cargo"):
        cargo.cargo_command()


def test_a_test_needing_absent_binaries_is_told_how_to_install_them(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv(cargo.CACHE_ENV, str(tmp_path))
    assert "`rmq-rust install 1.0.0`" in (missing(release("1.0.0")) or "")
    for binary in release("1.0.0").binaries:
        path = cargo.binary_path(release("1.0.0"), binary.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    assert missing(release("1.0.0")) is None


def test_an_unknown_version_is_one_line_and_status_two() -> None:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.rocketmq_rust.cli",
                             "run", "0.1.0"], capture_output=True,
                            text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == "" and done.stderr.splitlines() == [
        "rmq-rust: unknown rocketmq-rust release '0.1.0' (known: 1.0.0)"]


def test_a_started_release_registers_and_stops(rocketmq_rust: RocketMQRust) -> None:
    pid = rocketmq_rust.broker_pid
    assert rocketmq_rust.broker_addr.startswith("127.0.0.1:")
    assert (rocketmq_rust.home / "conf" / "broker.properties").is_file()
    rocketmq_rust.stop()
    assert not Path(f"/proc/{pid}").exists()


def test_the_target_name_starts_a_rocketmq_rust_pair(tmp_path: Path) -> None:
    assert "rocketmq-rust-1.0.0" in target_names()
    assert parse_target("rocketmq-rust-1.0.0") is RELEASES["1.0.0"]
    assert isinstance(servers("rocketmq-rust-1.0.0", tmp_path), RocketMQRust)
    with pytest.raises(UnknownTarget, match=r"known: .*rocketmq-rust-1\.0\.0"):
        parse_target("rocketmq-rust-0.1.0")


def test_its_version_word_chooses_its_profile() -> None:
    chosen = profile.choose(profile.Request(), RELEASES["1.0.0"].mq_version)
    assert chosen.profile.file == "rocketmq-rust-1.0.0"
    assert "V5_3_1_SNAPSHOT" in chosen.how


def test_java_settings_are_written_with_rocketmq_rusts_names() -> None:
    written = own_settings({"transactionTimeOut": "1000",
                            "authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
                            "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER})
    assert written == {"transactionTimeout": "1000",
                       "authenticationMetadataProvider": "LocalAuthenticationMetadataProvider",
                       "authorizationMetadataProvider": "LocalAuthorizationMetadataProvider"}
