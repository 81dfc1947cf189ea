"""Driver programs the project compiles from its own sources at first use: the Go client's (``go build``)
and the Rust client's (``cargo build``).

Each is built once into a cache directory, under a lock (parallel test workers may all ask for it at
once: one builds, the others wait), and again only when one of its sources or what else the build depends
on (the toolchain, the pinned client release) changed, which a stamp beside the binary records.
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuiltProgram:
    cache: Path
    binary_name: str
    sources: tuple[Path, ...]
    identity: Callable[[], str]
    """What the build depends on besides the sources: the toolchain's version, the release it pins."""

    @property
    def binary(self) -> Path:
        return self.cache / "bin" / self.binary_name

    @property
    def stamp_file(self) -> Path:
        return self.cache / "stamp"

    def stamp(self) -> str:
        digest = hashlib.sha256(self.identity().encode())
        for source in self.sources:
            digest.update(source.read_bytes())
        return digest.hexdigest()

    def built(self) -> bool:
        """Whether the binary is there and was built from the current sources."""
        return (self.binary.is_file() and self.stamp_file.is_file()
                and self.stamp_file.read_text() == self.stamp())

    def ensure(self, build: Callable[[Path], None]) -> Path:
        """The binary, built first by ``build(path)`` (which writes the program to ``path`` or raises)
        when it is missing or stale."""
        if self.built():
            return self.binary
        self.cache.mkdir(parents=True, exist_ok=True)
        with (self.cache / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not self.built():  # another worker may have built it while this one waited
                self.binary.parent.mkdir(parents=True, exist_ok=True)
                staging = self.binary.with_name(f"{self.binary_name}.building")
                build(staging)
                staging.replace(self.binary)
                self.stamp_file.write_text(self.stamp())
        return self.binary
