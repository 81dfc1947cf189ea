"""CommitLog records, v1 and v2, with IPv4 and IPv6 hosts and every sysFlag combination.

The host bits of sysFlag follow the host addresses (``make_record`` sets them), so the strategy draws
the other bits freely: every single-bit flag, every transaction type and every compression type, the
undefined compression values included, since a store reader must carry them even if it cannot
decompress them.
"""

from __future__ import annotations

import ipaddress

from hypothesis import strategies as st

from rocketmq_spec.codec.store.record import HostPort, MessageRecord, make_record
from rocketmq_spec.fuzz.strategies.primitives import INT32, bodies, int32s, int64s, names
from rocketmq_spec.fuzz.strategies.properties import property_maps
from rocketmq_spec.spec.commitlog import MAX_TOPIC_BYTES_V1, MESSAGE_MAGIC_V1, MESSAGE_MAGIC_V2
from rocketmq_spec.spec.properties import encode_properties
from rocketmq_spec.spec.sysflag import COMPRESSION_MASK, COMPRESSION_SHIFT, MessageSysFlag, TransactionType

_FREE_BITS = [int(flag) for flag in MessageSysFlag
              if flag not in (MessageSysFlag.BORNHOST_V6, MessageSysFlag.STOREHOST_V6)]
PORT_RANGE = (0, 65535)


def hosts() -> st.SearchStrategy[HostPort]:
    ip4 = st.ip_addresses(v=4).map(str)
    ip6 = st.ip_addresses(v=6).map(lambda ip: str(ipaddress.IPv6Address(ip)))
    return st.builds(HostPort, st.one_of(ip4, ip6), st.integers(*PORT_RANGE))


def sys_flags() -> st.SearchStrategy[int]:
    """Any combination of the non-host flag bits, transaction types and compression type values."""
    singles = st.lists(st.sampled_from(_FREE_BITS), unique=True).map(sum)
    transaction = st.sampled_from([int(t) for t in TransactionType])
    compression = st.integers(0, COMPRESSION_MASK >> COMPRESSION_SHIFT).map(lambda v: v << COMPRESSION_SHIFT)
    return st.builds(lambda a, b, c: a | b | c, singles, transaction, compression)


@st.composite
def records(draw: st.DrawFn, magic: int | None = None) -> MessageRecord:
    """A record as a broker stores it: v1 topics fit a signed byte, v2 topics may be longer."""
    magic = magic if magic is not None else draw(st.sampled_from([MESSAGE_MAGIC_V1, MESSAGE_MAGIC_V2]))
    longest = MAX_TOPIC_BYTES_V1 if magic == MESSAGE_MAGIC_V1 else 2 * MAX_TOPIC_BYTES_V1 + 1
    return make_record(
        topic=draw(names(max_size=longest)), body=draw(bodies()),
        properties=encode_properties(draw(property_maps())), queue_id=draw(st.integers(0, INT32[1])),
        queue_offset=draw(st.integers(0, 1 << 40)), physical_offset=draw(st.integers(0, 1 << 40)),
        born_timestamp=draw(int64s()), born_host=draw(hosts()), store_timestamp=draw(int64s()),
        store_host=draw(hosts()), sys_flag=draw(sys_flags()), flag=draw(int32s()),
        reconsume_times=draw(int32s()), prepared_transaction_offset=draw(int64s()), magic=magic)
