"""Code protoc generated from the emitted ``apache.rocketmq.v2`` files (``python -m rocketmq_spec.codec.grpc.generate``)."""
