"""What every RPC starts from: the caller's metadata, and the refusal that ends a call with a Code."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.language import LanguageCode

CLIENT_ID = "x-mq-client-id"
LANGUAGE = "x-mq-language"
CLIENT_VERSION = "x-mq-client-version"
NAMESPACE = "x-mq-namespace"

_REMOTING_LANGUAGE = {"GOLANG": "GO", "DOT_NET": "DOTNET"}
"""gRPC Language names that differ from the remoting LanguageCode of the same SDK language."""


class Refusal(Exception):
    """A request the proxy answers with a Code other than OK, and the message it gives."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def status(self) -> v2.Status:
        return status(self.code, self.message)


def status(code: Code, message: str | None = None) -> v2.Status:
    """``ResponseBuilder.buildStatus``: the code, and its name when there is no message."""
    return v2.Status(code=v2.Code.Value(code.name), message=message if message is not None else code.name)


OK_STATUS = status(Code.OK)


@dataclass(frozen=True)
class CallContext:
    client_id: str
    language: str
    """The remoting LanguageCode name the broker records for the client (OTHER when it has none)."""
    client_version: str
    namespace: str
    peer: str
    """``host:port`` of the caller."""

    @classmethod
    def of(cls, metadata: Iterable[tuple[str, str | bytes]] | None, peer: str) -> CallContext:
        values = {key: value if isinstance(value, str) else value.decode("latin-1")
                  for key, value in metadata or ()}
        language = values.get(LANGUAGE, "")
        language = _REMOTING_LANGUAGE.get(language, language)
        return cls(client_id=values.get(CLIENT_ID, ""),
                   language=language if language in LanguageCode.__members__ else "OTHER",
                   client_version=values.get(CLIENT_VERSION, ""), namespace=values.get(NAMESPACE, ""),
                   peer=address_of(peer))

    def require_client_id(self) -> None:
        """RMQ-GRPC-CLIENT-ID."""
        if not self.client_id.strip():
            raise Refusal(Code.CLIENT_ID_REQUIRED, "client id cannot be empty")


def address_of(peer: str) -> str:
    """grpc's peer string (``ipv4:127.0.0.1:5000``, ``ipv6:[::1]:5000``) as ``host:port``."""
    scheme, _, rest = peer.partition(":")
    if scheme in ("ipv4", "ipv6"):
        return rest.replace("[", "").replace("]", "") if scheme == "ipv6" and rest.count(":") > 1 else rest
    return peer
