"""What a producer sends: ids, properties, bodies, batches, compression and the header's values."""

from __future__ import annotations

import calendar
import re
import time

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.judge import Scenario, ScenarioRun, body_of
from rocketmq_spec.conformance.clients.observe import Send, sends
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import requests
from rocketmq_spec.conformance.verdict import SuiteError
from rocketmq_spec.spec.client import COMPRESS_OVER, DEFAULT_TOPIC_QUEUE_NUMS
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.frame import Flag
from rocketmq_spec.spec.message_id import IPV4_LEN, IPV6_LEN, UNIQ_KEY_TAIL, uniq_key_time_diff
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, PropertyKey
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, MessageSysFlag, TransactionType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

UNIQ_KEY = re.compile(r"^(?:[0-9A-F]{32}|[0-9A-F]{56})$")
TIME_SLACK_MS = 60_000
"""How far a client's clock may be from the suite's: both run on one machine."""
BORN_SLACK_MS = 10_000
TRUE_VALUES = ("true", "1")


def _sends(check: Check, result: ScenarioRun) -> list[Send]:
    found = sends(result.frames)
    check.that("sends seen", bool(found), expected="at least one", actual=0)
    return found


@case("RMQ-CLIENT-UNIQ-KEY", "Each message carries its own upper-case hex UNIQ_KEY")
def test_uniq_key(run: CaseRunner, check: Check) -> None:
    keys = [s.properties.get(PropertyKey.UNIQ_KEY, "") for s in _sends(check, run(sc.PRODUCE_KEYS))]
    check.that(
        "UNIQ_KEY format", all(UNIQ_KEY.match(k) for k in keys), expected=UNIQ_KEY.pattern, actual=keys
    )
    check.that("distinct per message", len(set(keys)) == len(keys), expected="all distinct", actual=keys)


def _month_start_ms(wall_ms: int) -> int:
    local = time.localtime(wall_ms / 1000)
    return (calendar.timegm((local.tm_year, local.tm_mon, 1, 0, 0, 0)) - local.tm_gmtoff) * 1000


@case("RMQ-CLIENT-UNIQ-TIME", "A UNIQ_KEY's time field is the milliseconds into the local month")
def test_uniq_time(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE)
    for send in _sends(check, result):
        raw = bytes.fromhex(send.properties.get(PropertyKey.UNIQ_KEY, "") or "00")
        ip_len = IPV4_LEN if len(raw) == IPV4_LEN + UNIQ_KEY_TAIL.sizeof() else IPV6_LEN
        if len(raw) != ip_len + UNIQ_KEY_TAIL.sizeof():
            check.that("UNIQ_KEY length", False, expected="16 or 28 bytes", actual=len(raw))
        field = UNIQ_KEY_TAIL.parse(raw[ip_len:]).time_diff
        arrived = result.wall_ms(send.frame)
        expected = uniq_key_time_diff(arrived, _month_start_ms(arrived))
        check.that(
            "time field against the arrival",
            abs(field - expected) <= TIME_SLACK_MS,
            expected=f"{expected} ± {TIME_SLACK_MS}",
            actual=field,
        )


@case("RMQ-CLIENT-PROPERTIES", "Properties are name\\u0001value\\u0002 pairs with the user's TAGS and KEYS")
def test_properties(run: CaseRunner, check: Check) -> None:
    scenario = sc.PRODUCE
    for send in _sends(check, run(scenario)):
        segments = [s for s in send.properties_text.split(PROPERTY_SEPARATOR) if s]
        check.that(
            "every pair has one name-value separator",
            all(s.count(NAME_VALUE_SEPARATOR) == 1 for s in segments),
            expected="name\\u0001value",
            actual=send.properties_text,
        )
        props = send.properties
        check.equal("TAGS", scenario.tag, props.get(PropertyKey.TAGS))
        check.equal("KEYS", scenario.keys, props.get(PropertyKey.KEYS))


@case("RMQ-CLIENT-BODY", "The body sent is the application's body")
def test_body(run: CaseRunner, check: Check) -> None:
    expected = body_of(sc.PRODUCE)
    bodies = [s.body() for s in _sends(check, run(sc.PRODUCE))]
    check.that("bodies", all(b == expected for b in bodies), expected=expected, actual=bodies)


@case("RMQ-CLIENT-BATCH", "A batch carries one encoded message per message, each with its UNIQ_KEY")
def test_batch(run: CaseRunner, check: Check) -> None:
    scenario = sc.PRODUCE_BATCH
    batches = [s for s in _sends(check, run(scenario)) if s.fields.get("batch", "").lower() in TRUE_VALUES]
    check.that("sends flagged batch", len(batches) >= 1, expected="at least one", actual=0)
    blocks = [props for send in batches for props in send.batch_blocks_properties()]
    check.equal("messages in the batch bodies", scenario.count, len(blocks))
    keys = [props.get(PropertyKey.UNIQ_KEY, "") for props in blocks]
    check.that(
        "a UNIQ_KEY per message",
        all(UNIQ_KEY.match(k) for k in keys) and len(set(keys)) == len(keys),
        expected="distinct upper-case hex ids",
        actual=keys,
    )


@table(
    "scenario",
    [
        Row(
            "large",
            "RMQ-CLIENT-COMPRESS",
            f"A body of {COMPRESS_OVER.value} bytes or more is compressed",
            sc.PRODUCE_LARGE,
        ),
        Row(
            "small",
            "RMQ-CLIENT-COMPRESS",
            f"A body under {COMPRESS_OVER.value} bytes is sent as it is",
            sc.PRODUCE_SMALL,
        ),
    ],
)
def test_compress(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    large = len(body_of(scenario)) >= COMPRESS_OVER.value
    for send in _sends(check, run(scenario)):
        compressed = bool(send.sys_flag & MessageSysFlag.COMPRESSED)
        check.equal("COMPRESSED flag", large, compressed)
        check.that(
            "body after decompression",
            send.body() == body_of(scenario),
            expected=len(body_of(scenario)),
            actual=len(send.body()),
        )


@case("RMQ-CLIENT-BORN-TIMESTAMP", "bornTimestamp is the client's clock at the send")
def test_born_timestamp(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE)
    for send in _sends(check, result):
        arrived = result.wall_ms(send.frame)
        born = int(send.fields.get("bornTimestamp", "0") or 0)
        check.that(
            "bornTimestamp against the arrival",
            abs(arrived - born) <= BORN_SLACK_MS,
            expected=f"{arrived} ± {BORN_SLACK_MS}",
            actual=born,
        )


@case("RMQ-CLIENT-DEFAULT-TOPIC", "Sends name defaultTopic TBW102 and defaultTopicQueueNums 4")
def test_default_topic(run: CaseRunner, check: Check) -> None:
    for send in _sends(check, run(sc.PRODUCE)):
        check.equal("defaultTopic", DEFAULT_TOPIC, send.fields.get("defaultTopic"))
        check.equal(
            "defaultTopicQueueNums",
            str(DEFAULT_TOPIC_QUEUE_NUMS.value),
            send.fields.get("defaultTopicQueueNums"),
        )


@case("RMQ-CLIENT-QUEUE", "Sends name a queue of the route")
def test_queue(run: CaseRunner, check: Check) -> None:
    queues = [s.fields.get("queueId") for s in _sends(check, run(sc.PRODUCE))]
    valid = {str(q) for q in range(sc.PRODUCE.queues)}
    check.that("queueIds", all(q in valid for q in queues), expected=sorted(valid), actual=queues)


@case("RMQ-CLIENT-ONEWAY-SEND", "A oneway send sets the oneway bit")
def test_oneway(run: CaseRunner, check: Check) -> None:
    flags = [s.frame.command.flag for s in _sends(check, run(sc.PRODUCE_ONEWAY))]
    check.that(
        "flag of oneway sends", all(f & Flag.ONEWAY for f in flags), expected=int(Flag.ONEWAY), actual=flags
    )


@case("RMQ-CLIENT-TXN-HALF", "A half message is PREPARED with TRAN_MSG and PGROUP")
def test_txn_half(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE_TRANSACTION)
    (send, *_) = _sends(check, result)
    check.equal("transaction type", int(TransactionType.PREPARED), send.sys_flag & TRANSACTION_MASK)
    check.equal("TRAN_MSG", "true", send.properties.get(PropertyKey.TRANSACTION_PREPARED))
    check.equal("PGROUP", result.group, send.properties.get(PropertyKey.PRODUCER_GROUP))


@case("RMQ-CLIENT-TXN-END", "The local transaction's answer goes out as a oneway END_TRANSACTION")
def test_txn_end(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE_TRANSACTION)
    ends = requests(result.frames, RequestCode.END_TRANSACTION)
    check.that("END_TRANSACTION sent", bool(ends), expected="one", actual=0)
    fields = ends[0].command.ext_fields or {}
    check.that(
        "oneway",
        bool(ends[0].command.flag & Flag.ONEWAY),
        expected=int(Flag.ONEWAY),
        actual=ends[0].command.flag,
    )
    check.equal("commitOrRollback", str(int(TransactionType.COMMIT)), fields.get("commitOrRollback"))
    check.equal("producerGroup", result.group, fields.get("producerGroup"))
    check.that(
        "msgId", bool(fields.get("msgId")), expected="the half message's id", actual=fields.get("msgId")
    )


@case("RMQ-CLIENT-TXN-CHECK", "A check-back is answered with END_TRANSACTION fromTransactionCheck=true")
def test_txn_check(run: CaseRunner, check: Check) -> None:
    result = run(sc.TRANSACTION_CHECKED)
    checks = [
        f for f in result.frames if not f.outbound and f.command.code == RequestCode.CHECK_TRANSACTION_STATE
    ]
    if not checks:
        raise SuiteError("the broker sent no CHECK_TRANSACTION_STATE during the scenario: nothing to judge")
    asked = checks[0].command.ext_fields or {}
    answers = [
        f
        for f in requests(result.frames, RequestCode.END_TRANSACTION)
        if (f.command.ext_fields or {}).get("fromTransactionCheck") == "true"
    ]
    check.that(
        "END_TRANSACTION answering the check",
        bool(answers),
        expected="fromTransactionCheck=true",
        actual=[f.command.ext_fields for f in requests(result.frames, RequestCode.END_TRANSACTION)],
    )
    fields = answers[0].command.ext_fields or {}
    check.that(
        "on the check's connection",
        answers[0].connection == checks[0].connection,
        expected=checks[0].connection,
        actual=answers[0].connection,
    )
    check.that(
        "oneway",
        bool(answers[0].command.flag & Flag.ONEWAY),
        expected=int(Flag.ONEWAY),
        actual=answers[0].command.flag,
    )
    check.equal("commitLogOffset", asked.get("commitLogOffset"), fields.get("commitLogOffset"))
    check.equal("tranStateTableOffset", asked.get("tranStateTableOffset"), fields.get("tranStateTableOffset"))
    check.equal("commitOrRollback", str(int(TransactionType.COMMIT)), fields.get("commitOrRollback"))
