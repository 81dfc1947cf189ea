"""Topic attributes (5.x): named settings a topic carries beside its queue counts, ``message.type`` first.

``UPDATE_AND_CREATE_TOPIC`` carries them in its ``attributes`` header field as a comma-separated list of
``+key=value`` (set) and ``-key`` (remove); topics.json and GET_ALL_TOPIC_CONFIG keep them in a JSON object
``attributes``. A proxy reads ``message.type`` to tell the 5.x SDKs which kinds of message a topic accepts
(a queue's ``accept_message_types``) and to refuse a message of another kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

MESSAGE_TYPE = "message.type"


@dataclass(frozen=True)
class TopicAttribute:
    name: str
    values: tuple[str, ...]
    default: str
    changeable: bool
    meaning: str


TOPIC_ATTRIBUTES: tuple[TopicAttribute, ...] = (
    TopicAttribute(MESSAGE_TYPE, ("UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED"), "NORMAL",
                   True, "kinds of message the topic accepts; MIXED accepts every kind"),
)
"""``TopicAttributes.ALL`` as far as the reference broker keeps it (5.3.3)."""

ATTRIBUTE_SYNTAX = clause(
    "RMQ-TOPIC-ATTRIBUTES", Level.MUST,
    "UPDATE_AND_CREATE_TOPIC's attributes field is a comma-separated list of +key=value (set) and -key "
    "(remove); a key outside TOPIC_ATTRIBUTES or a value outside its list is refused with SYSTEM_ERROR and "
    "the topic is left as it was.",
    source="common/src/main/java/org/apache/rocketmq/common/attribute/AttributeParser.java")


class TopicAttributeError(ValueError):
    """An attributes string that cannot be applied: what was expected and what was seen."""


def apply(current: dict[str, str], text: str) -> dict[str, str]:
    """``current`` with the changes of an attributes string applied (``AttributeUtil``)."""
    known = {a.name: a for a in TOPIC_ATTRIBUTES}
    result = dict(current)
    for item in filter(None, (part.strip() for part in text.split(","))):
        sign, body = item[:1], item[1:]
        key, _, value = body.partition("=")
        attribute = known.get(key)
        if sign not in "+-" or not sign or attribute is None:
            raise TopicAttributeError(f"unsupported attribute {item!r}: expected +key=value or -key with "
                                      f"key in {sorted(known)}")
        if sign == "-":
            result.pop(key, None)
        elif value not in attribute.values:
            raise TopicAttributeError(f"value {value!r} of {key} is not one of {list(attribute.values)}")
        else:
            result[key] = value
    return result
