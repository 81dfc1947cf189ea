"""A RocketMQ remoting client built on the project's codec, driven by the client-driver contract, that
breaks one client clause per RMQ_BREAK flag (comma-separated) and otherwise follows them all.

Test equipment only: it shows that each case of ``rmq-conformance client`` can fail, and, run without
breaks, that a client following the clauses passes them. ``python tests/broken_client SCENARIO``.
"""

from __future__ import annotations

import base64
import calendar
import os
import sys
import time
import zlib

from client import ENV, GROUP, TOPIC, Client, emit
from connection import JAVA_4_9_7, Closed, Connection, broken

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.store.record import decode_records
from rocketmq_spec.spec.client import COMPRESS_OVER, SEND_RETRIES, SEND_TIMEOUT
from rocketmq_spec.spec.client_producer import SEND_RETRY_CODES_4X
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.message_id import uniq_key_time_diff
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.sysflag import MessageSysFlag, TransactionType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

SUPPORTED = (
    "produce",
    "produce-oneway",
    "produce-batch",
    "produce-transaction",
    "consume-push",
    "idle",
    "shutdown",
)
BODY = base64.b64decode(ENV.get("RMQ_BODY_B64", "")) or b"x" * int(ENV.get("RMQ_BODY_SIZE", "16"))
COUNT = int(ENV.get("RMQ_COUNT", "1"))
DEADLINE = time.monotonic() + float(ENV.get("RMQ_TIMEOUT_S", "30")) - 3
_counter = iter(range(1 << 30))


def uniq_key() -> str:
    if broken("dup-uniq"):
        return "7F000001" + "00" * 12
    now = time.time()
    local = time.localtime(now)
    month_start = calendar.timegm((local.tm_year, local.tm_mon, 1, 0, 0, 0)) - local.tm_gmtoff
    diff = uniq_key_time_diff(int(now * 1000), month_start * 1000)
    if broken("uniq-time"):
        diff += 3_600_000
    raw = (
        bytes([127, 0, 0, 1])
        + (os.getpid() & 0xFFFF).to_bytes(2, "big")
        + b"\x12\x34\x56\x78"
        + (diff & 0xFFFFFFFF).to_bytes(4, "big")
        + (next(_counter) & 0xFFFF).to_bytes(2, "big")
    )
    if broken("lower-counter"):  # Go v2's CreateUniqID: upper-case prefix, lower-case time and counter
        return raw[:10].hex().upper() + f"{diff % 10**8:08d}" + raw[14:].hex()
    return raw.hex() if broken("bad-uniq") else raw.hex().upper()


def properties(uniq: str | None, extra: dict[str, str] | None = None) -> str:
    values: dict[str, str | None] = {
        PropertyKey.WAIT: "true",
        PropertyKey.TAGS: ENV.get("RMQ_TAG"),
        PropertyKey.KEYS: ENV.get("RMQ_KEYS"),
        PropertyKey.UNIQ_KEY: uniq,
        **(extra or {}),
    }
    if broken("bad-props"):
        return ";".join(f"{k}={v}" for k, v in values.items() if v is not None)
    return encode_properties(values)


def send_fields(queue_id: int, sys_flag: int, props: str, *, batch: bool = False) -> dict[str, str]:
    values = {
        "a": GROUP,
        "b": TOPIC,
        "c": "X" if broken("bad-default-topic") else DEFAULT_TOPIC,
        "d": "4",
        "e": str(99 if broken("bad-queue") else queue_id),
        "f": str(sys_flag),
        "g": str(int(time.time() * 1000) - (3_600_000 if broken("born-skew") else 0)),
        "h": "0",
        "i": props,
        "j": "0",
        "k": "false",
        "m": "true" if batch and not broken("batch-flag") else "false",
    }
    if broken("missing-field"):
        del values["h"]
    if broken("send-v1"):
        names = (
            "producerGroup",
            "topic",
            "defaultTopic",
            "defaultTopicQueueNums",
            "queueId",
            "sysFlag",
            "bornTimestamp",
            "flag",
            "properties",
            "reconsumeTimes",
            "unitMode",
            "batch",
        )
        return {
            long: values[short] for short, long in zip("abcdefghijkm", names, strict=True) if short in values
        }
    return values


class Producer:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.next_queue = 0
        self.last_uniq = ""

    def send(
        self,
        index: int,
        body: bytes,
        *,
        oneway: bool = False,
        sys_flag: int = 0,
        extra: dict[str, str] | None = None,
    ) -> RemotingCommand | None:
        uniq = self.last_uniq = uniq_key()
        self.client.sent = True
        if broken("corrupt-body"):
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        if (len(body) >= COMPRESS_OVER.value or broken("compress-small")) and not broken("no-compress"):
            body, sys_flag = zlib.compress(body, 5), sys_flag | MessageSysFlag.COMPRESSED
        attempts = 1 + (9 if broken("retry-forever") else 0 if broken("no-retry") else SEND_RETRIES.value)
        budget_end = time.monotonic() + (60 if broken("retry-forever") else SEND_TIMEOUT.value / 1000)
        retryable = {
            *SEND_RETRY_CODES_4X,
            *([ResponseCode.MESSAGE_ILLEGAL] if broken("retry-on-illegal") else []),
            *([ResponseCode.SYSTEM_BUSY] if broken("retry-on-busy") else []),
            # a client that takes GO_AWAY for a retryable refusal resends on the connection it came on
            *([ResponseCode.GO_AWAY] if broken("go-away-same-connection") else []),
        }
        error = "no attempt"
        for attempt in range(attempts):
            remaining = budget_end - time.monotonic()
            if remaining <= 0:
                break
            if attempt and broken("uniq-per-attempt"):  # as the C++ clients' sendKernelImpl does
                uniq = self.last_uniq = uniq_key()
            route = self.client.route
            assert route is not None, "a send follows the route's fetch"
            queue_id = self.next_queue % route.write_queues
            self.next_queue += 1
            code = RequestCode.SEND_MESSAGE if broken("send-v1") else RequestCode.SEND_MESSAGE_V2
            try:
                answer = self.client.broker().request(
                    code,
                    send_fields(queue_id, sys_flag, properties(uniq, extra)),
                    body,
                    oneway=oneway,
                    timeout=0.5 if broken("impatient") else remaining,
                )
            except (Closed, TimeoutError, OSError) as exc:
                error = str(exc)
                continue
            if answer is None:
                emit("sent", index=index, msgId=uniq, status=None)
                return None
            if answer.code == ResponseCode.SUCCESS:
                emit("sent", index=index, msgId=uniq, status="SEND_OK")
                return answer
            error = f"code {answer.code}: {answer.remark}"
            if answer.code not in retryable:
                break
        emit("error", stage="send", message=error)
        return None

    def send_batch(self) -> None:
        uniqs = [uniq_key() for _ in range(COUNT)]
        blocks = [
            BatchBlock(0, BODY, properties(None if broken("batch-no-uniq") else uniq)) for uniq in uniqs
        ]
        props = encode_properties({PropertyKey.WAIT: "true"})
        answer = self.client.broker().request(
            RequestCode.SEND_BATCH_MESSAGE, send_fields(0, 0, props, batch=True), encode_batch(blocks)
        )
        if answer is not None and answer.code == ResponseCode.SUCCESS:
            for index, uniq in enumerate(uniqs):
                emit("sent", index=index, msgId=uniq, status="SEND_OK")
        else:
            emit("error", stage="send", message=f"batch answered {answer and answer.code}")

    def answer_check(self, connection: Connection, check: RemotingCommand) -> None:
        """A check-back: END_TRANSACTION oneway on the connection it came on, with the check's offsets."""
        if broken("no-check-answer"):
            return
        fields = check.ext_fields or {}
        connection.request(
            RequestCode.END_TRANSACTION,
            {
                "producerGroup": GROUP,
                "tranStateTableOffset": fields.get("tranStateTableOffset", "0"),
                "commitLogOffset": fields.get("commitLogOffset", "0"),
                "commitOrRollback": str(int(resolution(ENV.get("RMQ_TX_CHECK_ANSWER", "commit")))),
                "msgId": fields.get("msgId", self.last_uniq),
                "transactionId": fields.get("transactionId", ""),
                "fromTransactionCheck": "true",
            },
            oneway=True,
        )

    def transaction(self) -> None:
        self.client.check_answer = self.answer_check
        flag = 0 if broken("txn-no-flag") else TransactionType.PREPARED
        extra = {PropertyKey.TRANSACTION_PREPARED: "true", PropertyKey.PRODUCER_GROUP: GROUP}
        answer = self.send(0, BODY, sys_flag=flag, extra=extra)
        if answer is None or broken("txn-no-end"):
            return
        fields = answer.ext_fields or {}
        offset_msg_id = fields.get("msgId", "")
        self.client.broker().request(
            RequestCode.END_TRANSACTION,
            {
                "producerGroup": GROUP,
                "tranStateTableOffset": fields.get("queueOffset", "0"),
                "commitLogOffset": str(int(offset_msg_id[-16:] or "0", 16)),
                "commitOrRollback": str(int(resolution(ENV.get("RMQ_TX_ANSWER", "commit")))),
                "msgId": self.last_uniq,
                "transactionId": fields.get("transactionId", fields.get("msgId", "")),
                "fromTransactionCheck": "false",
            },
            oneway=True,
        )


def resolution(answer: str) -> TransactionType:
    return {"commit": TransactionType.COMMIT, "rollback": TransactionType.ROLLBACK}.get(
        answer, TransactionType.NOT_TYPE
    )


def consume(client: Client, until: float, want: int) -> None:
    """Pull every queue in turn (long polling, 1 s) until ``want`` messages arrived or ``until``."""
    route = client.route
    assert route is not None
    received = 0
    for queue_id in range(route.read_queues):
        if broken("skip-query-offset"):
            client.offsets[queue_id] = 0
            continue
        answer = client.broker().request(
            RequestCode.QUERY_CONSUMER_OFFSET,
            {"consumerGroup": GROUP, "topic": TOPIC, "queueId": str(queue_id)},
        )
        assert answer is not None
        if answer.code == ResponseCode.SUCCESS:
            client.offsets[queue_id] = int((answer.ext_fields or {})["offset"])
        else:
            top = client.broker().request(
                RequestCode.GET_MAX_OFFSET, {"topic": TOPIC, "queueId": str(queue_id)}
            )
            assert top is not None
            client.offsets[queue_id] = int((top.ext_fields or {}).get("offset", "0")) + (
                1 if broken("from-where-bad") else 0
            )
    client.started_offsets = dict(client.offsets)
    repeated = False
    while time.monotonic() < until and received < want:
        for queue_id in sorted(client.offsets):
            offset = client.offsets[queue_id]
            commit = offset > client.started_offsets[queue_id] and not broken("no-commit")
            sys_flag = (0 if broken("no-suspend") else 2) | (1 if commit else 0)
            pulled_queue = route.read_queues if broken("bad-pull-queue") else queue_id
            try:
                pull = {
                    "consumerGroup": GROUP,
                    "topic": TOPIC,
                    "queueId": str(pulled_queue),
                    "queueOffset": str(offset),
                    "maxMsgNums": "32",
                    "sysFlag": str(sys_flag),
                    "commitOffset": str(offset if commit else 0),
                    "suspendTimeoutMillis": "1000",
                    "subscription": "*",
                    "subVersion": "0",
                    "expressionType": "TAG",
                }
                if broken("missing-field"):
                    del pull["subVersion"]
                answer = client.broker().request(RequestCode.PULL_MESSAGE, pull, timeout=6.0)
            except (Closed, TimeoutError) as exc:
                emit("error", stage="pull", message=str(exc))
                continue
            assert answer is not None
            fields = answer.ext_fields or {}
            if answer.code == ResponseCode.SUCCESS:
                for record in decode_records(answer.body):
                    body = record.decompressed_body()
                    if broken("corrupt-delivery"):
                        body = body[::-1] + b"!"
                    emit(
                        "received",
                        msgId=record.uniq_key,
                        topic=record.topic,
                        body_b64=base64.b64encode(body).decode(),
                        reconsumeTimes=record.reconsume_times,
                    )
                    received += 1
                if broken("pull-repeat") and not repeated:
                    repeated = True
                    client.broker().request(RequestCode.PULL_MESSAGE, pull, timeout=6.0)
            if answer.code == ResponseCode.PULL_OFFSET_MOVED and broken("ignore-moved"):
                continue
            if "nextBeginOffset" in fields:
                client.offsets[queue_id] = int(fields["nextBeginOffset"])


def main() -> int:
    scenario = sys.argv[1] if len(sys.argv) > 1 else ""
    if ENV.get("RMQ_PROTOCOL") == "grpc":
        from grpc_session import main as grpc_main

        return grpc_main(scenario)
    if scenario not in SUPPORTED:
        emit("unsupported", reason=f"the test client does not implement {scenario!r}")
        return 3
    client = Client(producer=scenario != "consume-push", consumer=scenario in ("consume-push", "idle"))
    try:
        client.start()
    except (Closed, TimeoutError, RuntimeError, OSError) as exc:
        emit("error", stage="start", message=str(exc))
        emit("done")
        return 0
    emit("ready")
    producer = Producer(client)
    if scenario in ("produce", "produce-oneway"):
        if broken("reuse-opaque"):  # two requests with one opaque, both written before either is answered
            client.broker().write(
                *(
                    RemotingCommand.request(
                        RequestCode.SEND_MESSAGE_V2,
                        send_fields(index, 0, properties(uniq_key())),
                        BODY,
                        opaque=1 << 20,
                        language="JAVA",
                        version=JAVA_4_9_7,
                    )
                    for index in range(2)
                )
            )
            time.sleep(0.5)
        for index in range(COUNT):
            producer.send(index, BODY, oneway=scenario == "produce-oneway" and not broken("oneway-no-bit"))
        time.sleep(float(ENV.get("RMQ_IDLE_S", "0")))  # stays started: its scheduled heartbeats come now
    elif scenario == "produce-batch":
        producer.send_batch()
    elif scenario == "produce-transaction":
        producer.transaction()
        time.sleep(float(ENV.get("RMQ_IDLE_S", "0")))  # stays up for the broker's check-backs
    elif scenario == "consume-push":
        consume(client, DEADLINE, COUNT)
    elif scenario == "idle":
        consume(client, time.monotonic() + float(ENV.get("RMQ_IDLE_S", "0")), 1 << 30)
    client.shutdown()
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
