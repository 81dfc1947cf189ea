"""Signed requests (ACL 1.0) and the changes an attacker or a buggy proxy makes to them after signing.

``signed_requests`` draws a request with arbitrary extFields and body, signed by
``rocketmq_spec.codec.acl.sign`` with drawn credentials. ``content_changes`` draws one change that alters the
signed content (a value, the body, a field with a non-empty value added or removed): each must make the
signature fail. The scheme signs values only, so ``content_keeping_changes`` draws a change it cannot see (an
empty-valued field added): it keeps the signature valid, in Java as here. """

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.fuzz.strategies.primitives import bodies, texts
from rocketmq_spec.spec.acl import ACCESS_KEY, SECURITY_TOKEN, SERVER_UNSIGNED_KEYS, SIGNATURE

RESERVED_KEYS = frozenset({ACCESS_KEY, SECURITY_TOKEN, *SERVER_UNSIGNED_KEYS})


@dataclass(frozen=True)
class Change:
    """A named edit of a signed request, applied to a copy."""

    name: str
    apply: Callable[[RemotingCommand], None]

    def __call__(self, command: RemotingCommand) -> RemotingCommand:
        changed = copy.deepcopy(command)
        self.apply(changed)
        return changed


def credentials() -> st.SearchStrategy[Credentials]:
    return st.builds(Credentials, texts(min_size=7, max_size=24), texts(min_size=7, max_size=24),
                     st.none() | texts(max_size=24))


def _field_keys() -> st.SearchStrategy[str]:
    return texts(min_size=1, max_size=12).filter(lambda key: key not in RESERVED_KEYS)


@st.composite
def signed_requests(draw: st.DrawFn) -> tuple[RemotingCommand, Credentials]:
    """A request signed as Java's client signs it, and the credentials that signed it."""
    fields = draw(st.dictionaries(_field_keys(), texts(max_size=16), max_size=6))
    body = draw(st.none() | bodies(max_size=64))
    command = RemotingCommand.request(draw(st.integers(0, 400)), fields, body)
    signer = draw(credentials())
    return sign(command, signer), signer


def _signed_fields(command: RemotingCommand) -> list[str]:
    return sorted(k for k in command.ext_fields or {} if k not in (SIGNATURE, *SERVER_UNSIGNED_KEYS))


@st.composite
def content_changes(draw: st.DrawFn, command: RemotingCommand) -> Change:
    """One change of what the signature covers."""
    fields = command.ext_fields or {}
    kinds = ["body", "add"]
    signed = _signed_fields(command)
    if signed:
        kinds.append("value")
    if any(fields[k] for k in signed if k not in (ACCESS_KEY,)):
        kinds.append("remove")
    kind = draw(st.sampled_from(kinds))
    if kind == "body":
        old = command.body or b""
        new = draw(bodies(max_size=64).filter(lambda b: b != old))

        def set_body(cmd: RemotingCommand) -> None:
            cmd.body = new
        return Change("body", set_body)
    if kind == "add":
        key = draw(_field_keys().filter(lambda k: k not in fields))
        value = draw(texts(min_size=1, max_size=8))
        return Change(f"add {key!r}", lambda cmd: _fields(cmd).__setitem__(key, value))
    if kind == "value":
        key = draw(st.sampled_from(signed))
        value = draw(texts(max_size=16).filter(lambda v: v != fields[key]))
        return Change(f"value of {key!r}", lambda cmd: _fields(cmd).__setitem__(key, value))
    key = draw(st.sampled_from([k for k in signed if fields[k] and k != ACCESS_KEY]))

    def remove(cmd: RemotingCommand) -> None:
        del _fields(cmd)[key]
    return Change(f"remove {key!r}", remove)


def _fields(command: RemotingCommand) -> dict[str, str]:
    if command.ext_fields is None:
        command.ext_fields = {}
    return command.ext_fields


@st.composite
def content_keeping_changes(draw: st.DrawFn, command: RemotingCommand) -> Change:
    """A change the signature cannot see: an empty-valued field added."""
    fields = command.ext_fields or {}
    key = draw(_field_keys().filter(lambda k: k not in fields))
    return Change(f"add empty {key!r}", lambda cmd: _fields(cmd).__setitem__(key, ""))
