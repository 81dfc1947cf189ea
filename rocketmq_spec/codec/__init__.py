"""Encoders and decoders built from the ``rocketmq_spec.spec`` schemas: sans-IO framing, commands, store
files."""
