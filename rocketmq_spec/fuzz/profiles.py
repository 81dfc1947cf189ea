"""Hypothesis settings for the fuzz properties, picked by ``RMQ_FUZZ_PROFILE``.

The default profile keeps the whole test run bounded; ``long`` is what the ``fuzz-long`` tox environment
runs. The settings are handed out as objects that decorate each property, rather than loaded globally,
so that selecting a fuzz profile never changes how other engineers' property tests run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE_ENV = "RMQ_FUZZ_PROFILE"

SLOW_DATA = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example)
"""Health checks that measure how fast examples are made or how big they are: on a loaded machine (CI, two
cores shared with other work) they fail properties that are right, so no profile of the project runs them."""

PROFILES: dict[str, settings] = {
    # 60 examples per property keeps every fuzz module under a few seconds on one core.
    "default": settings(max_examples=60, deadline=None, suppress_health_check=SLOW_DATA),
    # Enough for an overnight-style run of a few minutes per property.
    "long": settings(max_examples=20_000, deadline=None, suppress_health_check=SLOW_DATA),
}

STATEFUL_STEPS: dict[str, int] = {"default": 25, "long": 200}
"""Rule invocations per stateful run: each step is a network round trip to a live broker."""


def profile_name() -> str:
    name = os.environ.get(PROFILE_ENV, "default")
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_ENV}={name!r}: expected one of {sorted(PROFILES)}")
    return name


def fuzz_settings(**overrides: object) -> settings:
    """The selected profile, optionally scaled down for properties whose examples are expensive."""
    return settings(PROFILES[profile_name()], **overrides)  # type: ignore[arg-type]
