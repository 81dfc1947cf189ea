"""Coverage-guided fuzzing of the decoders on raw bytes, with atheris (libFuzzer).

Each input is routed by its first byte to one decoder: whole frames, the sans-IO frame decoder fed in
chunks, the ROCKETMQ and JSON header paths, the fastjson reader and the batch body. The only outcome
allowed besides success is the codec's own typed error; anything else (an IndexError, a RecursionError,
a construct error leaking out) is a crash that libFuzzer minimises and saves. Run through ``tox -e
atheris`` or directly: ``python -m rocketmq_spec.fuzz.atheris_decoders -max_total_time=600 corpus/``.
"""

from __future__ import annotations

import contextlib
import struct
import sys
from collections.abc import Callable

import atheris

with atheris.instrument_imports():
    from rocketmq_spec.codec.batch import decode_batch
    from rocketmq_spec.codec.command import decode
    from rocketmq_spec.codec.fastjson import loads as fastjson_loads
    from rocketmq_spec.codec.framing import FrameDecoder
    from rocketmq_spec.spec.errors import RocketMQSpecError
    from rocketmq_spec.spec.frame import SerializeType

MAX_CHUNKS = 8


def _frame(data: bytes) -> None:
    decode(data)


def _stream(data: bytes) -> None:
    decoder = FrameDecoder()
    step = max(1, len(data) // MAX_CHUNKS)
    for start in range(0, len(data), step):
        decoder.receive_data(data[start:start + step])


def _header(serialize_type: SerializeType) -> Callable[[bytes], None]:
    """Valid framing around the input, so every input reaches the header decoder."""
    def run(data: bytes) -> None:
        decode(struct.pack(">iI", 4 + len(data), serialize_type << 24 | len(data)) + data)
    return run


def _fastjson(data: bytes) -> None:
    fastjson_loads(data)


TARGETS: tuple[Callable[[bytes], object], ...] = (
    _frame, _stream, _header(SerializeType.JSON), _header(SerializeType.ROCKETMQ), _fastjson, decode_batch,
)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    with contextlib.suppress(RocketMQSpecError):
        TARGETS[data[0] % len(TARGETS)](data[1:])


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
