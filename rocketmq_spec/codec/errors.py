"""The codec's typed errors (defined in ``rocketmq_spec.spec.errors`` so schemas and codec raise the same
types)."""

from rocketmq_spec.spec.errors import (
    BodyError,
    FrameError,
    HAStreamError,
    HeaderError,
    RocketMQSpecError,
    SpecViolation,
    StoreError,
)

__all__ = ["BodyError", "FrameError", "HAStreamError", "HeaderError", "RocketMQSpecError", "SpecViolation",
           "StoreError"]
