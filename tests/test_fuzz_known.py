"""Known defects: a finding whose cause the target's profile cites is known, anything else is a finding."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rocketmq_spec.conformance.profile import KnownDefect, Profile, load
from rocketmq_spec.conformance.regression import FindingClass, load_cases
from rocketmq_spec.fuzz.known import UnknownCause, json_header_ends_in_enum_value, matcher


def _json_frame(header: bytes, declared: int | None = None) -> bytes:
    length = len(header) if declared is None else declared
    return struct.pack(">II", 4 + len(header), length) + header


def test_a_header_cut_inside_an_enum_value_is_recognised() -> None:
    header = b'{"code":106,"flag":0,"language":"JAVA","opaque":0}'
    assert json_header_ends_in_enum_value(_json_frame(header, header.index(b"JAVA") + 2))
    assert json_header_ends_in_enum_value(_json_frame(b'{"serializeTypeCurrentRPC":"JS'))
    assert not json_header_ends_in_enum_value(_json_frame(header))
    assert not json_header_ends_in_enum_value(_json_frame(b'{"code":106,"remark":"JA'))


def test_the_kept_slow_close_regressions_are_the_cited_4_9_defect() -> None:
    known = matcher(load(Path("rocketmq-4.9")))
    for case in load_cases():
        streams = [connection.stream for connection in case.connections]
        expected = case.finding is FindingClass.SLOW_CLOSE
        assert (known(case.finding, streams) is not None) == expected, case.id
        assert known(FindingClass.CRASH, streams) is None


def test_the_5x_profile_cites_no_fastjson_spin() -> None:
    known = matcher(load(Path("rocketmq-5")))
    for case in load_cases():
        assert known(case.finding, [c.stream for c in case.connections]) is None, case.id


def test_a_profile_citing_a_cause_the_fuzzer_cannot_recognise_is_refused() -> None:
    profile = Profile("p", known_defects=(KnownDefect("slow-close", "unheard-of", "r", "s"),))
    with pytest.raises(UnknownCause, match="unheard-of"):
        matcher(profile)
