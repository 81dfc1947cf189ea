"""LITE_PULL_MESSAGE and POP_ROLLBACK, the two 5.x codes a lite pull consumer and mqadmin's exportPopRecord
send: served by the 5.x wire releases as Apache's processors serve them, unknown to 4.9.8."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.fast_store import count_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import pull_fields
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.behaviour import LITE_PULL_FORBIDDEN_REMARK
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.sysflag import ForbiddenType, PullSysFlag
from tests.broker_support import run
from tests.messaging_support import send, with_broker

TOPIC = "LiteTopic"


def _lite(fields: dict[str, str]) -> dict[str, str]:
    """The pull header a DefaultLitePullConsumer sends: the same fields, FLAG_LITE_PULL_MESSAGE set."""
    return {**fields, "sysFlag": str(int(fields["sysFlag"]) | PullSysFlag.LITE_PULL_MESSAGE)}


LITE_PULL_AT_0 = _lite(pull_fields(TOPIC, 0, 0))


async def _pull_both(client: RemotingClient) -> tuple:
    fields = pull_fields(TOPIC, 0, 1)
    pulled = await client.invoke(client.request(RequestCode.PULL_MESSAGE, fields))
    lite = await client.invoke(client.request(RequestCode.LITE_PULL_MESSAGE, _lite(fields)))
    return pulled, lite


def test_lite_pull_is_a_pull_unless_forbidden(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for index in range(3):
            assert (await send(client, TOPIC, f"m{index}".encode(), {})).code == ResponseCode.SUCCESS
        pulled, lite = await _pull_both(client)
        assert (lite.code, lite.remark, lite.ext_fields) == (pulled.code, pulled.remark, pulled.ext_fields)
        assert lite.body == pulled.body and count_records(lite.body) == 2
        update = client.request(RequestCode.UPDATE_BROKER_CONFIG, None, b"litePullMessageEnable=false\n")
        assert (await client.invoke(update)).code == ResponseCode.SUCCESS
        pulled, refused = await _pull_both(client)
        assert pulled.code == ResponseCode.SUCCESS
        remark = LITE_PULL_FORBIDDEN_REMARK.format(broker_ip1=mq.broker_config.broker_ip1)
        assert (refused.code, refused.remark, refused.ext_fields) == (
            ResponseCode.NO_PERMISSION, remark, {"forbiddenType": str(int(ForbiddenType.BROKER_FORBIDDEN))})
        fast = await RemotingClient.connect(mq.broker_fast_addr)
        try:
            on_fast = await fast.invoke(fast.request(RequestCode.LITE_PULL_MESSAGE, LITE_PULL_AT_0))
        finally:
            await fast.close()
        assert on_fast.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED

    run(with_broker(tmp_path / "store", scenario))


@pytest.mark.parametrize("release", ["5.5.0", "5.3.3", "4.9.8"])
def test_pop_rollback_by_release(tmp_path: Path, release: str) -> None:
    """5.3.2+ answers SUCCESS without a header (pop state is in the revive log already); 4.9.8 has no
    such code, nor LITE_PULL_MESSAGE."""
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        rollback = await client.invoke(client.request(RequestCode.POP_ROLLBACK))
        lite = await client.invoke(client.request(RequestCode.LITE_PULL_MESSAGE, LITE_PULL_AT_0))
        if release == "4.9.8":
            assert rollback.code == lite.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        else:
            assert (rollback.code, rollback.remark, rollback.ext_fields) == (ResponseCode.SUCCESS, None, None)
            assert lite.code != ResponseCode.REQUEST_CODE_NOT_SUPPORTED

    run(with_broker(tmp_path / "store", scenario, wire_release=release))
