"""Target profiles: known, cited deviations of one implementation.

An implementation may knowingly depart from the documented protocol (Java 4.9.8's name server ignores
unknown request codes). A profile records each such departure with the source that shows it, so a run
against that implementation reports it as the profile says instead of as a FAIL, and the report still
shows the citation. A deviation without a citation is refused: the profile is evidence, not a mute list.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from conformance.verdict import Verdict

PROFILES_DIR = Path(__file__).with_name("profiles")


class ProfileError(ValueError):
    """A profile file is malformed; raised at start-up so no run is judged by a broken profile."""


@dataclass(frozen=True)
class Deviation:
    case: str
    """A case id, in which ``*`` matches any run of characters (brackets are literal, as in ids)."""
    verdict: Verdict
    reason: str
    source: str

    def citation(self) -> str:
        return f"{self.reason} ({self.source})"


@dataclass(frozen=True)
class Profile:
    name: str
    deviations: tuple[Deviation, ...] = ()

    def deviation_for(self, case_id: str) -> Deviation | None:
        return next((d for d in self.deviations if _matches(d.case, case_id)), None)


def _matches(pattern: str, case_id: str) -> bool:
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), case_id) is not None


NO_PROFILE = Profile("unprofiled")


def load(path: Path) -> Profile:
    """Read a profile; a name without ``.toml`` is looked up among the profiles shipped with the suite."""
    if path.suffix != ".toml":
        path = PROFILES_DIR / f"{path.name}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"cannot read profile {path}: {exc}") from exc
    return Profile(str(data.get("name", path.stem)),
                   tuple(_deviation(path, entry) for entry in data.get("deviation", [])))


def _deviation(path: Path, entry: dict[str, str]) -> Deviation:
    missing = [key for key in ("case", "verdict", "reason", "source") if not entry.get(key)]
    if missing:
        raise ProfileError(f"{path}: deviation {entry.get('case', '?')!r} lacks {', '.join(missing)}")
    try:
        verdict = Verdict(entry["verdict"])
    except ValueError:
        raise ProfileError(f"{path}: unknown verdict {entry['verdict']!r}") from None
    if verdict.breaks_conformance or verdict is Verdict.PASS:
        raise ProfileError(f"{path}: a deviation cannot be judged {verdict.value}")
    return Deviation(entry["case"], verdict, entry["reason"], entry["source"])
