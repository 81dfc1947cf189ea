"""The default run holds on a loaded machine: Hypothesis runs under the ``loaded`` profile
(tests/conftest.py), with no deadline and no health check that times or sizes examples."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.conftest import LOADED, PROFILE_ENV


@pytest.mark.skipif(PROFILE_ENV in os.environ, reason="another Hypothesis profile was asked for")
def test_the_loaded_profile_is_the_default() -> None:
    assert settings.get_current_profile_name() == LOADED
    current = settings.default
    assert current is not None and current.deadline is None
    assert {HealthCheck.too_slow, HealthCheck.data_too_large} <= set(current.suppress_health_check)
