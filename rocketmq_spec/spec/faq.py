"""The FAQ link Apache RocketMQ appends to its refusals, and the texts built around it, by release.

``FAQUrl.suggestTodo(url)`` ends a remark with ``"\\nSee <url> for further details."`` (the name server's
missing route, a broker's missing topic or group); ``FAQUrl.attachDefaultURL`` ends a client exception's
message with ``"\\nFor more information, please visit the url, <url>"`` unless it already holds a "See"
line. The link moved with 5.1.0 (``[ISSUE #5979] Fix FAQ url incorrect in FAQUrl class``): releases up to
5.0.0 point at ``http://rocketmq.apache.org/docs/faq/``, later ones at the 06FAQ page.

A gRPC proxy does not pass the name server's remark on: it throws its own ``MQClientException(17, "No topic
route info in name server for the topic: <t>")``, whose message is ``"CODE: 17  DESC: " + text`` with the
default link attached, and answers TOPIC_NOT_FOUND with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import Releases, since, until

_FAQ = "common/src/main/java/org/apache/rocketmq/common/help/FAQUrl.java"
_ROUTE = "proxy/src/main/java/org/apache/rocketmq/proxy/service/route/TopicRouteService.java"


@dataclass(frozen=True)
class FaqUrl:
    releases: Releases
    url: str


FAQ_URLS: tuple[FaqUrl, ...] = (
    FaqUrl(until("5.0.0"), "http://rocketmq.apache.org/docs/faq/"),
    FaqUrl(since("5.1.0"), "https://rocketmq.apache.org/docs/bestPractice/06FAQ"),
)
MORE_INFORMATION = "For more information, please visit the url, "
NO_ROUTE_TEXT = "No topic route info in name server for the topic: {topic}"
"""A topic without route: the name server's remark before its FAQ line (``remarks.NO_ROUTE``), and the
text of the proxy's own exception."""

RMQ_ERR_FAQ_URL = clause(
    "RMQ-ERR-FAQ-URL", Level.MUST,
    "Remarks that suggest the FAQ end with \"\\nSee <url> for further details.\", the url being "
    "http://rocketmq.apache.org/docs/faq/ up to 5.0.0 and "
    "https://rocketmq.apache.org/docs/bestPractice/06FAQ from 5.1.0.",
    source=f"{_FAQ} (suggestTodo, DEFAULT_FAQ_URL)",
)

RMQ_GRPC_TOPIC_NOT_FOUND_TEXT = clause(
    "RMQ-GRPC-TOPIC-NOT-FOUND-TEXT", Level.SHOULD,
    "A proxy answers a call on a topic without route TOPIC_NOT_FOUND with the message \"CODE: 17  DESC: No "
    "topic route info in name server for the topic: <t>\\nFor more information, please visit the url, "
    "<url>\" (two spaces before DESC; the name server's own remark is not passed on).",
    source=f"{_ROUTE} (getCacheMessageQueueWrapper); client/src/main/java/org/apache/rocketmq/client/"
           f"exception/MQClientException.java; {_FAQ} (attachDefaultURL)",
)


def faq_url(version: int) -> str:
    """The FAQ link of the release whose MQVersion ordinal is ``version``."""
    for row in FAQ_URLS:
        if row.releases.holds_for_version(version):
            return row.url
    return FAQ_URLS[-1].url


def suggest_todo(version: int) -> str:
    """``FAQUrl.suggestTodo``: the line remarks end with."""
    return f"\nSee {faq_url(version)} for further details."


def client_exception_message(code: int, text: str, version: int) -> str:
    """``MQClientException(code, text).getMessage()``: the code and text, then the default FAQ line unless
    the text has a "See" line already (``attachDefaultURL``)."""
    message = f"CODE: {code}  DESC: {text}"
    if "\nSee " in message:
        return message
    return f"{message}\n{MORE_INFORMATION}{faq_url(version)}"
