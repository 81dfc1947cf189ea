"""Model-based test of a broker: the embedded reference broker by default, any broker by RMQ_BROKER.

With ``RMQ_BROKER=HOST:PORT`` (and ``RMQ_NAMESRV``, which the machine does not need but a target
deployment names) the same machine runs against that broker, without restarts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis.stateful import run_state_machine_as_test

from rocketmq_spec.fuzz.profiles import STATEFUL_STEPS, fuzz_settings, profile_name
from rocketmq_spec.fuzz.stateful import ModelTarget, machine_for
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ

STATEFUL_RUNS = 4
"""Sequences per default run: each starts its own broker, and shrinking re-runs failing ones anyway."""


def _start(store: Path) -> SyncEmbeddedRocketMQ:
    # Fast port 0 as well: derived from an ephemeral main port (port - 2) it may already be taken.
    config = BrokerConfig(listen_port=0, fast_listen_port=0)
    return SyncEmbeddedRocketMQ(store, broker_config=config).start()


class EmbeddedTarget:
    """The reference broker on a temporary store; restart keeps the store and may change the port."""

    can_restart = True

    def __init__(self) -> None:
        self.store = Path(tempfile.mkdtemp(prefix="rmq-model-"))
        self.running = _start(self.store)

    @property
    def broker_addr(self) -> str:
        return self.running.broker_addr

    def restart(self) -> None:
        self.running.stop()
        self.running = _start(self.store)

    def stop(self) -> None:
        self.running.stop()
        shutil.rmtree(self.store, ignore_errors=True)


class ExternalTarget:
    can_restart = False

    def __init__(self, broker_addr: str) -> None:
        self.broker_addr = broker_addr

    def restart(self) -> None:
        raise NotImplementedError("an external target is not restarted by the test")


def _make_target() -> ModelTarget:
    external = os.environ.get("RMQ_BROKER")
    return ExternalTarget(external) if external else EmbeddedTarget()


def _release(target: ModelTarget) -> None:
    if isinstance(target, EmbeddedTarget):
        target.stop()


def test_broker_follows_the_model() -> None:
    steps = STATEFUL_STEPS[profile_name()]
    runs = STATEFUL_RUNS if profile_name() == "default" else None
    settings = fuzz_settings(stateful_step_count=steps, **({"max_examples": runs} if runs else {}))
    run_state_machine_as_test(machine_for(_make_target, _release), settings=settings)
