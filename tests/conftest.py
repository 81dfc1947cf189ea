"""Settings every test of the default run shares.

Hypothesis is judged on a loaded machine: CI and developers' machines run the suite on two cores beside
other work, where an example can take seconds for reasons that have nothing to do with the property. The
``loaded`` profile, selected unless ``HYPOTHESIS_PROFILE`` names another, has no deadline and none of the
health checks that time or size examples (``rocketmq_spec.fuzz.profiles.SLOW_DATA``); it inherits the rest
from Hypothesis's default (its ``ci`` profile where it detects CI). It is loaded here, before any test
module is imported, because a ``@settings(...)`` decorator takes its unset values from the profile loaded
when it runs.
"""

from __future__ import annotations

import os

from hypothesis import settings

from rocketmq_spec.fuzz.profiles import SLOW_DATA

LOADED = "loaded"
PROFILE_ENV = "HYPOTHESIS_PROFILE"

settings.register_profile(LOADED, deadline=None, suppress_health_check=SLOW_DATA)
settings.load_profile(os.environ.get(PROFILE_ENV, LOADED))
