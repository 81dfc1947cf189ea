"""Reading the store without consuming: queue offsets and times, messages by key and by commitlog offset.

These are the admin and query processors' store reads. The offset lookups always answer SUCCESS (an
unknown queue simply has offset 0), as 4.9.8 does. QUERY_MESSAGE and VIEW_MESSAGE_BY_ID write their found
records straight to the channel in Java, so those answers use the server's own serialization; their
"not found" answers take the normal path.
"""

from __future__ import annotations

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.reference_broker.store import MessageStore
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.acl import UNIQUE_KEY_QUERY
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule, holds


class LookupHandlers:
    def __init__(self, store: MessageStore, release_version: int) -> None:
        self.store = store
        self.lower_bound = holds(Rule.SEARCH_OFFSET_LOWER_BOUND, release_version)
        """Search by time answers the lower bound (5.1.1+)."""
        self.index_type = holds(Rule.QUERY_BY_INDEX_TYPE, release_version)
        """QUERY_MESSAGE reads indexType (5.4.0+): T looks up a TAGS string."""

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.GET_MAX_OFFSET: self.max_offset,
            RequestCode.GET_MIN_OFFSET: self.min_offset,
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: self.search_offset,
            RequestCode.GET_EARLIEST_MSG_STORETIME: self.earliest_time,
            RequestCode.QUERY_MESSAGE: self.query_message,
            RequestCode.VIEW_MESSAGE_BY_ID: self.view_message,
        }

    async def max_offset(self, request: Request) -> RemotingCommand:
        header = request.header()
        return request.reply(header={"offset": self.store.max_offset(header["topic"], header["queueId"])})

    async def min_offset(self, request: Request) -> RemotingCommand:
        header = request.header()
        return request.reply(header={"offset": self.store.min_offset(header["topic"], header["queueId"])})

    async def search_offset(self, request: Request) -> RemotingCommand:
        header = request.header()
        offset = self.store.search_offset_by_timestamp(header["topic"], header["queueId"],
                                                       header["timestamp"], lower_bound=self.lower_bound)
        return request.reply(header={"offset": offset})

    async def earliest_time(self, request: Request) -> RemotingCommand:
        header = request.header()
        stamp = self.store.earliest_message_time(header["topic"], header["queueId"])
        return request.reply(header={"timestamp": stamp})

    async def query_message(self, request: Request) -> RemotingCommand:
        header = request.header()
        max_num = header["maxNum"]
        if (request.command.ext_fields or {}).get(UNIQUE_KEY_QUERY) == "true":
            max_num = self.store.config.default_query_max_num
        index_type = header.get("indexType") if self.index_type else None
        result = self.store.query_by_key(header["topic"], header["key"], max_num, header["beginTimestamp"],
                                         header["endTimestamp"], index_type)
        index = {"indexLastUpdateTimestamp": result.index_last_update_timestamp,
                 "indexLastUpdatePhyoffset": result.index_last_update_phyoffset}
        if not result.messages:
            return request.reply(ResponseCode.QUERY_NOT_FOUND, remarks.QUERY_NOT_FOUND.template, header=index)
        return request.reply(header=index, body=result.body, direct=True)

    async def view_message(self, request: Request) -> RemotingCommand:
        offset = request.header()["offset"]
        raw = self.store.view_by_offset(offset)
        if raw is None:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.VIEW_NOT_FOUND.format(offset=offset))
        return request.reply(body=raw, direct=True)
