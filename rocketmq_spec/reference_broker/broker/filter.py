"""Which consume-queue entries a pull may return: the TAG expression of a subscription.

The broker only compares tag *hash codes* (the consume queue stores nothing else); clients compare the
tag strings again after the pull, so hash collisions are their business. A subscription of ``*`` (or an
empty one) matches everything and is represented by ``None``, the store's "no filter".
"""

from __future__ import annotations

from collections.abc import Iterable

from rocketmq_spec.spec.hashing import java_string_hash, to_int32

SUB_ALL = "*"
TAG_SEPARATOR = "||"
TAG_EXPRESSION_TYPE = "TAG"

TagCodes = frozenset[int] | None
"""Tag hash codes a subscription accepts; None accepts every message."""


def is_tag_type(expression_type: str | None) -> bool:
    """``ExpressionType.isTagType``: absent and empty mean TAG too."""
    return not expression_type or expression_type == TAG_EXPRESSION_TYPE


def parse_tag_expression(expression: str | None) -> TagCodes:
    """``FilterAPI.buildSubscriptionData``: split on ``||``, trim, drop empty tags, hash the rest."""
    if not expression or expression == SUB_ALL:
        return None
    tags = (tag.strip() for tag in expression.split(TAG_SEPARATOR))
    return frozenset(java_string_hash(tag) for tag in tags if tag)


def codes_of_subscription(sub_string: str | None, code_set: Iterable[int]) -> TagCodes:
    """A heartbeat's SubscriptionData: the broker trusts its codeSet unless it subscribes to all."""
    if not sub_string or sub_string == SUB_ALL:
        return None
    return frozenset(to_int32(int(code)) for code in code_set)


def matches(codes: TagCodes, tags_code: int) -> bool:
    """``ExpressionMessageFilter.isMatchedByConsumeQueue`` for TAG subscriptions."""
    return codes is None or to_int32(tags_code) in codes
