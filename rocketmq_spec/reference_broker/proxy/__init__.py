"""The reference broker's gRPC proxy: RocketMQ 5's ``apache.rocketmq.v2`` protocol, in the broker's process.

Apache runs its proxy beside brokers (cluster mode) or inside one (local mode) and turns each RPC into the
remoting requests of ``rocketmq_spec.spec.grpc_rpcs``. This package is local mode: the requests go to the
broker's own dispatch table in-process (``local``), with a channel per gRPC client (``channel``) that the
broker's managers register and that carries the broker's check-backs to the client's Telemetry stream.
"""
