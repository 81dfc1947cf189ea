"""What a run is pointed at: a name server and a broker over TCP, and/or a store directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.wire import Connection, ConnectionLost, Endpoint, WireError
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.commitlog import COMMITLOG_FILE_SIZE

NEEDS_FIXTURE = {"namesrv": "namesrv", "broker": "broker", "proxy": "proxy", "store_dir": "store",
                 "acl_file": "acl", "auth_user": "authn", "client_tls": "tls",
                 "ha_master": "ha_master", "sync_master": "sync_master", "fed_slave": "ha_slave",
                 "replica_dir": "replica", "launcher": "launcher", "controller": "controller",
                 "controller_broker": "controller_broker", "follower_controller": "follower_controller"}
"""Fixture a case asks for -> the part of the target it needs; cases whose part is absent are deselected."""

ROLES = ("namesrv", "broker")

PROXY_READY_S = 5.0
"""Seconds a gRPC proxy has to accept a channel before a run against it is refused as unreachable."""

SERVER_FIXTURE = "server"
"""The fixture parametrized over both roles; its parameter names the part it needs."""

_PINGS: dict[str, tuple[int, dict[str, str] | None]] = {
    # A 4.9.8 name server ignores codes it does not know, so the ping must be one it always answers.
    "namesrv": (RequestCode.GET_BROKER_CLUSTER_INFO, None),
    # GET_ALL_TOPIC_CONFIG needs no header and always answers SUCCESS on a 4.9.8 broker.
    "broker": (RequestCode.GET_ALL_TOPIC_CONFIG, None),
    # a controller answers its metadata whether it leads or not
    "controller": (RequestCode.CONTROLLER_GET_METADATA_INFO, None),
}


@dataclass(frozen=True)
class Server:
    """A name server or broker seen only as "something that answers a known request with SUCCESS"."""

    role: str
    endpoint: Endpoint

    def ping(self, connection: Connection, **fields: Any) -> RemotingCommand:
        code, ext_fields = _PINGS[self.role]
        return connection.call(code, ext_fields, **fields)

    def ping_command(self, connection: Connection, **fields: Any) -> RemotingCommand:
        code, ext_fields = _PINGS[self.role]
        return connection.command(code, ext_fields, **fields)


@dataclass(frozen=True)
class FedSlave:
    """A slave broker whose haMasterAddress is ``feed``, where the suite listens as its master."""

    broker: Server
    feed: Endpoint


def auth_user_of(text: str) -> Credentials:
    """``NAME:PASSWORD`` of --auth-user: the initAuthenticationUser, as the credentials requests are signed
    with."""
    name, colon, password = text.partition(":")
    if not name or not colon or not password:
        raise ValueError(f"expected NAME:PASSWORD, got {text!r}")
    return Credentials(name, password)


@dataclass(frozen=True)
class Target:
    namesrv: Endpoint | None = None
    broker: Endpoint | None = None
    store: Path | None = None
    acl: Path | None = None
    """The plain_acl.yml the broker was started with (``rocketmq_spec.conformance.acl_policy``): an ACL
    target, which refuses the unsigned requests of every other broker case, so only the ``acl`` area runs
    against it."""
    authn: Credentials | None = None
    """The initAuthenticationUser of a broker started with authenticationEnabled=true: like an ACL target,
    it refuses every other case's unsigned requests, so only the authentication cases run against it."""
    ha_master: Endpoint | None = None
    """A master's HA port (the broker's listenPort + 1 unless given), for the cases acting as its slave."""
    sync_master: Endpoint | None = None
    """A SYNC_MASTER broker with no slave of its own, for the SYNC_MASTER answers."""
    ha_slave: Endpoint | None = None
    ha_feed: Endpoint | None = None
    replica: Path | None = None
    """A slave's store directory, compared offline with ``store`` (its master's)."""
    commitlog_file_size: int = COMMITLOG_FILE_SIZE
    """``mappedFileSizeCommitLog`` of the HA master, which fixes where an empty slave's transfer starts."""
    proxy: Endpoint | None = None
    """A gRPC proxy (RocketMQ 5's ``apache.rocketmq.v2``), for the ``grpc`` area; its broker, when given
    too, is where the cases create the typed topics they need."""
    controller: Endpoint | None = None
    """A controller (RocketMQ 5's automatic failover), for the ``controller`` area; it is judged alone,
    no broker or name server needed."""
    follower_controller: Endpoint | None = None
    """A controller that does not lead its group (one without a majority), for RMQ-CTL-NOT-LEADER."""
    controller_broker: Endpoint | None = None
    """A broker in controller mode that is its set's master at ``controller``: the ``ha_autoswitch`` area
    plays a slave on its HA port (listenPort + 1)."""
    tls: ClientTls | None = None
    """A run over TLS (``--tls``): every connection and channel of the cases uses it, and the ``tls``
    area judges the target's mode."""
    launcher: Launcher | None = None
    """How to start the target's implementation afresh (a target the suite started itself), for the cases
    that stop, kill and restart a broker of their own (``rocketmq_spec.conformance.launcher``)."""

    @property
    def connection_tls(self) -> ClientTls | None:
        """What the cases' connections use: the run's TLS, unless the target refuses TLS (disabled mode)."""
        return self.tls if self.tls is not None and self.tls.connects else None

    def has(self, part: str) -> bool:
        return getattr(self, part) is not None

    def server(self, role: str) -> Server:
        endpoint = getattr(self, role)
        assert endpoint is not None, f"cases needing the {role} are deselected when it is absent"
        return Server(role if role in _PINGS else "broker", endpoint)

    def alive(self, endpoint: Endpoint) -> bool:
        """Whether a fresh connection still gets an answer to the role's ping."""
        return self.unreachable(endpoint) is None

    def proxy_unreachable(self) -> str | None:
        """Why the gRPC proxy does not accept a channel (None: it does)."""
        import grpc  # only a run with --proxy needs the gRPC runtime loaded

        assert self.proxy is not None
        address = str(self.proxy)
        tls = self.connection_tls
        channel = tls.grpc_channel(address) if tls else grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(channel).result(timeout=PROXY_READY_S)
        except grpc.FutureTimeoutError:
            return f"no HTTP/2 connection within {PROXY_READY_S} s"
        finally:
            channel.close()
        return None

    def announced_version(self) -> tuple[int, str] | None:
        """The ``version`` word of the broker's answer (the name server's without a broker) and who gave
        it; None without a wire target or when neither answers."""
        for role in ("broker", "namesrv", "controller"):
            endpoint = getattr(self, role)
            if endpoint is None:
                continue
            try:
                connection = Connection(endpoint, Exchange(), self.connection_tls)
            except ConnectionLost:
                return None
            try:
                return Server(role, endpoint).ping(connection).version, f"the {role} at {endpoint}"
            except (WireError, OSError):
                return None
            finally:
                connection.close()
        return None

    def unreachable(self, endpoint: Endpoint) -> str | None:
        """Why a fresh connection to ``endpoint`` gets no answer to the role's ping (None: it answers)."""
        roles = {self.namesrv: "namesrv", self.controller: "controller"}
        role = roles.get(endpoint, "broker")
        try:
            connection = Connection(endpoint, Exchange(), self.connection_tls)
        except ConnectionLost as exc:
            return str(exc)
        try:
            Server(role, endpoint).ping(connection)
        except (WireError, OSError) as exc:
            return f"{endpoint} accepts connections but does not answer a RocketMQ request ({exc})"
        finally:
            connection.close()
        return None
