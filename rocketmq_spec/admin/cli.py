"""``rmq-admin``: the most used mqadmin commands for people without Java, as tables or ``--json``.

    rmq-admin clusterList -n 127.0.0.1:9876
    rmq-admin topicStatus -n 127.0.0.1:9876 -t TopicTest --json
    rmq-admin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t TopicTest -r 8 -w 8

Command and option names are mqadmin's. A bad option, an unreachable address or a refusal is reported
in one line on stderr with a non-zero exit status (2 for usage, 1 for everything else).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from rocketmq_spec.admin.auth_commands import AUTH_COMMANDS
from rocketmq_spec.admin.groups import OPTION_FIELDS, sub_group_body
from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.options import BROKER_OR_CLUSTER, Options, Runner, address, credentials
from rocketmq_spec.admin.wire import DEFAULT_TIMEOUT, AdminError
from rocketmq_spec.spec.acl_file import ROCKETMQ_HOME_ENV
from rocketmq_spec.spec.cli import Parser, add_version
from rocketmq_spec.spec.indexfile import INDEX_KEY_TYPE, INDEX_TAG_TYPE


def _queues(text: str) -> int:
    number = int(text)
    if not 0 < number <= 1024:
        raise argparse.ArgumentTypeError(f"queue count must be 1..1024, got {number}")
    return number


def _perm(text: str) -> int:
    number = int(text)
    if number not in (2, 4, 6):
        raise argparse.ArgumentTypeError(f"perm must be 2 (write), 4 (read) or 6 (read+write), got {number}")
    return number


def _update_topic(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    if not args.broker and not args.cluster:
        raise AdminError("updateTopic needs -b BROKER_ADDR or -c CLUSTER")
    done = admin.update_topic(args.topic, broker=args.broker, cluster=args.cluster, read_queues=args.read,
                              write_queues=args.write, perm=args.perm, attributes=args.attributes)
    return [{"broker": addr, "topic": args.topic, "result": "created or updated"} for addr in done]


def _delete_topic(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    return [{"broker": addr, "topic": args.topic, "result": "deleted"}
            for addr in admin.delete_topic(args.topic, args.cluster)]


def _bool(text: str) -> bool:
    """mqadmin's ``Boolean.parseBoolean`` of an option, but a word other than true/false is refused."""
    if text.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return text.lower() == "true"


def _update_sub_group(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    options = {name: getattr(args, name) for name in OPTION_FIELDS}
    body = sub_group_body(args.group, options, args.retry_policy, args.attributes)
    done = admin.update_sub_group(body, broker=args.broker, cluster=args.cluster)
    return [{"broker": addr, "group": args.group, "result": "created or updated"} for addr in done]


def _delete_sub_group(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    done = admin.delete_sub_group(args.group, broker=args.broker, cluster=args.cluster,
                                  clean_offset=args.remove_offset)
    return [{"broker": addr, "group": args.group, "result": "deleted"} for addr in done]


def _get_broker_config(admin: Admin, args: argparse.Namespace) -> Any:
    found = admin.broker_config(broker=args.broker, cluster=args.cluster)
    if len(found) == 1:
        return next(iter(found.values()))
    return [{"broker": addr, "key": key, "value": value} for addr, settings in found.items()
            for key, value in settings.items()]


def _update_broker_config(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    done = admin.update_broker_config(args.key, args.value, broker=args.broker, cluster=args.cluster)
    return [{"broker": addr, "key": args.key, "value": args.value, "result": "updated"} for addr in done]


def _connections(admin: Admin, args: argparse.Namespace) -> list[dict[str, Any]]:
    found = admin.consumer_connection(args.group)
    return [{**connection, "consumeType": found.get("consumeType"), "messageModel": found.get("messageModel")}
            for connection in found.get("connectionSet") or []]


COMMANDS: dict[str, tuple[str, Options, Runner]] = {
    "clusterList": ("list the brokers of every cluster with their version and rates", [],
                    lambda admin, args: admin.cluster_list()),
    "brokerStatus": ("a broker's runtime figures", [(("-b", "--brokerAddr"), {
        "dest": "broker", "type": address, "required": True})],
                     lambda admin, args: admin.broker_status(args.broker)),
    "topicList": ("every topic the name server knows", [],
                  lambda admin, args: [{"topic": topic} for topic in admin.topic_list()]),
    "topicRoute": ("a topic's route: its brokers and queues", [(("-t", "--topic"), {"required": True})],
                   lambda admin, args: admin.route(args.topic)),
    "topicStatus": ("min and max offset of each queue of a topic", [(("-t", "--topic"), {"required": True})],
                    lambda admin, args: admin.topic_status(args.topic)),
    "updateTopic": ("create or change a topic on a broker or a cluster", [
        (("-t", "--topic"), {"required": True}),
        (("-b", "--brokerAddr"), {"dest": "broker", "type": address}),
        (("-c", "--clusterName"), {"dest": "cluster"}),
        (("-r", "--readQueueNums"), {"dest": "read", "type": _queues, "default": 8}),
        (("-w", "--writeQueueNums"), {"dest": "write", "type": _queues, "default": 8}),
        (("-p", "--perm"), {"type": _perm, "default": 6}),
        (("-a", "--attributes"), {"help": "5.x topic attributes, e.g. +message.type=FIFO"})], _update_topic),
    "deleteTopic": ("delete a topic from a cluster and the name server", [
        (("-t", "--topic"), {"required": True}),
        (("-c", "--clusterName"), {"dest": "cluster", "required": True})],
                    _delete_topic),
    "updateSubGroup": ("create or change a consumer group, as mqadmin updateSubGroup", [
        *BROKER_OR_CLUSTER, (("-g", "--groupName"), {"dest": "group", "required": True}),
        (("-s", "--consumeEnable"), {"dest": "consume_enable", "type": _bool}),
        (("-m", "--consumeFromMinEnable"), {"dest": "consume_from_min", "type": _bool}),
        (("-d", "--consumeBroadcastEnable"), {"dest": "broadcast", "type": _bool}),
        (("-o", "--consumeMessageOrderly"), {"dest": "orderly", "type": _bool,
                                             "help": "true: a FIFO group (gRPC consumers are told fifo)"}),
        (("-q", "--retryQueueNums"), {"dest": "retry_queues", "type": int}),
        (("-r", "--retryMaxTimes"), {"dest": "retry_max_times", "type": int}),
        (("-p", "--groupRetryPolicy"), {"dest": "retry_policy", "help": "JSON, e.g. "
                                        '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}'}),
        (("-i", "--brokerId"), {"dest": "broker_id", "type": int}),
        (("-w", "--whichBrokerWhenConsumeSlowly"), {"dest": "slow_broker", "type": int}),
        (("-a", "--notifyConsumerIdsChanged"), {"dest": "notify", "type": _bool}),
        (("--attributes",), {"help": "5.x group attributes, e.g. +a=b,-c"})], _update_sub_group),
    "deleteSubGroup": ("delete a consumer group", [
        *BROKER_OR_CLUSTER, (("-g", "--groupName"), {"dest": "group", "required": True}),
        (("-r", "--removeOffset"), {"dest": "remove_offset", "type": _bool, "default": False,
                                    "help": "true: delete its consumer offsets too"})], _delete_sub_group),
    "getBrokerConfig": ("a broker's settings, as mqadmin getBrokerConfig", BROKER_OR_CLUSTER,
                        _get_broker_config),
    "updateBrokerConfig": ("change one setting of a broker or a cluster's masters", [
        *BROKER_OR_CLUSTER, (("-k", "--key"), {"required": True}), (("-v", "--value"), {"required": True})],
                           _update_broker_config),
    "consumerProgress": ("each queue's broker offset, group offset and lag", [
        (("-g", "--groupName"), {"dest": "group", "required": True})],
                         lambda admin, args: admin.consumer_progress(args.group)),
    "consumerConnection": ("the clients of an online consumer group", [
        (("-g", "--consumerGroup"), {"dest": "group", "required": True})], _connections),
    "queryMsgByKey": ("messages of a topic carrying a key", [
        (("-t", "--topic"), {"required": True}), (("-k", "--msgKey"), {"dest": "key", "required": True}),
        (("-p", "--keyType"), {"dest": "key_type", "choices": (INDEX_KEY_TYPE, INDEX_TAG_TYPE),
                               "default": INDEX_KEY_TYPE,
                               "help": "K: a KEYS entry; T: a TAGS string (5.4.0+ brokers index it)"})],
                      lambda admin, args: admin.query_by_key(args.topic, args.key, args.key_type)),
    **AUTH_COMMANDS,
}


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="rmq-admin", description=__doc__.split("\n\n")[0])
    add_version(top)
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    for name, (summary, options, _) in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument("-n", "--namesrvAddr", dest="namesrv", type=address, required=True,
                         help="name server host:port")
        for flags, settings in options:
            sub.add_argument(*flags, **settings)
        sub.add_argument("--json", action="store_true", help="print the result as JSON")
        sub.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per request")
        sub.add_argument("--tls", action="store_true", help="connect over TLS, accepting any certificate "
                         "(servers in tls.server.mode=enforcing, as mqadmin with -Dtls.enable=true)")
        sub.add_argument("--access-key", metavar="AK", help="sign every request with this access key and "
                         "--secret-key (ACL 1.0, or ACL 2.0 authentication on); without them, the "
                         "accessKey and secretKey of $ROCKETMQ_HOME/conf/tools.yml sign, as mqadmin's do, "
                         "when it exists")
        sub.add_argument("--secret-key", metavar="SK", help="the secret key of --access-key")
    return top


def render(result: Any) -> str:
    """A human table: rows of dicts become aligned columns, a dict becomes key = value lines."""
    if isinstance(result, dict):
        return "\n".join(f"{key:<40} = {_cell(value)}" for key, value in result.items())
    if not result:
        return "(nothing)"
    columns = list(dict.fromkeys(key for row in result for key in row))
    cells = [[_cell(row.get(column, "")) for column in columns] for row in result]
    widths = [max(len(column), *(len(row[i]) for row in cells)) for i, column in enumerate(columns)]
    lines = ["  ".join(f"#{c}".ljust(w + 1) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w + 1) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), default=str)
    return str(value)


def main(argv: Sequence[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    runner = COMMANDS[args.command][2]
    try:
        signer = credentials(args.access_key, args.secret_key, os.environ.get(ROCKETMQ_HOME_ENV))
    except AdminError as exc:  # options or tools.yml: refused before any request, as a usage error
        top.error(f"{args.command}: {exc}")
    try:
        result = runner(Admin(args.namesrv, args.timeout, tls=args.tls, credentials=signer), args)
    except AdminError as exc:
        print(f"rmq-admin: {args.command}: {exc}", file=sys.stderr)
        return 1
    try:
        print(json.dumps(result, indent=2, default=str) if args.json else render(result), flush=True)
    except BrokenPipeError:  # the reader (head, less) stopped early: not an error of the command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
