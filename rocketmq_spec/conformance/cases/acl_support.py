"""What the ``acl`` cases share: connections signed as a policy account, and the two verdicts on an answer.

An ACL refusal is recognised by its remark (the AclException), never by the code alone: SYSTEM_ERROR is
also what a broker answers for reasons that have nothing to do with ACL.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from rocketmq_spec.codec.acl import Credentials, sign, signature
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.conformance.acl_policy import ADMIN
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Connection, NoResponse, Wire
from rocketmq_spec.spec.acl import ACCESS_KEY, EXCEPTION_CLASS, SIGNATURE, AclRefusal
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

from .messaging import Client
from .support import expect_success


def _add_access_key(command: RemotingCommand, access_key: str) -> None:
    command.ext_fields = {**(command.ext_fields or {}), ACCESS_KEY: access_key}


class AclTarget:
    """The broker under test as seen by the accounts of ``rocketmq_spec.conformance.acl_policy``."""

    def __init__(self, broker: Server, wire: Wire, check: Check) -> None:
        self.broker = broker
        self.wire = wire
        self.check = check

    def connect(self, credentials: Credentials | None = None, *, access_key: str | None = None) -> Connection:
        """A connection whose requests are signed with ``credentials``, or carry ``access_key`` unsigned."""
        connection = self.wire.connect(self.broker.endpoint)
        if credentials is not None:
            connection.hook = functools.partial(sign, credentials=credentials)
        elif access_key is not None:
            connection.hook = functools.partial(_add_access_key, access_key=access_key)
        return connection

    def client(self, credentials: Credentials | None = None, *, access_key: str | None = None) -> Client:
        return Client(self.connect(credentials, access_key=access_key), self.check)

    def topic(self, name: str) -> str:
        """Make sure a topic named in the policy exists (created by the admin account)."""
        return self.client(ADMIN).create_topic(name=name)

    def set_global_whites(self, patterns: list[str]) -> RemotingCommand:
        """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG of the default ACL file, signed by the admin account."""
        return self.client(ADMIN).call(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {
            "globalWhiteAddrs": ",".join(patterns), "aclFileFullPath": ""})

    def tampered(self, credentials: Credentials, code: int, fields: dict[str, str] | None,
                 body: bytes | None = None, *,
                 change: Callable[[RemotingCommand], None] = lambda cmd: None) -> RemotingCommand:
        """Sign a request, apply ``change`` to the signed command, send it as it then is."""
        connection = self.connect()
        command = sign(connection.command(code, fields, body), credentials)
        change(command)
        connection.send_bytes(encode(command))
        response = connection.response_to(command.opaque, RESPONSE_TIMEOUT)
        if response is None:
            raise NoResponse(f"no response to code {code} within {RESPONSE_TIMEOUT} s")
        return response


def acl_message(response: RemotingCommand) -> str | None:
    """The AclException message of a refusal (the remark without its stack frame), None otherwise."""
    remark = response.remark or ""
    prefix = f"{EXCEPTION_CLASS}: "
    if response.code != ResponseCode.SYSTEM_ERROR or not remark.startswith(prefix):
        return None
    message, _, _frame = remark[len(prefix):].rpartition(", ")
    return message


def expect_acl_refusal(check: Check, what: str, response: RemotingCommand, refusal: AclRefusal,
                       **values: object) -> None:
    """RMQ-ACL-REFUSAL: SYSTEM_ERROR and the AclException with Java's message."""
    actual = f"{response.code} {response.remark or ''}".strip()
    check.that(f"{what}: refused by ACL", acl_message(response) is not None,
               expected=f"1 {EXCEPTION_CLASS}: ...", actual=actual)
    check.equal(f"{what}: AclException message", refusal.message(**values), acl_message(response))


def expect_allowed(check: Check, what: str, response: RemotingCommand) -> RemotingCommand:
    """Let through by ACL, and then served (SUCCESS)."""
    check.that(f"{what}: not refused by ACL", acl_message(response) is None, expected="no AclException",
               actual=response.remark)
    return expect_success(check, what, response)


# -- changes made to a signed request before it is sent -----------------------------------------------


def drop_signature(cmd: RemotingCommand) -> None:
    assert cmd.ext_fields is not None
    del cmd.ext_fields[SIGNATURE]


def set_field(key: str, value: str) -> Callable[[RemotingCommand], None]:
    def change(cmd: RemotingCommand) -> None:
        assert cmd.ext_fields is not None
        cmd.ext_fields[key] = value
    return change


def drop_field(key: str) -> Callable[[RemotingCommand], None]:
    def change(cmd: RemotingCommand) -> None:
        assert cmd.ext_fields is not None
        del cmd.ext_fields[key]
    return change


def append_to_body(cmd: RemotingCommand) -> None:
    cmd.body = (cmd.body or b"") + b"!"


def unsorted_signature(secret_key: str) -> Callable[[RemotingCommand], None]:
    """Re-sign over the values in the order they were put, not sorted by key."""
    def change(cmd: RemotingCommand) -> None:
        assert cmd.ext_fields is not None
        values = "".join(v for k, v in cmd.ext_fields.items() if k != SIGNATURE)
        cmd.ext_fields[SIGNATURE] = signature(values.encode() + (cmd.body or b""), secret_key)
    return change
