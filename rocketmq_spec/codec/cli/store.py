"""``rmq-store``: look into a RocketMQ store directory from the shell.

``dump DIR --json`` prints one JSON object per CommitLog record (BLANK markers are not records), for scripts
and diffs; ``query DIR TOPIC KEY`` prints the records the index finds under a key or UNIQ_KEY (``--tag``:
under a TAGS string, which 5.4.0+ indexes), as ``dump`` does; ``inspect DIR`` prints a readable summary
(``--json``: one JSON object) and lists anything inconsistent between the CommitLog, the consume queues and
the consumer offsets. What a running or killed broker leaves (pre-allocated files, a torn last record, the
abort file, an unflushed checkpoint, records not yet dispatched) is reported as notices, by the clause that
allows it, never refused. Bad input ends with a one-line error on stderr and exit status 2, never a
traceback; a reader that stops early (``| head``) ends the output quietly.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from rocketmq_spec.codec.store import MessageRecord, StoreDirectory
from rocketmq_spec.codec.store.dispatch import ahead_notice, is_dispatch_lag, lag_notice
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail, require_store
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.sysflag import TransactionType

PROG = "rmq-store"


def record_json(record: MessageRecord) -> dict[str, Any]:
    return {
        "physical_offset": record.physical_offset, "total_size": record.total_size, "magic": record.magic,
        "body_crc": record.body_crc, "queue_id": record.queue_id, "flag": record.flag,
        "queue_offset": record.queue_offset, "sys_flag": record.sys_flag,
        "born_timestamp": record.born_timestamp, "born_host": str(record.born_host),
        "store_timestamp": record.store_timestamp, "store_host": str(record.store_host),
        "reconsume_times": record.reconsume_times,
        "prepared_transaction_offset": record.prepared_transaction_offset, "topic": record.topic,
        "properties": record.properties, "body_b64": base64.b64encode(record.body).decode("ascii"),
        "offset_msg_id": record.offset_msg_id,
    }


def dump(store: StoreDirectory, out: TextIO, as_json: bool) -> None:
    _write_records(store.messages(), out, as_json)


def _write_records(records: Iterable[MessageRecord], out: TextIO, as_json: bool) -> None:
    for record in records:
        if as_json:
            out.write(json.dumps(record_json(record), ensure_ascii=False) + "\n")
        else:
            out.write(f"{record.physical_offset:>12} {record.topic}/{record.queue_id}@{record.queue_offset} "
                      f"size={record.total_size} sysFlag={record.sys_flag:#x} id={record.offset_msg_id}\n")


def query(store: StoreDirectory, out: TextIO, topic: str, key: str, *, tag: bool, as_json: bool) -> None:
    """The records QUERY_MESSAGE would find, filtered by the key as Java's client does (RMQ-IDX-KEYS)."""
    found = store.lookup_tag(topic, key) if tag else store.lookup_key(topic, key)
    _write_records(found, out, as_json)


def undispatched(store: StoreDirectory, records: list[MessageRecord]) -> tuple[list[int], list[int]]:
    """Offsets of the records that should have a consume-queue entry and have none, and of those that
    have one."""
    queued = {int(offset) for topic, queue_id in store.queues()
              for offset in store.queue(topic, queue_id).entries["commitlog_offset"]}
    dispatchable = [r.physical_offset for r in records
                    if r.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT)]
    return [o for o in dispatchable if o not in queued], [o for o in dispatchable if o in queued]


def notices(store: StoreDirectory, records: list[MessageRecord]) -> list[tuple[str, str]]:
    """The store's notices, plus the dispatch lag of the consume queues when there is one."""
    found = store.notices()
    missing, dispatched = undispatched(store, records)
    if missing and is_dispatch_lag(missing, dispatched):
        found.append(lag_notice("consume queues", missing))
    ahead = entries_past_end(store)
    if ahead and store.crashed:
        found.append(ahead_notice("consume-queue", ahead))
    return found


def entries_past_end(store: StoreDirectory) -> list[int]:
    """Offsets of consume-queue entries past the CommitLog's data end (a copy of a running store)."""
    end = store.commitlog.end
    offsets = (int(o) for topic, queue_id in store.queues()
               for o in store.queue(topic, queue_id).entries["commitlog_offset"])
    return [offset for offset in offsets if not end.covers(offset)]


def inconsistencies(store: StoreDirectory, records: list[MessageRecord]) -> Iterator[str]:
    """Cross-file checks: queue entries against records, records against queues, offsets against queues."""
    by_offset = {r.physical_offset: r for r in records}
    missing, dispatched = undispatched(store, records)
    lagging = set(missing) if is_dispatch_lag(missing, dispatched) else set()
    ahead = set(entries_past_end(store)) if store.crashed else set()
    bounds: dict[tuple[str, int], tuple[int, int]] = {}
    for topic, queue_id in store.queues():
        queue = store.queue(topic, queue_id)
        bounds[(topic, queue_id)] = (queue.min_offset, queue.max_offset)
        for n in range(queue.min_offset, queue.max_offset):
            offset, size, _ = queue.entry(n)
            record = by_offset.get(offset)
            found = None if record is None else (record.topic, record.queue_id, record.queue_offset,
                                                 record.total_size)
            if found != (topic, queue_id, n, size) and offset not in ahead:
                yield f"consumequeue {topic}/{queue_id} entry {n} does not point at its record ({offset})"
    for record in records:
        queued = record.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT)
        low, high = bounds.get((record.topic, record.queue_id), (0, 0))
        if queued and not low <= record.queue_offset < high and record.physical_offset not in lagging:
            where = f"{record.topic}/{record.queue_id}@{record.queue_offset}"
            yield f"record at {record.physical_offset} ({where}) has no consume-queue entry"
    for (topic, group), queues in store.consumer_offsets().items():
        for queue_id, offset in queues.items():
            high = bounds.get((topic, queue_id), (0, 0))[1]
            if offset > high:
                yield f"consumer offset {topic}@{group} queue {queue_id} = {offset} is past max offset {high}"


def inspect_json(store: StoreDirectory, out: TextIO) -> None:
    """The summary a script compares: records, data end, notices and inconsistencies."""
    records = list(store.messages())
    out.write(json.dumps({
        "records": len(records), "data_end": store.commitlog.end.offset,
        "notices": [{"clause": c, "text": t} for c, t in notices(store, records)],
        "inconsistencies": list(inconsistencies(store, records)),
    }) + "\n")


def inspect(store: StoreDirectory, out: TextIO) -> None:
    records = list(store.messages())
    files = store.commitlog.files
    out.write(f"store {store.root}\n")
    out.write(f"commitlog: {len(files)} file(s), {len(records)} record(s), "
              f"data ends at {store.commitlog.end.offset}\n")
    for segment in files:
        out.write(f"  {segment.path.name}\n")
    out.write("queues (topic/queue: min..max offsets):\n")
    for topic, queue_id in store.queues():
        queue = store.queue(topic, queue_id)
        out.write(f"  {topic}/{queue_id}: {queue.min_offset}..{queue.max_offset}\n")
    out.write(f"index files: {', '.join(p.name for p in store.index_files()) or 'none'}\n")
    checkpoint = store.checkpoint()
    out.write(f"checkpoint: physic={checkpoint.physic_msg_timestamp} "
              f"logics={checkpoint.logics_msg_timestamp} index={checkpoint.index_msg_timestamp} "
              f"confirm={checkpoint.confirm_phy_offset}\n")
    out.write(f"shutdown: {'abnormal (abort file present)' if store.crashed else 'clean'}\n")
    out.write("consumer offsets:\n")
    for (topic, group), queues in store.consumer_offsets().items():
        out.write(f"  {topic}@{group}: " + ", ".join(f"{q}={o}" for q, o in sorted(queues.items())) + "\n")
    found = notices(store, records)
    out.write(f"notices: {len(found) or 'none'}\n")
    for clause, text in found:
        out.write(f"  [{clause}] {text}\n")
    problems = list(inconsistencies(store, records))
    out.write(f"inconsistencies: {len(problems) or 'none'}\n")
    for problem in problems:
        out.write(f"  {problem}\n")


def _discard_stdout() -> None:
    """The reader closed the pipe (``| head``): it has what it wanted, so this is a normal end. Standard
    output is pointed at /dev/null so the interpreter's last flush does not fail on the pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__.split("\n")[0])
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    dump_cmd = commands.add_parser("dump", help="print every CommitLog record")
    dump_cmd.add_argument("directory", type=Path)
    dump_cmd.add_argument("--json", action="store_true", help="one JSON object per line")
    query_cmd = commands.add_parser("query", help="print the records the index finds under a key")
    query_cmd.add_argument("directory", type=Path)
    query_cmd.add_argument("topic")
    query_cmd.add_argument("key", help="a KEYS entry or UNIQ_KEY (with --tag: the whole TAGS string)")
    query_cmd.add_argument("--tag", action="store_true", help="look the key up as a TAGS string (5.4.0+)")
    query_cmd.add_argument("--json", action="store_true", help="one JSON object per line")
    inspect_cmd = commands.add_parser("inspect", help="summarise a store and report inconsistencies")
    inspect_cmd.add_argument("directory", type=Path)
    inspect_cmd.add_argument("--json", action="store_true", help="one JSON object: records, data end, "
                                                                 "notices, inconsistencies")
    args = parser.parse_args(argv)
    try:
        with StoreDirectory(require_store(args.directory)) as store:
            if args.command == "dump":
                dump(store, sys.stdout, args.json)
                for clause, text in store.notices():
                    print(f"rmq-store: notice [{clause}] {text}", file=sys.stderr)
            elif args.command == "query":
                query(store, sys.stdout, args.topic, args.key, tag=args.tag, as_json=args.json)
            elif args.json:
                inspect_json(store, sys.stdout)
            else:
                inspect(store, sys.stdout)
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except (BadInput, RocketMQSpecError, OSError, ValueError) as exc:
        return fail(PROG, exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
