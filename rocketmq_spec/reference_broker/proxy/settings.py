"""Client settings: what each client reported on Telemetry, and the copy the server answers with.

``GrpcClientSettingsManager``: a producer's settings get the server's retry policy, its body size limit
and whether the SDK checks message types; a consumer's get its group's retry policy, the push consumer's
batch size and long-polling time, and whether the group consumes in order (RMQ-GRPC-SETTINGS).
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf import duration_pb2

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroup
from rocketmq_spec.spec.grpc_rpcs import (
    CONSUMER_BATCH_SIZE,
    MAX_LONG_POLLING_MS,
    MAX_MESSAGE_SIZE,
    PRODUCER_BACKOFF_MS,
    PRODUCER_MAX_ATTEMPTS,
)

_S, _M, _H = 1000, 60_000, 3_600_000
CONSUMER_BACKOFF_MS = (1 * _S, 5 * _S, 10 * _S, 30 * _S,
                       *(m * _M for m in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30)), 1 * _H, 2 * _H)
"""``CustomizedRetryPolicy``'s default ``next``, a group's back-off unless it chose another (the 18 delay
levels of 4.x)."""


def _duration(ms: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromMilliseconds(int(ms))
    return duration


def _exponential(initial_ms: float, max_ms: float, multiplier: float) -> v2.ExponentialBackoff:
    return v2.ExponentialBackoff(initial=_duration(initial_ms), max=_duration(max_ms), multiplier=multiplier)


class SettingsStore:
    def __init__(self, group_of: Callable[[str], SubscriptionGroup | None], *,
                 validate_message_type: bool = True) -> None:
        self._group_of = group_of
        self._validate_message_type = validate_message_type
        self._raw: dict[str, v2.Settings] = {}

    def update(self, client_id: str, settings: v2.Settings) -> v2.Settings:
        """Record a client's settings; returns the merged copy the server answers with."""
        self._raw[client_id] = v2.Settings()
        self._raw[client_id].CopyFrom(settings)
        merged = self.merged(client_id)
        assert merged is not None
        return merged

    def raw(self, client_id: str) -> v2.Settings | None:
        return self._raw.get(client_id)

    def remove(self, client_id: str) -> v2.Settings | None:
        return self._raw.pop(client_id, None)

    def merged(self, client_id: str) -> v2.Settings | None:
        raw = self._raw.get(client_id)
        if raw is None:
            return None
        settings = v2.Settings()
        settings.CopyFrom(raw)
        if settings.HasField("publishing"):
            settings.backoff_policy.max_attempts = PRODUCER_MAX_ATTEMPTS
            settings.backoff_policy.exponential_backoff.CopyFrom(_exponential(*PRODUCER_BACKOFF_MS))
            settings.publishing.validate_message_type = self._validate_message_type
            settings.publishing.max_body_size = MAX_MESSAGE_SIZE
        elif settings.HasField("subscription"):
            group = self._group_of(settings.subscription.group.name) or SubscriptionGroup("")
            subscription = settings.subscription
            subscription.receive_batch_size = CONSUMER_BATCH_SIZE
            subscription.long_polling_timeout.CopyFrom(_duration(MAX_LONG_POLLING_MS))
            subscription.fifo = group_consumes_orderly(group)
            settings.backoff_policy.max_attempts = group.retry_max_times + 1
            settings.backoff_policy.customized_backoff.CopyFrom(
                v2.CustomizedBackoff(next=[_duration(ms) for ms in CONSUMER_BACKOFF_MS]))
        settings.metric.CopyFrom(v2.Metric(on=False))
        return settings


def group_consumes_orderly(group: SubscriptionGroup) -> bool:
    """``SubscriptionGroupConfig.consumeMessageOrderly`` (5.x; ``mqadmin updateSubGroup -o true``)."""
    return group.consume_message_orderly
