"""The rocketmq-client-rust driver's pins and its registry row, without building it (the build is most
of an hour; the slow test of tests/test_client_drivers_java.py runs the built driver)."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from rocketmq_spec.conformance.clients import registry, rust_client


def _lock_versions() -> dict[str, set[str]]:
    lock = tomllib.loads((rust_client.DRIVER_DIR / "Cargo.lock").read_text())
    versions: dict[str, set[str]] = {}
    for package in lock["package"]:
        versions.setdefault(package["name"], set()).add(package["version"])
    return versions


def test_the_driver_pins_the_client_release_it_names() -> None:
    manifest = tomllib.loads((rust_client.DRIVER_DIR / "Cargo.toml").read_text())
    pinned = manifest["dependencies"][rust_client.CRATE]
    assert pinned["version"] == f"={rust_client.VERSION}"
    assert _lock_versions()[rust_client.CRATE] == {rust_client.VERSION}
    assert manifest["bin"][0]["name"] == rust_client.BINARY


def test_the_build_is_locked_to_the_lock_file() -> None:
    command = rust_client.build_command("cargo")
    assert "--locked" in command and "--release" in command
    assert Path(command[command.index("--manifest-path") + 1]) == rust_client.DRIVER_DIR / "Cargo.toml"


def test_a_changed_driver_source_makes_the_built_binary_stale(tmp_path: Path) -> None:
    program = dataclasses.replace(rust_client.PROGRAM, cache=tmp_path)
    program.binary.parent.mkdir(parents=True)
    program.binary.write_bytes(b"")
    program.stamp_file.write_text("a stamp of other sources")
    assert not program.built()
    program.stamp_file.write_text(program.stamp())
    assert program.built()


def test_a_stale_program_is_built_once_and_then_only_checked(tmp_path: Path) -> None:
    builds: list[Path] = []

    def build(output: Path) -> None:
        builds.append(output)
        output.write_bytes(b"#!/bin/sh\n")

    program = dataclasses.replace(rust_client.PROGRAM, cache=tmp_path)
    assert program.ensure(build) == program.binary and program.binary.read_bytes() == b"#!/bin/sh\n"
    assert program.ensure(build) == program.binary
    assert len(builds) == 1 and not builds[0].exists()  # built beside the binary, then moved into place


def test_the_registry_knows_the_driver_by_name() -> None:
    row = registry.DRIVERS[rust_client.NAME]
    assert row.protocol == "remoting"
    assert row.argv() == [str(rust_client.binary())]
