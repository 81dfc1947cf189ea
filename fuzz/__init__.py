"""Fuzzers for the RocketMQ remoting protocol and store formats.

``fuzz.strategies`` holds hypothesis strategies for every structure the spec defines (public, for other
projects' property tests); ``fuzz.live`` drives mutated frames at a running name server and broker;
``fuzz.stateful`` compares a running broker with an in-memory model. Like the conformance suite, nothing
here imports the reference broker: targets are reached over TCP and stores through their files.
"""
