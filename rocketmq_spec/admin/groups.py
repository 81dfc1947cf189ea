"""The consumer-group and broker-config commands of ``rmq-admin``: the bodies mqadmin sends for them.

``updateSubGroup`` sends what 5.5.0's ``UpdateSubGroupSubCommand`` sends: a default
``SubscriptionGroupConfig`` with broadcast and consume-from-min turned off, then the options given, as
fastjson2 writes it (keys in order). ``getBrokerConfig`` and ``updateBrokerConfig`` carry
``java.util.Properties`` text both ways (``MixAll.string2Properties`` / ``properties2String``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from rocketmq_spec.admin.wire import AdminError
from rocketmq_spec.spec.admin_bodies import SUBSCRIPTION_GROUP_CONFIG_5X

OPTION_FIELDS = {"consume_enable": "consumeEnable", "consume_from_min": "consumeFromMinEnable",
                 "broadcast": "consumeBroadcastEnable", "orderly": "consumeMessageOrderly",
                 "retry_queues": "retryQueueNums", "retry_max_times": "retryMaxTimes",
                 "broker_id": "brokerId", "slow_broker": "whichBrokerWhenConsumeSlowly",
                 "notify": "notifyConsumerIdsChangedEnable"}
"""``rmq-admin updateSubGroup`` option destination -> SubscriptionGroupConfig field."""


def parse_attributes(text: str) -> dict[str, str]:
    """``AttributeParser.parseToMap``: ``+a=b,+c=d,-e`` -> ``{"+a": "b", "+c": "d", "-e": ""}``."""
    attributes: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if key[:1] not in "+-" or (key.startswith("+") and not sep) or (key.startswith("-") and sep):
            raise AdminError(f"attribute {part!r} is neither +key=value nor -key")
        attributes[key] = value
    return attributes


def sub_group_body(group: str, options: dict[str, Any], retry_policy: str | None = None,
                   attributes: str | None = None) -> bytes:
    """The UPDATE_AND_CREATE_SUBSCRIPTIONGROUP body of ``mqadmin updateSubGroup``: options map by
    :data:`OPTION_FIELDS` (None: not given)."""
    config: dict[str, Any] = copy.deepcopy(SUBSCRIPTION_GROUP_CONFIG_5X)
    config.update(consumeBroadcastEnable=False, consumeFromMinEnable=False, groupName=group)
    config.update({OPTION_FIELDS[name]: value for name, value in options.items() if value is not None})
    if retry_policy is not None:
        try:
            config["groupRetryPolicy"] = json.loads(retry_policy)
        except ValueError as exc:
            raise AdminError(f"groupRetryPolicy is not JSON: {exc}") from None
    if attributes is not None:
        config["attributes"] = parse_attributes(attributes)
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
