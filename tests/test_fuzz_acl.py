"""Properties of ACL signing (``rocketmq_spec.codec.acl``): a signed request verifies, survives both
serializations, and any change of what it signed is refused, by the verifier and, for a few examples, by the
reference broker with ACL on."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.acl import Credentials, sign, verify
from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.conformance.regression import Listener
from rocketmq_spec.fuzz.corpus import load_seeds
from rocketmq_spec.fuzz.live import FuzzConfig, LiveFuzzer, signed_seeds
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.acl import content_changes, content_keeping_changes, signed_requests
from rocketmq_spec.fuzz.target import Target
from rocketmq_spec.fuzz.wire import WireConnection
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.acl import Refusal
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType

LIVE_EXAMPLES = 15
"""Each live example is a round trip to the broker: a handful shows the check is the verifier's."""
BRIEF_SIGNED_FRAMES = 48
"""Frames of the in-suite signed live run: three batches to the broker."""


@given(signed_requests())
def test_signed_request_verifies(signed: tuple[RemotingCommand, Credentials]) -> None:
    command, credentials = signed
    assert verify(command, credentials.secret_key)


@given(signed_requests(), st.sampled_from(SerializeType))
def test_signature_survives_the_wire(signed: tuple[RemotingCommand, Credentials],
                                     serialize_type: SerializeType) -> None:
    command, credentials = signed
    command.serialize_type = serialize_type
    assert verify(decode(encode(command)), credentials.secret_key)


@given(st.data())
def test_any_change_of_signed_content_is_refused(data: st.DataObject) -> None:
    command, credentials = data.draw(signed_requests())
    change = data.draw(content_changes(command))
    assert not verify(change(command), credentials.secret_key), change.name


@given(st.data())
def test_values_only_are_signed(data: st.DataObject) -> None:
    """RMQ-ACL-SIGN-CONTENT signs values, not keys: an empty-valued field added goes unnoticed."""
    command, credentials = data.draw(signed_requests())
    change = data.draw(content_keeping_changes(command))
    assert verify(change(command), credentials.secret_key), change.name


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work: Path = tmp_path_factory.mktemp("acl-fuzz")
    acl_file = policy.write_acl_file(work / "plain_acl.yml")
    config = BrokerConfig(listen_port=0, acl_enable=True, acl_file=str(acl_file),
                          wire_release=policy.ACL_RELEASE,
                          store_path_root_dir=str(work / "store"))
    with SyncEmbeddedRocketMQ(work / "store", broker_config=config) as running:
        yield running.broker_addr


@fuzz_settings(max_examples=LIVE_EXAMPLES, deadline=None)
@given(st.data())
def test_broker_refuses_changed_requests(acl_broker: str, data: st.DataObject) -> None:
    command, _ = data.draw(signed_requests())
    command = sign(dataclasses.replace(command, code=RequestCode.GET_ALL_TOPIC_CONFIG), policy.OPEN)
    change = data.draw(content_changes(command).filter(lambda c: "AccessKey" not in c.name))
    with WireConnection(acl_broker) as connection:
        intact = connection.request(command, 5.0)
        changed = connection.request(dataclasses.replace(change(command), opaque=command.opaque + 1), 5.0)
    assert intact is not None and intact.code == ResponseCode.SUCCESS, intact
    assert changed is not None and changed.code == ResponseCode.SYSTEM_ERROR
    assert changed.remark == Refusal.SIGNATURE.remark(access_key=policy.OPEN.access_key), change.name


def test_live_fuzzer_signs_broker_seeds() -> None:
    seeds = load_seeds()
    signed = signed_seeds(seeds, policy.OPEN)
    assert len(signed) == len(seeds)
    broker = [seed for seed in signed if seed.listener is Listener.BROKER]
    assert broker and all(verify(decode(seed.data), policy.OPEN.secret_key) for seed in broker)
    assert [s for s in signed if s.listener is Listener.NAMESRV] == \
        [s for s in seeds if s.listener is Listener.NAMESRV]


def test_a_brief_signed_run_against_an_acl_broker_finds_nothing(tmp_path: Path) -> None:
    acl_file = policy.write_acl_file(tmp_path / "plain_acl.yml")
    config = BrokerConfig(listen_port=0, acl_enable=True, acl_file=str(acl_file),
                          wire_release=policy.ACL_RELEASE,
                          store_path_root_dir=str(tmp_path / "store"))
    with SyncEmbeddedRocketMQ(tmp_path / "store", broker_config=config) as running:
        target = Target(running.namesrv_addr, running.broker_addr)
        fuzz = FuzzConfig(target, seconds=600, max_frames=BRIEF_SIGNED_FRAMES, batch_size=16, seed=5,
                          listeners=(Listener.BROKER,), credentials=policy.ADMIN)
        summary = LiveFuzzer(fuzz, load_seeds(), tmp_path / "findings").run()
    assert summary.frames_sent == BRIEF_SIGNED_FRAMES and dict(summary.findings) == {}
