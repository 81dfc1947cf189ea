"""Code protoc generated from the emitted ``apache.rocketmq.v2`` files (``python -m codec.grpc.generate``)."""
