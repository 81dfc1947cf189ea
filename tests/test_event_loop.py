"""The broker's event loop choice: uvloop where it imports, asyncio's loop otherwise or when asked."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode


def _without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def refuse(name: str, package: str | None = None) -> ModuleType:
        if name == "uvloop":
            raise ImportError("No module named 'uvloop'")
        return real(name, package)

    monkeypatch.setattr(event_loop.importlib, "import_module", refuse)


def test_asyncio_when_asked() -> None:
    loop = event_loop.new_event_loop("asyncio")
    try:
        assert event_loop.loop_name(loop) == "asyncio"
    finally:
        loop.close()


def test_auto_takes_uvloop_where_it_imports() -> None:
    pytest.importorskip("uvloop")
    loop = event_loop.new_event_loop("auto")
    try:
        assert event_loop.loop_name(loop) == "uvloop"
    finally:
        loop.close()


def test_auto_falls_back_to_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_uvloop(monkeypatch)
    assert event_loop.loop_factory("auto") is asyncio.new_event_loop


def test_uvloop_by_name_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_uvloop(monkeypatch)
    with pytest.raises(event_loop.EventLoopUnavailable, match="uvloop"):
        event_loop.loop_factory("uvloop")


def test_environment_and_bad_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.ENVIRONMENT, "asyncio")
    assert event_loop.loop_factory() is asyncio.new_event_loop
    with pytest.raises(ValueError, match="one of auto, uvloop, asyncio"):
        event_loop.loop_factory("trio")


@pytest.mark.parametrize("choice", ["asyncio", "uvloop"])
def test_broker_answers_on_either_loop(tmp_path: Path, choice: str) -> None:
    if choice == "uvloop":
        pytest.importorskip("uvloop")

    async def topic_route() -> tuple[str, int]:
        async with EmbeddedRocketMQ(tmp_path / choice) as running:
            client = await RemotingClient.connect(running.namesrv_addr)
            try:
                answer = await client.invoke(client.request(RequestCode.GET_BROKER_CLUSTER_INFO))
            finally:
                await client.close()
            return event_loop.loop_name(asyncio.get_running_loop()), answer.code

    assert event_loop.run(topic_route(), choice) == (choice, ResponseCode.SUCCESS)
