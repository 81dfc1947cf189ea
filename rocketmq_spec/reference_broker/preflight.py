"""Every reason the broker refuses a store or its ports, found before any port is bound or any file written.

Starting on a store writes to it at once: the ``abort`` file that marks a running broker, the
checkpoint, ``config/topics.json`` with the system topics. A store the broker would then refuse (files
of another size than configured, a config file that cannot be read, a lock another broker holds, a
layout it cannot map) must be refused before that, so a refused start leaves it exactly as it was, as
Apache RocketMQ's ``BrokerController.initialize`` leaves it. The checks only list directories, stat files
and read them; :func:`check_store` raises :class:`StoreRefused` with the first reason found.

A port that another process listens on is found the same way (:func:`check_ports`): each fixed port is
bound and released at once, so ``rmq-broker`` with its gRPC port taken stops before its name server and
broker ports are bound and before its store is touched, rather than half-way through starting.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from rocketmq_spec.codec.store.configs import load_config
from rocketmq_spec.reference_broker.config import GRPC_DISABLED, BrokerConfig, ConfigError, NamesrvConfig
from rocketmq_spec.reference_broker.store.mapped_file import sequence_names
from rocketmq_spec.spec.checkpoint import CHECKPOINT_FILE_SIZE
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.indexfile import file_size as index_file_size
from rocketmq_spec.spec.store_layout import (
    BACKUP_SUFFIX,
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_FILES,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_FILE,
    RMQ_STORE_LOCK,
)


class StoreRefused(StoreError):
    """The broker will not start on this store; the message says why in one line."""


def _directory(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise StoreRefused(f"{path} is not a directory", expected="a directory", seen="a file")


def _root(config: BrokerConfig) -> None:
    """The root, or the nearest of its parents that exists, must be a directory to create the rest in; a
    root that does not exist yet must be one the broker can create (a directory of a name of its own is
    made there and removed at once, as a port is bound and released: permissions, a read-only or a pseudo
    file system are found the way the broker would meet them, and brokers starting side by side under one
    new parent never meet each other's probe)."""
    root = Path(config.store_path_root_dir)
    existing = next(p for p in (root, *root.parents) if p.exists())
    _directory(existing)
    if existing == root:
        return
    try:
        Path(tempfile.mkdtemp(prefix=".rmq-store-probe-", dir=existing)).rmdir()
    except OSError as exc:
        raise StoreRefused(f"{root} cannot be created in {existing}", expected="a directory it can create in",
                           seen=exc.strerror or type(exc).__name__) from None


def _log(directory: Path, file_size: int, key: str) -> None:
    _directory(directory)
    if not directory.is_dir():
        return
    try:
        sequence_names(directory, file_size)
    except StoreError as exc:
        raise StoreRefused(f"{exc.message} ({key}={file_size})", expected=exc.expected,
                           seen=exc.seen) from None


def _commitlog(config: BrokerConfig) -> None:
    _log(_store(config) / COMMITLOG_DIR, config.mapped_file_size_commit_log, "mappedFileSizeCommitLog")


def _queue_directories(base: Path) -> Iterator[Path]:
    """Each queue directory the broker recovers: consumequeue/<topic>/<numeric queue id>."""
    _directory(base)
    if not base.is_dir():
        return
    for topic in sorted(p for p in base.iterdir() if p.is_dir()):
        yield from sorted(p for p in topic.iterdir() if p.name.isdigit())


def _consume_queues(config: BrokerConfig) -> None:
    for queue in _queue_directories(_store(config) / CONSUMEQUEUE_DIR):
        _log(queue, config.mapped_file_size_consume_queue, "mappedFileSizeConsumeQueue")


def _index(config: BrokerConfig) -> None:
    directory = _store(config) / INDEX_DIR
    _directory(directory)
    if not config.message_index_enable or not directory.is_dir():
        return
    wanted = index_file_size(config.max_hash_slot_num, config.max_index_num)
    for path in sorted(p for p in directory.iterdir() if p.name.isdigit()):
        seen = path.stat().st_size if path.is_file() else "not a regular file"
        if seen != wanted:
            raise StoreRefused(f"index file {path} does not have the configured size (maxHashSlotNum="
                               f"{config.max_hash_slot_num}, maxIndexNum={config.max_index_num})",
                               expected=wanted, seen=seen)


def _checkpoint(config: BrokerConfig) -> None:
    path = _store(config) / CHECKPOINT_FILE
    if not path.exists():
        return
    seen = path.stat().st_size if path.is_file() else "not a regular file"
    if seen not in (0, CHECKPOINT_FILE_SIZE):
        raise StoreRefused(f"checkpoint {path} is not a {CHECKPOINT_FILE_SIZE}-byte file",
                           expected=CHECKPOINT_FILE_SIZE, seen=seen)


def _config_files(config: BrokerConfig) -> None:
    """Java's ConfigManager reads a config file, then its backup when the file is missing, empty or does
    not parse; it refuses the store only when the backup holds text that does not parse either."""
    directory = Path(config.config_dir)
    _directory(directory)
    for name in (c.name for c in CONFIG_FILES):
        path, backup = directory / name, directory / f"{name}{BACKUP_SUFFIX}"
        for candidate in (path, backup):
            if candidate.exists() and not candidate.is_file():
                raise StoreRefused(f"{candidate} is not a regular file", expected="a file",
                                   seen="a directory")
        try:
            load_config(path)
        except StoreError:
            if backup.exists() and backup.read_bytes().strip():
                raise StoreRefused(f"neither {path} nor its backup parses", expected="fastjson JSON",
                                   seen="text that does not parse") from None
        except OSError as exc:
            raise StoreRefused(f"cannot read {path}: {exc.strerror or exc}") from None


def _lock(config: BrokerConfig) -> None:
    """Another process holds the store's lock (a running broker). Probed with a lock taken and given
    back at once; only from a process that runs no store of its own, since giving a POSIX lock back
    releases every lock the process holds on that file."""
    path = _store(config) / LOCK_FILE
    if not path.is_file():
        return
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0)
    except OSError:
        raise StoreRefused("Lock failed,MQ already started", expected="an unlocked store", seen=str(path),
                           clause=RMQ_STORE_LOCK.id) from None
    finally:
        os.close(fd)


def _store(config: BrokerConfig) -> Path:
    return Path(config.store_path_root_dir)


CHECKS: tuple[Callable[[BrokerConfig], None], ...] = (
    _root, _commitlog, _consume_queues, _index, _checkpoint, _config_files)
"""In the order the broker meets them: the store's root, its logs, its index and checkpoint, its config."""


def check_store(config: BrokerConfig, *, probe_lock: bool = True) -> None:
    """Raise :class:`StoreRefused` for the first reason the broker would refuse ``config``'s store.

    ``probe_lock`` also refuses a store another process has locked; leave it off in a process that may
    itself run a broker on the store (an embedded one), where the probe would release that lock."""
    for check in (*CHECKS, _lock) if probe_lock else CHECKS:
        try:
            check(config)
        except PermissionError as exc:
            raise StoreRefused(f"cannot read {exc.filename}: {exc.strerror}") from None


def _port_taken(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (None when it can), probed as asyncio binds: with
    SO_REUSEADDR, so a port left in TIME_WAIT by a previous run is not mistaken for a taken one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    return None


def broker_ports(broker: BrokerConfig, namesrv: NamesrvConfig | None) -> list[tuple[str, int]]:
    """The fixed ports ``rmq-broker`` will listen on, by their Java key: the name server's (when it starts
    one), the broker's, its fast and HA ports, the gRPC port. Ports asked as 0 (free) are left out."""
    ports = [("listenPort", broker.listen_port), ("fastListenPort", broker.resolved_fast_port),
             ("haListenPort", broker.resolved_ha_port)]
    if broker.resolved_grpc_port != GRPC_DISABLED:
        ports.append(("grpcServerPort", broker.resolved_grpc_port))
    if namesrv is not None:
        ports.insert(0, ("namesrv listenPort", namesrv.listen_port))
    return [(key, port) for key, port in ports if port > 0]


def check_ports(host: str, ports: list[tuple[str, int]], source: str = "command line") -> None:
    """Raise ConfigError naming the first of ``ports`` (``(key, port)``) that cannot be listened on."""
    for key, port in ports:
        reason = _port_taken(host, port)
        if reason is not None:
            raise ConfigError(key, str(port), f"a port free to listen on ({host}:{port}: {reason})",
                              source=source)
