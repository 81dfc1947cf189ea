"""Encoders and decoders built from the ``spec`` schemas: sans-IO framing, commands, store files."""
