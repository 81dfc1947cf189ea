"""The spec's release tables against the releases themselves: constants read off each provisioned
release's jars by a small Java program must equal what the tables say that release declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.spec.codes import REQUEST_CODES, RESPONSE_CODES
from rocketmq_spec.spec.language import LANGUAGE_SINCE
from rocketmq_spec.spec.releases import (
    ALL,
    LEGACY,
    Releases,
    between,
    ordinal,
    release_of_version,
    since,
    until,
)
from tests.java_programs import JavaUnavailable, compile_program, release_classpath, run_program

RUNNABLE = ("4.9.7", "5.3.3", "5.4.0", "5.5.0")
"""Releases whose jars this machine's Maven repository serves in full."""


def test_ranges_hold_by_ordinal() -> None:
    acl_config = Releases((None, "4.9.7"), ("5.0.0", "5.3.2"))
    assert "4.9.7" in acl_config and "4.9.8" not in acl_config and "5.0.0" in acl_config
    assert "5.3.3" not in acl_config
    assert "5.5.1" in since("5.3.0") and "5.2.0" not in since("5.3.0")
    assert "4.9.8" in until("5.3.2") and "5.3.3" not in until("5.3.2")
    assert "5.1.0" in between("5.0.0", "5.1.0") and "5.1.1" not in between("5.0.0", "5.1.0")
    assert "5.5.1" in ALL and str(acl_config) == "up to 4.9.7, 5.0.0-5.3.2"


def test_version_words() -> None:
    assert [ordinal(name) for name in ("4.9.7", LEGACY, "5.3.3", "5.4.0", "5.5.0", "5.5.1")] == [
        407, 409, 479, 493, 513, 515]
    found = release_of_version(481)  # 5.3.4, between two covered releases
    assert found is not None and found.name == "5.3.3"
    assert release_of_version(1) is None


def _packages(version: str) -> tuple[str, str]:
    """Where a release declares RequestCode/ResponseCode and MQVersion."""
    if version.startswith("4."):
        return "org.apache.rocketmq.common.protocol", "org.apache.rocketmq.common"
    return "org.apache.rocketmq.remoting.protocol", "org.apache.rocketmq.common"


@pytest.fixture(scope="module", params=RUNNABLE)
def constants(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    version = request.param
    try:
        classpath = release_classpath(version)
        classes = compile_program("DumpConstants", classpath, tmp_path_factory.mktemp(f"dump-{version}"))
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    codes, common = _packages(version)
    output = run_program("DumpConstants", classpath, Path(classes),
                         f"{codes}.RequestCode", f"{codes}.ResponseCode",
                         "org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode",
                         "org.apache.rocketmq.remoting.protocol.LanguageCode", f"{common}.MQVersion")
    return version, output.splitlines()


def _declared(lines: list[str], class_suffix: str) -> set[tuple[str, int]]:
    found = set()
    for line in lines:
        owner, name, value = line.split(" ", 2)
        if owner.endswith(class_suffix) and value.lstrip("-").isdigit():
            found.add((name, int(value)))
    return found


@pytest.mark.interop
def test_request_codes_match_the_jar(constants: tuple[str, list[str]]) -> None:
    version, lines = constants
    wanted = {(c.name, c.value) for c in REQUEST_CODES if c.present_in(version)}
    assert _declared(lines, ".RequestCode") == wanted


@pytest.mark.interop
def test_response_codes_match_the_jar(constants: tuple[str, list[str]]) -> None:
    version, lines = constants
    jar = _declared(lines, ".ResponseCode") | _declared(lines, ".RemotingSysResponseCode")
    assert jar == {(c.name, c.value) for c in RESPONSE_CODES if c.present_in(version)}


@pytest.mark.interop
def test_version_word_and_languages_match_the_jar(constants: tuple[str, list[str]]) -> None:
    version, lines = constants
    assert ("CURRENT_VERSION", ordinal(version)) in _declared(lines, ".MQVersion")
    languages = {name for name, _ in _declared(lines, ".LanguageCode")}
    assert languages == {row.language.name for row in LANGUAGE_SINCE if version in since(row.since)}
