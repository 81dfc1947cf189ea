"""The checks the proxy makes before it asks the broker anything (``GrpcValidator``, ``Validators``).

Each raises ``Refusal`` with the Code of ``rocketmq_spec.spec.grpc_rpcs.CODE_ANSWERS`` and Java's message.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping

from rocketmq_spec.reference_broker.broker.topics import topic_name_problem
from rocketmq_spec.reference_broker.proxy.call import Refusal
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_mapping import RESERVED_KEYS_5X
from rocketmq_spec.spec.grpc_rpcs import MAX_MESSAGE_GROUP_SIZE, MAX_USER_PROPERTY_SIZE, USER_PROPERTY_MAX_NUM
from rocketmq_spec.spec.system_topics import SYSTEM_GROUP_PREFIX, VALID_TOPIC

GROUP_MAX_LENGTH = 255


def has_control_character(text: str) -> bool:
    """Guava's ``CharMatcher.javaIsoControl``: U+0000-U+001F and U+007F-U+009F."""
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def topic(name: str, is_system_topic: Callable[[str], bool]) -> None:
    problem = topic_name_problem(name)
    if problem is not None:
        raise Refusal(Code.ILLEGAL_TOPIC, problem)
    if is_system_topic(name):
        raise Refusal(Code.ILLEGAL_TOPIC, "cannot access system topic")


def group(name: str) -> None:
    if not name.strip():
        problem = "the specified group is blank"
    elif len(name) > GROUP_MAX_LENGTH:
        problem = f"the specified group is longer than group max length {GROUP_MAX_LENGTH}."
    elif not VALID_TOPIC.match(name):
        problem = f"the specified group[{name}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    elif name.startswith(SYSTEM_GROUP_PREFIX):
        problem = "cannot use system consumer group"
    else:
        return
    raise Refusal(Code.ILLEGAL_CONSUMER_GROUP, problem)


def tag(value: str) -> None:
    if not value:
        return
    if not value.strip():
        raise Refusal(Code.ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
    if "|" in value:
        raise Refusal(Code.ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
    if has_control_character(value):
        raise Refusal(Code.ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")


def keys(values: Iterable[str]) -> None:
    for key in values:
        if key and not key.strip():
            raise Refusal(Code.ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
        if has_control_character(key):
            raise Refusal(Code.ILLEGAL_MESSAGE_KEY, "key cannot contain control character")


def message_group(value: str) -> None:
    if not value:
        return
    if not value.strip():
        raise Refusal(Code.ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
    if len(value.encode()) >= MAX_MESSAGE_GROUP_SIZE:
        raise Refusal(Code.ILLEGAL_MESSAGE_GROUP,
                      f"message group exceed the max size {MAX_MESSAGE_GROUP_SIZE}")
    if has_control_character(value):
        raise Refusal(Code.ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")


def user_properties(properties: Mapping[str, str], tag_value: str, key_values: Iterable[str]) -> None:
    """The names, characters, count and total size of a message's user properties (tag and keys count
    towards the size, as in ``buildMessageProperty``)."""
    if len(properties) > USER_PROPERTY_MAX_NUM:
        raise Refusal(Code.MESSAGE_PROPERTIES_TOO_LARGE,
                      f"too many user properties, max is {USER_PROPERTY_MAX_NUM}")
    size = 0
    for name, value in properties.items():
        if name in RESERVED_KEYS_5X:
            raise Refusal(Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property is used by system: {name}")
        if has_control_character(name):
            raise Refusal(Code.ILLEGAL_MESSAGE_PROPERTY_KEY,
                          "the key of property cannot contain control character")
        if has_control_character(value):
            raise Refusal(Code.ILLEGAL_MESSAGE_PROPERTY_KEY,
                          "the value of property cannot contain control character")
        size += len(name.encode()) + len(value.encode())
    size += len(tag_value.encode()) + sum(len(key.encode()) for key in key_values)
    if size > MAX_USER_PROPERTY_SIZE:
        raise Refusal(Code.MESSAGE_PROPERTIES_TOO_LARGE,
                      f"the total size of user property is too large, max is {MAX_USER_PROPERTY_SIZE}")
