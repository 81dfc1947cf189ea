"""ACL 2.0 resource keys and source addresses: how a policy entry names what it covers and from where.

A resource key is read into (type, pattern, name) and written back canonically (RMQ-AUTH-RESOURCE-KEY);
two entries are for the same resource when their canonical keys are equal. Source IPs are single
addresses or CIDR blocks; a request's address is in an entry's range when it equals a single address or
falls in a block.
"""

from __future__ import annotations

import enum
import ipaddress
from dataclasses import dataclass

from rocketmq_spec.spec.auth import ResourceType

ASTERISK = "*"


class ResourcePattern(enum.Enum):
    ANY = "ANY"
    LITERAL = "LITERAL"
    PREFIXED = "PREFIXED"


@dataclass(frozen=True)
class Resource:
    type: ResourceType
    pattern: ResourcePattern
    name: str | None = None

    @property
    def key(self) -> str:
        """``Resource.getResourceKey``."""
        if self.type is ResourceType.ANY:
            return ASTERISK
        if self.pattern is ResourcePattern.ANY:
            return f"{self.type.value}:{ASTERISK}"
        suffix = ASTERISK if self.pattern is ResourcePattern.PREFIXED else ""
        return f"{self.type.value}:{self.name}{suffix}"

    def covers(self, other: Resource) -> bool:
        """``Resource.isMatch``: does an entry for this resource apply to a request for ``other``?"""
        if self.type is ResourceType.ANY:
            return True
        if self.type is not other.type:
            return False
        if self.pattern is ResourcePattern.ANY:
            return True
        if self.pattern is ResourcePattern.LITERAL:
            return other.name == self.name
        return other.name is not None and self.name is not None and other.name.startswith(self.name)


def _by_name(name: str) -> ResourceType | None:
    return next((t for t in ResourceType if t.value.lower() == name.lower()), None)


def parse_resource(key: str | None) -> Resource | None:
    """``Resource.of(String)``: None for a blank key or an unknown type."""
    if key is None or not key.strip():
        return None
    if key == ASTERISK:
        return Resource(ResourceType.ANY, ResourcePattern.ANY)
    type_name, _, name = key.partition(":")
    found = _by_name(type_name)
    if found is None:
        return None
    if name == ASTERISK:
        return Resource(found, ResourcePattern.ANY)
    if name.endswith(ASTERISK):
        return Resource(found, ResourcePattern.PREFIXED, name[:name.index(ASTERISK)])
    return Resource(found, ResourcePattern.LITERAL, name)


def is_valid_ip_or_cidr(text: str) -> bool:
    """``IPAddressUtils.isValidIPOrCidr``: an IPv4/IPv6 address, or address/prefix within the family's
    width."""
    address, slash, prefix = text.partition("/")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if not slash:
        return True
    return prefix.isdigit() and 0 <= int(prefix) <= parsed.max_prefixlen


def ip_in_range(ip: str, source: str) -> bool:
    """``IPAddressUtils.isIPInRange``: equal to a single address, or inside a CIDR block."""
    if "/" not in source:
        return ip == source
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(source, strict=False)
    except ValueError:
        return False
