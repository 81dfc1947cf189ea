"""Real clients through the reference broker with ``aclEnable=true``: the C++ client behind PyPI
``rocketmq`` 0.4.4 (``set_session_credentials``) and npm ``ali-ons`` 3.12.0 (``accessKey``/``secretKey``)
produce and consume when they sign with an account's keys, and are refused with a wrong secret.

The policy is the conformance suite's (``rocketmq_spec.conformance.acl_policy``): topics are created by its
admin account, the clients sign as its ``OPEN`` account (PUB|SUB on every topic and group). """

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance import acl_policy as policy
from tests.interop_checks import IDLE_TIMEOUT_S, RestartableBroker, make_messages, require
from tests.interop_clients import ALI_ONS, PY_ROCKETMQ, InteropError, run_consumer, run_producer

pytestmark = pytest.mark.interop

WRONG_SECRET = Credentials(policy.OPEN.access_key, "not-the-secret")
SIGNATURE_REFUSED = "Check signature failed"


@pytest.fixture
def acl_broker(tmp_path: Path) -> RestartableBroker:
    acl_file = policy.write_acl_file(tmp_path / "conf" / "plain_acl.yml")
    return RestartableBroker(tmp_path / "store", acl_enable=True, acl_file=str(acl_file),
                             wire_release=policy.ACL_RELEASE)


@pytest.mark.parametrize("client", [PY_ROCKETMQ, ALI_ONS])
def test_signed_client_produces_and_consumes(client: str, acl_broker: RestartableBroker) -> None:
    require(client)
    topic, group = f"InteropAcl{client.split('-')[0].title()}", "CID_INTEROP_ACL"
    with acl_broker as broker:
        broker.create_topic(topic, credentials=policy.ADMIN)
        messages = make_messages("acl", 3, ("TagA",))
        sent = run_producer(client, broker.namesrv_addr, topic, messages, "sync", credentials=policy.OPEN)
        assert len(sent) == 3
        received = run_consumer(client, broker.namesrv_addr, group, topic, "*", 3, IDLE_TIMEOUT_S,
                                credentials=policy.OPEN)
    assert sorted(e["body_b64"] for e in received if e["accepted"]) == sorted(m["body_b64"] for m in messages)


@pytest.mark.parametrize("client", [PY_ROCKETMQ, ALI_ONS])
def test_wrong_secret_is_refused(client: str, acl_broker: RestartableBroker) -> None:
    require(client)
    topic = "InteropAclRefused"
    with acl_broker as broker:
        broker.create_topic(topic, credentials=policy.ADMIN)
        with pytest.raises(InteropError) as failed:
            run_producer(client, broker.namesrv_addr, topic, make_messages("refused", 1, ("TagA",)), "sync",
                         credentials=WRONG_SECRET, timeout=60)
    assert SIGNATURE_REFUSED in failed.value.diagnostics
