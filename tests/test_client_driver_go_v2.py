"""The driver of Apache's Go remoting client (rocketmq-client-go v2), built from the Go module proxy at first
use and run as the client conformance suite runs it, against the reference broker: ``produce`` reports
each acknowledged send with its id, and ``consume-push`` and ``consume-pull`` (the client's pull consumer)
then receive exactly those messages with the driver's bodies, both ending with ``done``; every other send
mode reports each message of its run.

The first build downloads and compiles the client (a minute or two), so the runs are ``slow``; a machine
without ``go`` skips it with the reason. The broker, the topic and the run helpers are those of the other
shipped drivers' test (tests/test_client_drivers_java.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.conformance.clients import go_v2
from rocketmq_spec.conformance.clients.registry import DRIVERS
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests import process_tree
from tests.test_client_drivers_java import COUNT, _body, _run, _skip_unless_installable, _topic, broker

pytestmark = pytest.mark.interop
__all__ = ["broker"]  # the module-scoped broker fixture, shared with the other drivers' test


def test_the_registry_names_the_pinned_client() -> None:
    row = DRIVERS[go_v2.NAME]
    assert row.protocol == "remoting" and go_v2.VERSION in row.description
    assert f"{go_v2.MODULE} {go_v2.VERSION}" in (go_v2.SOURCE_DIR / "go.mod").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("consume", ["consume-push", "consume-pull"])
def test_go_client_produces_and_consumes(consume: str, broker: SyncEmbeddedRocketMQ, tmp_path: Path) -> None:
    row = DRIVERS[go_v2.NAME]
    _skip_unless_installable(row)
    topic = _topic(broker)
    produced = _run(row, "produce", broker, tmp_path, topic=topic, group=f"p-{topic}")
    sent = [e for e in produced if e["event"] == "sent"]
    assert sent and all(e["msgId"] and e["status"] == "SEND_OK" for e in sent), produced
    received = [e for e in _run(row, consume, broker, tmp_path, topic=topic, group=f"c-{topic}")
                if e["event"] == "received"]
    assert {e["msgId"] for e in received} >= {e["msgId"] for e in sent}, received
    assert {e["body_b64"] for e in received} >= {_body(e["index"]) for e in sent}
    assert {e["topic"] for e in received} == {topic}
    assert {e["reconsumeTimes"] for e in received} == {0}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["produce-async", "produce-oneway", "produce-batch", "produce-delay",
                                      "produce-fifo"])
def test_each_send_mode_reports_every_message(scenario: str, broker: SyncEmbeddedRocketMQ,
                                              tmp_path: Path) -> None:
    row = DRIVERS[go_v2.NAME]
    _skip_unless_installable(row)
    topic = _topic(broker)
    events = _run(row, scenario, broker, tmp_path, topic=topic, group=f"p-{topic}", delay_level="1")
    sent = [e for e in events if e["event"] == "sent"]
    assert sorted(e["index"] for e in sent) == list(range(COUNT)), events
    if scenario == "produce-fifo":
        assert {e["group"] for e in sent} == {"g0", "g1"}, events


@pytest.mark.slow
def test_a_scenario_the_client_lacks_is_unsupported(tmp_path: Path) -> None:
    row = DRIVERS[go_v2.NAME]
    _skip_unless_installable(row)
    done = process_tree.run([*row.argv(), "consume-pop"], capture_output=True, text=True, timeout=30,
                            check=False, env={"RMQ_PROTOCOL": "remoting", "RMQ_WORKDIR": str(tmp_path)})
    assert done.returncode == 3 and '"unsupported"' in done.stdout
