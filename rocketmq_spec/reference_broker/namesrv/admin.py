"""The name server's admin commands: write permission of a broker, topic lists, its own settings.

Route-table changes go through ``RouteTable`` like every registration does; settings are read and
updated with the same helpers the broker uses (``rocketmq_spec.reference_broker.config_view``), under the name
server's own black list.
"""

from __future__ import annotations

from rocketmq_spec.codec.bodies import decode_properties_text, encode_body, encode_properties_text
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.config import NamesrvConfig
from rocketmq_spec.reference_broker.config_view import black_listed, settings_of, update_settings
from rocketmq_spec.reference_broker.namesrv.routes import RouteTable
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec import admin
from rocketmq_spec.spec.admin_bodies import TOPIC_LIST
from rocketmq_spec.spec.codes import RequestCode, ResponseCode


class NamesrvAdminHandlers:
    def __init__(self, config: NamesrvConfig, routes: RouteTable) -> None:
        self.config = config
        self.routes = routes

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm,
            RequestCode.GET_TOPICS_BY_CLUSTER: self.topics_by_cluster,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS: self.system_topics,
            RequestCode.GET_NAMESRV_CONFIG: self.get_config,
            RequestCode.UPDATE_NAMESRV_CONFIG: self.update_config,
        }

    async def add_write_perm(self, request: Request) -> RemotingCommand:
        count = self.routes.add_write_perm(request.header()["brokerName"])
        return request.reply(header={"addTopicCount": count})

    async def topics_by_cluster(self, request: Request) -> RemotingCommand:
        topics = self.routes.topics_of_cluster(request.header()["cluster"])
        return request.reply(body=encode_body(TOPIC_LIST, {"topicList": topics}))

    async def system_topics(self, request: Request) -> RemotingCommand:
        topics, addr = self.routes.system_topics()
        return request.reply(body=encode_body(TOPIC_LIST, {"brokerAddr": addr, "topicList": topics}))

    async def get_config(self, request: Request) -> RemotingCommand:
        return request.reply(body=encode_properties_text(settings_of(self.config)))

    async def update_config(self, request: Request) -> RemotingCommand:
        if not request.command.body:
            return request.reply()
        properties = decode_properties_text(request.command.body)
        if black_listed(properties, admin.NAMESRV_CONFIG_BLACK_LIST):
            return request.reply(ResponseCode.NO_PERMISSION, admin.BLACK_LIST_REMARK)
        update_settings(self.config, properties)
        return request.reply()
