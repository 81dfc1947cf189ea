"""RocketMQ 5's gRPC protocol: the ``.proto`` text emitted from the spec and the code compiled from it.

``rocketmq_spec.codec.grpc.v2`` holds protoc's output (``definition_pb2``, ``service_pb2``,
``service_pb2_grpc``); import the messages from there. ``emit`` writes the text, ``generate`` compiles it.
"""
