"""Fuzzers for the RocketMQ remoting protocol and store formats.

``rocketmq_spec.fuzz.strategies`` holds hypothesis strategies for every structure the spec defines (public,
for other projects' property tests); ``rocketmq_spec.fuzz.live`` drives mutated frames at a running name
server and broker; ``rocketmq_spec.fuzz.stateful`` compares a running broker with an in-memory model. Like the
conformance suite, nothing here imports the reference broker: targets are reached over TCP and stores through
their files.
"""

from rocketmq_spec.extras import require

require("fuzz")
