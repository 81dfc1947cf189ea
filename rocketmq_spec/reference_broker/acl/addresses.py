"""Whitelist address patterns (``rocketmq_spec.spec.acl_file.ADDRESS_PATTERNS``, RMQ-ACL-ADDRESS-PATTERN).

Each pattern becomes a predicate over the client's IP text, built once when the ACL file is read; a
pattern Java would refuse raises ``AddressPatternError`` so an unusable file is reported, not half-applied.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

AddressMatcher = Callable[[str], bool]

_ALL = frozenset({"*", "*.*.*.*", "*:*:*:*:*:*:*:*"})


class AddressPatternError(ValueError):
    """A whitelist pattern of none of the forms Java reads."""


def _ip_version(text: str) -> int | None:
    """4 or 6 for a literal address (Java's ``InetAddressValidator``), None for anything else."""
    try:
        return ipaddress.ip_address(text).version
    except ValueError:
        return None


def _is_ipv4(text: str) -> bool:
    return _ip_version(text) == 4


def _is_ipv6(text: str) -> bool:
    return _ip_version(text) == 6


def expand_ipv6(text: str, parts: int = 8) -> str:
    """``AclUtils.expandIP``: upper case, ``::`` widened to ``parts`` groups, each group four digits."""
    text = text.upper()
    pad = parts - text.count(":")
    if pad > 0:
        text = text.replace("::", ":" * (pad + 1), 1)
    return ":".join(group.rjust(4, "0") for group in text.split(":"))


def _canonical(address: str) -> str:
    return expand_ipv6(address) if _is_ipv6(address) else address


def _literal(address: str) -> str:
    if _is_ipv4(address):
        return address
    if _is_ipv6(address):
        return expand_ipv6(address)
    raise AddressPatternError(f"Netaddress examine Exception netaddress is {address}")


def _set_of(addresses: list[str]) -> AddressMatcher:
    members = frozenset(_literal(a) for a in addresses)
    return lambda ip: _canonical(ip) in members


def _braces(pattern: str) -> AddressMatcher:
    separator = ":" if ":" in pattern else "."
    head, _, last = pattern.rpartition(separator)
    if not last.startswith("{") or (separator == "." and pattern.count(".") < 3):
        raise AddressPatternError(f"MultipleRemoteAddressStrategy cannot read {pattern!r}")
    return _set_of([f"{head}{separator}{choice}" for choice in last[1:-1].split(",") if choice])


def _bounds(part: str, top: int, base: int) -> tuple[int, int] | None:
    """The range a pattern part stands for, or None for a literal part."""
    if part == "*":
        return 0, top
    if "-" not in part:
        return None
    if part.startswith("-"):
        raise AddressPatternError(f"RangeRemoteAddressStrategy cannot read range {part!r}")
    low, high = (int(x, base) for x in part.split("-", 1))
    if not 0 <= low <= high <= top:
        raise AddressPatternError(f"range {part!r} outside 0-{top:x}")
    return low, high


def _octet_range(head: list[int], index: int, bounds: tuple[int, int]) -> AddressMatcher:
    def match(ip: str) -> bool:
        if not _is_ipv4(ip):
            return False
        octets = [int(p) for p in ip.split(".")]
        return octets[:index] == head and bounds[0] <= octets[index] <= bounds[1]
    return match


def _range_ipv4(pattern: str) -> AddressMatcher:
    parts = pattern.split(".")
    if len(parts) != 4:
        raise AddressPatternError(f"IPv4 range {pattern!r} does not have four parts")
    for index in (1, 2, 3):
        bounds = _bounds(parts[index].strip(), 255, 10)
        if bounds is None:
            continue
        head = [int(p) for p in parts[:index]]
        if any(not 0 <= p <= 255 for p in head):
            raise AddressPatternError(f"Netaddress examine scope Exception netaddress is {pattern}")
        return _octet_range(head, index, bounds)
    raise AddressPatternError(f"IPv4 range {pattern!r} has no '*' or 'n-m' part after the first")


def _range_ipv6(pattern: str) -> AddressMatcher:
    if "*" in pattern and not pattern.endswith("*"):
        raise AddressPatternError(f"Netaddress examine scope Exception netaddress is {pattern}")
    groups = pattern.split(":")
    index = next((i for i, g in enumerate(groups) if i > 0 and (g == "*" or "-" in g)), None)
    if index is None:
        raise AddressPatternError(f"IPv6 range {pattern!r} has no '*' or 'n-m' group")
    bounds = _bounds(groups[index].strip(), 0xFFFF, 16)
    assert bounds is not None
    head = expand_ipv6(":".join(groups[:index]), index - 1).split(":")

    def match(ip: str) -> bool:
        if not _is_ipv6(ip):
            return False
        expanded = expand_ipv6(ip).split(":")
        return expanded[:index] == head and bounds[0] <= int(expanded[index], 16) <= bounds[1]
    return match


def compile_pattern(pattern: object) -> AddressMatcher:
    """``RemoteAddressStrategyFactory.getRemoteAddressStrategy`` as a predicate on a client IP."""
    text = "" if pattern is None else str(pattern)
    if not text.strip():
        return lambda ip: False
    if text in _ALL:
        return lambda ip: True
    if text.endswith("}"):
        return _braces(text)
    if "," in text:
        return _set_of([a for a in text.split(",") if a])
    if "*" in text or "-" in text:
        return _range_ipv6(text) if ":" in text else _range_ipv4(text)
    literal = _literal(text)
    return lambda ip: _canonical(ip) == literal
