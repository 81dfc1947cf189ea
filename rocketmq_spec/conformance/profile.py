"""Target profiles: known, cited deviations of one implementation, chosen by the version it announces.

An implementation may knowingly depart from the documented protocol (Java 4.9.8's name server ignores
unknown request codes). A profile records each such departure with the source that shows it, so a run
against that implementation reports it as the profile says instead of as a FAIL, and the report still
shows the citation. A deviation without a citation is refused: the profile is evidence, not a mute list.

One profile per release line, in ``profiles/<name>.toml``::

    name = "Apache RocketMQ 4.9.x"
    versions = ["4.9.7", "4.9.8"]          # the releases it covers (their MQVersion ordinals select it)

    [[deviation]]
    case = "admin::update_config_black_list[*]"   # ``*`` matches any run of characters; or
                                                  # cases = [...] for one cause seen in several cases
    verdict = "NON-STRICT"                        # what a FAIL (or the case's own NON-STRICT) becomes,
                                                  # with the citation; never PASS, FAIL or CRASH
    reason = "..."
    source = "path/in/the/release/Source.java"
    versions = ["4.9.7"]                          # optional: only these of the profile's releases
    clause = "RMQ-ADMIN-UPDATE-CONFIG"            # optional: only a verdict charged to this clause (a
                                                  # step the case needed), so the row cannot cover a
                                                  # failure of the case's own behaviour

    [[choice]]                                    # a difference the target's makers chose on purpose
    case = "framing::proxy_preamble[*]"           # (same keys as a deviation; verdict NON-STRICT unless
    reason = "..."                                # given): reported as the policy's "choice" row, apart
    source = "..."                                # from defects and from deviations read off the source

    [[known_defect]]                              # read by rmq-fuzz (``rocketmq_spec.fuzz.known``), see there
    finding = "slow-close"
    cause = "json-header-ends-in-enum-value"
    reason = "..."
    source = "..."

An implementation other than Apache's announces a version word of its own choosing instead of its
release's (rocketmq-rust 1.0.0 answers with 474, V5_3_1_SNAPSHOT, which no Apache release announces): its
profile names it in ``version_words = [474]`` and covers any target answering with it.

Every answer a RocketMQ server sends carries its release in the ``version`` word; :func:`choose` picks
the profile covering it unless the user named one (``--profile NAME|FILE``, ``--profile none``) or asked
for a strict run, and says how it chose (:class:`Choice`), which every report repeats. The embedded
reference broker, which announces the release it reproduces, is judged without a profile.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rocketmq_spec.conformance.verdict import Basis, Verdict
from rocketmq_spec.spec.clauses import get as get_clause
from rocketmq_spec.spec.version import MQVersion, release_name
from rocketmq_spec.targets import EMBEDDED

PROFILES_DIR = Path(__file__).with_name("profiles")
NONE = "none"
"""``--profile none``: judge against the documented protocol alone, whatever the target announces."""


class ProfileError(ValueError):
    """A profile file is malformed; raised at start-up so no run is judged by a broken profile."""


@dataclass(frozen=True)
class Deviation:
    cases: tuple[str, ...]
    """Case ids, in which ``*`` matches any run of characters (brackets are literal, as in ids)."""
    verdict: Verdict
    reason: str
    source: str
    versions: tuple[str, ...] = ()
    """The releases it holds for, when not all of the profile's."""
    kind: Basis = Basis.DEVIATION
    """DEVIATION (a ``[[deviation]]`` row) or CHOICE (a ``[[choice]]`` row: declared deliberate)."""
    clause: str = ""
    """The clause the verdict must be charged to for the row to apply ("" for any)."""

    def citation(self) -> str:
        declared = "declared choice: " if self.kind is Basis.CHOICE else ""
        return f"{declared}{self.reason} ({self.source})"


@dataclass(frozen=True)
class KnownDefect:
    """A defect of the release that a fuzzer finds again and again: a finding of this class whose stream
    shows this cause is reported as known instead of failing the run."""

    finding: str
    cause: str
    reason: str
    source: str

    def citation(self) -> str:
        return f"{self.reason} ({self.source})"


@dataclass(frozen=True)
class Profile:
    name: str
    deviations: tuple[Deviation, ...] = ()
    versions: tuple[str, ...] = ()
    known_defects: tuple[KnownDefect, ...] = ()
    file: str = ""
    version_words: tuple[int, ...] = ()
    """Version words that select the profile by themselves (an implementation's own, not a release's)."""
    target_version: str = ""
    """The release the target announced, which narrows version-bound deviations ("" when unknown)."""

    def deviation_for(self, case_id: str, clause_id: str = "") -> Deviation | None:
        """The row covering ``case_id`` whose verdict is charged to ``clause_id``."""
        return next((d for d in self.deviations
                     if any(_matches(pattern, case_id) for pattern in d.cases) and self._holds(d)
                     and (not d.clause or d.clause == clause_id)), None)

    def _holds(self, deviation: Deviation) -> bool:
        return not deviation.versions or self.target_version in deviation.versions

    def covers(self, version: str | None, announced: int | None = None) -> bool:
        return (version is not None and version in self.versions) or announced in self.version_words


def _matches(pattern: str, case_id: str) -> bool:
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), case_id) is not None


NO_PROFILE = Profile("unprofiled")


@dataclass(frozen=True)
class Choice:
    """The profile a run applies and how it came to be chosen, in words for the reports."""

    profile: Profile
    how: str
    announced: int | None = None
    """The ``version`` word the target answered with (None: not asked, or no answer)."""


def load(path: Path) -> Profile:
    """Read a profile; a name without ``.toml`` is looked up among the profiles shipped with the suite."""
    if path.suffix != ".toml":
        path = PROFILES_DIR / f"{path.name}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"cannot read profile {path}: {exc}") from exc
    versions = tuple(data.get("versions", ()))
    deviations = (*(_deviation(path, entry, versions) for entry in data.get("deviation", [])),
                  *(_deviation(path, {"verdict": Verdict.NON_STRICT.value, **entry}, versions, Basis.CHOICE)
                    for entry in data.get("choice", [])))
    defects = tuple(_known_defect(path, entry) for entry in data.get("known_defect", []))
    return Profile(str(data.get("name", path.stem)), deviations, versions, defects, path.stem,
                   tuple(int(word) for word in data.get("version_words", ())))


def shipped() -> list[Profile]:
    return [load(path) for path in sorted(PROFILES_DIR.glob("*.toml"))]


def _required(path: Path, entry: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    missing = [key for key in keys if not entry.get(key)]
    if missing:
        raise ProfileError(f"{path}: {what} {entry.get('case', entry.get('cause', '?'))!r} lacks "
                           f"{', '.join(missing)}")


def _deviation(path: Path, entry: dict[str, Any], covered: tuple[str, ...],
               kind: Basis = Basis.DEVIATION) -> Deviation:
    if "cases" in entry:
        entry = {**entry, "case": ", ".join(entry["cases"])}
    _required(path, entry, ("case", "verdict", "reason", "source"), "deviation")
    try:
        verdict = Verdict(entry["verdict"])
    except ValueError:
        raise ProfileError(f"{path}: unknown verdict {entry['verdict']!r}") from None
    if verdict.breaks_conformance or verdict is Verdict.PASS:
        raise ProfileError(f"{path}: a deviation cannot be judged {verdict.value}")
    versions = tuple(entry.get("versions", ()))
    if stray := [v for v in versions if v not in covered]:
        raise ProfileError(f"{path}: deviation {entry['case']!r} names {', '.join(stray)}, which the profile "
                           f"does not cover ({', '.join(covered) or 'no versions'})")
    cases = tuple(entry["cases"]) if "cases" in entry else (entry["case"],)
    clause = entry.get("clause", "")
    try:
        if clause:
            get_clause(clause)
    except KeyError:
        raise ProfileError(f"{path}: a {kind.value} row names clause {clause!r}, which the spec has not"
                           ) from None
    return Deviation(cases, verdict, entry["reason"], entry["source"], versions, kind, clause)


def _known_defect(path: Path, entry: dict[str, Any]) -> KnownDefect:
    _required(path, entry, ("finding", "cause", "reason", "source"), "known defect")
    return KnownDefect(entry["finding"], entry["cause"], entry["reason"], entry["source"])


@dataclass(frozen=True)
class Request:
    """What the user asked for: a profile by name or file (or ``none``), whether the run is strict, and
    the target by name when the run started it."""

    named: str | None = None
    strict: bool = False
    target_name: str = ""


def choose(request: Request, announced: int | None, who: str = "the target") -> Choice:
    """The profile of a run: the one named, else none under ``--strict``, else the shipped profile that
    covers the release ``announced`` (the ``version`` word of ``who``'s answers)."""
    version = release_name(announced) if announced is not None else None
    seen = "" if announced is None else f"{who} answers with version {announced} ({_ordinal_name(announced)})"
    if request.named == NONE:
        return Choice(NO_PROFILE, "--profile none", announced)
    if request.named:
        return Choice(_narrowed(load(Path(request.named)), version), f"--profile {request.named}", announced)
    if request.strict:
        return Choice(NO_PROFILE, "--strict: judged against the documented protocol alone", announced)
    if request.target_name == EMBEDDED:
        return Choice(NO_PROFILE, "the embedded reference broker is judged against the documented protocol "
                                  "alone", announced)
    if announced is None:
        return Choice(NO_PROFILE, f"{who} was not asked for its version (no wire target)", announced)
    profile = next((p for p in shipped() if p.covers(version, announced)), None)
    if profile is None:
        return Choice(NO_PROFILE, f"{seen}, which no shipped profile covers", announced)
    return Choice(_narrowed(profile, version), f"{seen}, covered by profile {profile.file}", announced)


def _narrowed(profile: Profile, version: str | None) -> Profile:
    return profile if version is None else replace(profile, target_version=version)


def _ordinal_name(ordinal: int) -> str:
    try:
        return MQVersion(ordinal).name
    except ValueError:
        return "an MQVersion this suite does not name"

