"""Every command-line tool answers bad input with one line on stderr and a non-zero status, before any
work starts, and prints ``--version``."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rocketmq_spec.rocketmq_rust.releases import RELEASES as RUST_RELEASES
from tests import process_tree
from tests.golden import PROJECT_ROOT

TOOLS = {
    "rmq-conformance": "rocketmq_spec.conformance.cli",
    "rmq-frame": "rocketmq_spec.codec.cli.frame",
    "rmq-store": "rocketmq_spec.codec.cli.store",
    "rmq-fuzz": "rocketmq_spec.fuzz.cli",
    "rmq-spark": "rocketmq_spec.spark.cli",
    "rmq-spec-doc": "rocketmq_spec.spec.document",
    "rmq-broker": "rocketmq_spec.reference_broker.cli",
}


def run(tool: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return process_tree.run([sys.executable, "-m", TOOLS[tool], *map(str, args)], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=120)


def one_line_failure(tool: str, *args: str | Path) -> str:
    """The single stderr line of a failed run (asserting there is exactly one, and no output)."""
    result = run(tool, *args)
    assert result.returncode != 0, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{tool}: "), lines
    assert result.stdout == ""
    return lines[0]


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def not_a_store(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("not a store\n")
    return tmp_path


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_version(tool: str) -> None:
    result = run(tool, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{tool} ") and "rocketmq-spec" in result.stdout


@pytest.mark.parametrize("tool", sorted(set(TOOLS) - {"rmq-broker"}))
def test_a_bad_command_line_is_one_line(tool: str) -> None:
    assert one_line_failure(tool, "--no-such-option").endswith(f"(see {tool} --help)")


def test_conformance_names_the_unreachable_address_before_running_cases(closed_port: int) -> None:
    line = one_line_failure("rmq-conformance", "--namesrv", f"127.0.0.1:{closed_port}")
    assert f"name server at 127.0.0.1:{closed_port} is unreachable" in line
    line = one_line_failure("rmq-conformance", "--broker", f"127.0.0.1:{closed_port}")
    assert f"broker at 127.0.0.1:{closed_port} is unreachable" in line
    line = one_line_failure("rmq-conformance", "--controller-addr", f"127.0.0.1:{closed_port}")
    assert f"controller at 127.0.0.1:{closed_port} is unreachable" in line


def test_conformance_starts_a_controller_only_for_a_target_with_one() -> None:
    """An Apache 5.x release and the embedded target (the reference controller) have one."""
    rust = next(iter(RUST_RELEASES.values())).target_name
    assert f"{rust} has no controller" in one_line_failure("rmq-conformance", "--target", rust,
                                                           "--controller")
    assert "apache-4.9.7 has no controller" in one_line_failure("rmq-conformance", "--target", "apache-4.9.7",
                                                                "--controller")


def test_conformance_names_a_directory_that_is_not_a_store(not_a_store: Path) -> None:
    line = one_line_failure("rmq-conformance", "store", not_a_store)
    assert f"{not_a_store} is not a RocketMQ store" in line
    missing = not_a_store / "missing"
    assert f"{missing} does not exist" in one_line_failure("rmq-conformance", "store", missing)


def test_conformance_names_a_missing_profile(tmp_path: Path) -> None:
    line = one_line_failure("rmq-conformance", "store", tmp_path, "--profile", tmp_path / "gone.toml")
    assert "gone.toml" in line


def test_conformance_comparison_names_a_missing_report(tmp_path: Path) -> None:
    line = one_line_failure("rmq-conformance", "compare-html", tmp_path / "a", tmp_path / "b",
                            "--html", tmp_path / "out.html")
    assert f"report index {tmp_path / 'a' / 'index.json'} does not exist" in line
    assert not (tmp_path / "out.html").exists()


def test_frame_names_the_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.bin"
    line = one_line_failure("rmq-frame", "decode", missing)
    assert line == f"rmq-frame: file {missing} does not exist"


def test_store_names_a_directory_that_is_not_a_store(not_a_store: Path) -> None:
    for command in ("dump", "inspect"):
        assert f"{not_a_store} is not a RocketMQ store" in one_line_failure("rmq-store", command, not_a_store)


def test_fuzz_names_the_target_that_does_not_answer(closed_port: int) -> None:
    line = one_line_failure("rmq-fuzz", "--namesrv", f"127.0.0.1:{closed_port}",
                            "--broker", f"127.0.0.1:{closed_port}", "--seconds", "1")
    assert f"127.0.0.1:{closed_port} does not accept connections" in line


def test_fuzz_refuses_a_target_off_loopback() -> None:
    line = one_line_failure("rmq-fuzz", "--namesrv", "192.0.2.1:9876", "--broker", "127.0.0.1:1")
    assert "192.0.2.1:9876" in line and "loopback" in line


def test_spark_names_a_directory_that_is_not_a_store(not_a_store: Path) -> None:
    assert f"{not_a_store} is not a RocketMQ store" in one_line_failure("rmq-spark", "verify", not_a_store)


def test_spec_doc_names_the_file_it_cannot_write(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "PROTOCOL.md"
    assert one_line_failure("rmq-spec-doc", "--output", target) == \
        f"rmq-spec-doc: {target}: No such file or directory"
