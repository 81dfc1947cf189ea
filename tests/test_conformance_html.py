"""The HTML report and the comparison page, rendered in a real browser (headless Chromium): verdicts,
the summary matrix with failures first (checked on a screenshot too), the filters, the clause links."""

from __future__ import annotations

import html as html_lib
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from rocketmq_spec.conformance.report import html, html_compare, json_files
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE, COLOURS, MEANINGS, SEVERITY_ORDER
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict
from tests import process_tree
from tests.png import read_rgb
from tests.test_conformance_framework import sample_results

BROWSER_TIMEOUT = 60
"""Seconds for Chromium to start, render a small page and exit."""
INSTALL_TIMEOUT = 900
"""Seconds for apt-get to fetch and install Chromium on a fresh machine."""
DEBIAN_PACKAGES = ("chromium", "chromium-driver")
SCREEN = (1280, 320)
"""The top of the page, where the summary must be."""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium() -> str:
    """Chromium from Debian's packages, installed on first use where the tests run as root (as CI does)."""
    found = _chromium()
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        for command in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES]):
            process_tree.run(command, check=True, capture_output=True, timeout=INSTALL_TIMEOUT,
                             env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        found = _chromium()
    if found is None:
        pytest.skip(f"needs Debian packages {', '.join(DEBIAN_PACKAGES)} (install them as root)")
    return found


def browse(chromium: str, profile: Path, url: str, *extra: str) -> str:
    """Run headless Chromium on ``url`` (scripts run) and return its standard output."""
    return process_tree.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         *extra, url], capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=True).stdout


def visible_rows(dom: str) -> list[str]:
    """Ids of the filterable rows the page shows (the filter script marks the others ``hidden``)."""
    return [m.group(1) for m in re.finditer(r'<tr id="([^"]+)" data-row=""[^>]*>', dom)
            if "hidden" not in m.group(0)]


def filled_spans(rows: list[list[tuple[int, int, int]]], min_width: int = 20) -> dict[tuple, int]:
    """Colour -> leftmost x of a horizontal run of at least ``min_width`` pixels: cell backgrounds, not the
    anti-aliased edges of text."""
    found: dict[tuple, int] = {}
    for row in rows:
        start = 0
        for x in range(1, len(row) + 1):
            if x == len(row) or row[x] != row[start]:
                if x - start >= min_width:
                    found[row[start]] = min(found.get(row[start], start), start)
                start = x
    return found


def mixed_results() -> list[CaseResult]:
    """The sample (every verdict in two areas), one SHOULD case, and an area where everything passes."""
    results = sample_results()
    results[2].level = "SHOULD"
    passing = next(r for r in sample_results() if r.verdict is Verdict.PASS)
    passing.case_id, passing.area = "admin::case_pass", "admin"
    return [*results, passing]


@pytest.fixture
def report(tmp_path: Path) -> tuple[Path, list[CaseResult]]:
    results = mixed_results()
    return html.write(tmp_path / "index.html", results, title="conformance <check>"), results


def test_html_report_renders_verdicts(tmp_path: Path, chromium: str, report: tuple[Path, list]) -> None:
    page, results = report
    dom = browse(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom")
    cells = re.findall(r'<td class="verdict v-(\w+)" data-verdict="([^"]+)">([^<]+)</td>', dom)
    assert len(cells) == len(results)
    assert {text for _, _, text in cells} == {v.value for v in Verdict}
    assert all(Verdict[name].value == attr == text for name, attr, text in cells)
    assert "<title>conformance &lt;check&gt;</title>" in dom
    assert 'id="matrix"' in dom and "total" in dom


def test_summary_and_cases_come_failures_first(tmp_path: Path, chromium: str,
                                               report: tuple[Path, list]) -> None:
    page, _ = report
    dom = browse(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom")
    matrix = dom[dom.index('id="matrix"'):dom.index("</table>", dom.index('id="matrix"'))]
    assert re.findall(r'<th class="verdict v-\w+">([^<]+)</th>', matrix) == [v.value for v in SEVERITY_ORDER]
    assert re.findall(r'<tr><th><a href="#area=(\w+)">', matrix) == ["framing", "headers", "admin"]
    verdicts = [Verdict(v) for v in re.findall(r'<tr id="[^"]+" data-row="" data-verdict="([^"]+)"', dom)]
    assert verdicts == sorted(verdicts, key=SEVERITY_ORDER.index)


@pytest.mark.parametrize(("fragment", "expected"), [
    ("", lambda r: True),
    ("#verdict=FAIL,CRASH", lambda r: r.verdict in (Verdict.FAIL, Verdict.CRASH)),
    ("#level=SHOULD", lambda r: r.level == "SHOULD"),
    ("#area=headers&verdict=PASS", lambda r: r.area == "headers" and r.verdict is Verdict.PASS),
])
def test_filters_in_the_address_show_only_matching_cases(tmp_path: Path, chromium: str,
                                                         report: tuple[Path, list], fragment: str,
                                                         expected: Callable[[CaseResult], bool]) -> None:
    page, results = report
    dom = browse(chromium, tmp_path / "profile", page.as_uri() + fragment, "--dump-dom")
    assert sorted(visible_rows(dom)) == sorted(r.case_id for r in results if expected(r))
    assert f">{len(visible_rows(dom))} of {len(results)}<" in dom


def test_cases_link_to_their_clause(report: tuple[Path, list]) -> None:
    page, results = report
    text = page.read_text()
    assert text.count(f'<a href="{CLAUSE_PAGE}#RMQ-FRAME-OPAQUE">') == len(results)
    clauses = (page.parent / CLAUSE_PAGE).read_text()
    assert '<tr id="RMQ-FRAME-OPAQUE">' in clauses and "A response carries the opaque" in clauses


def test_expected_and_actual_sit_side_by_side(report: tuple[Path, list]) -> None:
    page, _ = report
    pair = ('<div class="ea"><div class="v"><b>expected</b> 1</div><div class="v"><b>actual</b> 2</div>'
            "</div>")
    assert pair in page.read_text()


def test_screenshot_shows_the_summary_at_the_top_failures_first(tmp_path: Path, chromium: str,
                                                               report: tuple[Path, list]) -> None:
    page, _ = report
    shot = tmp_path / "summary.png"
    browse(chromium, tmp_path / "profile", page.as_uri(), f"--screenshot={shot}",
           f"--window-size={SCREEN[0]},{SCREEN[1]}", "--hide-scrollbars")
    width, _, rows = read_rgb(shot)
    assert width == SCREEN[0]

    fills = filled_spans(rows)

    def first_column(verdict: Verdict) -> int:
        colour = tuple(int(COLOURS[verdict][i:i + 2], 16) for i in (1, 3, 5))
        assert colour in fills, f"no {verdict.value} cell in the top {SCREEN[1]} pixels"
        return fills[colour]

    positions = [first_column(v) for v in SEVERITY_ORDER]
    assert positions == sorted(positions), "the matrix's columns are not failures first"


def test_comparison_page_lists_differing_verdicts_first(tmp_path: Path, chromium: str) -> None:
    first, second = mixed_results(), mixed_results()
    second[0].verdict = Verdict.PASS  # a CRASH in the first run
    second[-1].verdict = Verdict.FAIL  # a PASS in the first run
    for name, results in (("a", first), ("b", second[1:])):  # the second run lacks one case
        json_files.write(tmp_path / name, results, {"broker": f"broker-{name}"})
    page = html_compare.write(tmp_path / "cmp" / "compare.html", html_compare.load(tmp_path / "a"),
                              html_compare.load(tmp_path / "b", "java"))
    dom = browse(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom")
    assert "broker broker-a vs java" in dom
    differing = {first[0].case_id, first[-1].case_id}
    assert set(visible_rows(dom)[:2]) == differing and len(visible_rows(dom)) == len(first)
    assert '<strong id="differing">2</strong>' in dom
    same = browse(chromium, tmp_path / "profile", page.as_uri() + "#change=same", "--dump-dom")
    assert set(visible_rows(same)) == {r.case_id for r in first} - differing
    assert (page.parent / CLAUSE_PAGE).exists()


def test_every_page_explains_the_verdicts(tmp_path: Path, report: tuple[Path, list]) -> None:
    page, results = report
    json_files.write(tmp_path / "a", results, {"broker": "a"})
    compare = html_compare.write(tmp_path / "compare.html", html_compare.load(tmp_path / "a"),
                                 html_compare.load(tmp_path / "a", "again"))
    for written in (page, page.parent / CLAUSE_PAGE, compare):
        text = written.read_text()
        legend = text[text.index('<ul id="legend">'):text.index("</ul>", text.index('<ul id="legend">'))]
        for verdict in Verdict:
            assert f'<span class="verdict v-{verdict.name}">{verdict.value}</span>' in legend, written.name
            assert MEANINGS[verdict] in html_lib.unescape(legend)


def _big(verdict: Verdict, n: int) -> CaseResult:
    """A case with what made a PASS run's page 4 MB: hundreds of observations and frames of kilobytes."""
    result = sample_results()[0]
    result.case_id, result.verdict, result.expected, result.actual = f"framing::big_{n}", verdict, None, None
    result.observations = [{"what": f"split at {i}", "expected": "ab" * 1000, "actual": "ab" * 1000,
                            "ok": True, "tolerated": ""} for i in range(300)]
    result.frames = [{"t": i / 1000, "conn": 1, "dir": ">", "len": 2048, "hex": "00" * 2048}
                     for i in range(300)]
    return result


def test_long_values_and_frames_stay_off_the_page(tmp_path: Path) -> None:
    """A passing case is one row saying what it required; a failing one shows its first observations, cut,
    and links to its own page, which has them all and its frames; only that case has a JSON file."""
    results = [_big(Verdict.PASS, n) for n in range(250)] + [_big(Verdict.FAIL, 250)]
    results[-1].observations[7]["ok"] = False
    page = html.write(tmp_path / "index.html", results, title="big")
    json_files.write(tmp_path, results, {"title": "big"})
    text = page.read_text()
    assert page.stat().st_size < 200_000
    start = text.index('<tr id="framing::big_0"')
    first = text[start:text.index("</tr>", start)]
    assert "<a " not in first.replace(f'<a href="{CLAUSE_PAGE}#', "")  # no link but to its clause
    assert "opaque echoed" in first and "split at" not in first and "log lines" not in first
    failed = text[text.index('<tr id="framing::big_250"'):]
    failed = failed[:failed.index("</tr>")]
    assert '<a href="cases/framing_big_250.html">framing::big_250</a>' in failed
    assert "split at 7" not in failed, "the failing pair is shown, not the observation's name"
    assert '… (2,000 characters: <a href="cases/framing_big_250.html">the whole value</a>)' in failed
    assert "log lines" not in failed
    case = (tmp_path / "cases" / "framing_big_250.html").read_text()
    assert "Observations (300)" in case and "100 more in the JSON" in case
    assert case.index("split at 7") < case.index("split at 0"), "those that did not hold first"
    assert "Frames (300 log lines on 1 connection(s))" in case
    assert sorted(p.name for p in (tmp_path / "cases").iterdir()) == ["framing_big_250.html",
                                                                     "framing_big_250.json"]


def test_a_failure_always_shows_expected_and_seen(report: tuple[Path, list]) -> None:
    _, results = report
    timed_out = next(r for r in results if r.verdict is Verdict.FAIL)
    timed_out.expected = timed_out.actual = None
    timed_out.observations, timed_out.message = [], "no response to code 17 (opaque 1) within 5.0 s"
    text = html.render([timed_out], "t")
    assert ('<div class="v"><b>expected</b> opaque echoed</div>'
            '<div class="v"><b>actual</b> no response to code 17 (opaque 1) within 5.0 s</div>') in text


def test_errors_of_the_run_are_not_the_targets(report: tuple[Path, list]) -> None:
    _, results = report
    errors = [r for r in results if r.verdict is Verdict.ERROR]
    passed = [r for r in results if r.verdict is Verdict.PASS]
    text = html.render([*errors, *passed], "t", related=[("store/index.html", "the store it wrote")])
    assert f"{len(errors)} error(s) of the run" in text
    assert (f"not judged because of errors of the run itself; over the {len(passed)} judged, the target "
            "conforms") in text
    assert '<a href="store/index.html">the store it wrote</a>' in text


def test_narrow_screens_get_one_card_per_case(tmp_path: Path, chromium: str,
                                              report: tuple[Path, list]) -> None:
    """At a phone's width each case row is a card as wide as the screen: its verdict is a band of colour
    across it, not a sliver of a ten-column table."""
    page, _ = report
    shot = tmp_path / "narrow.png"
    browse(chromium, tmp_path / "profile", page.as_uri() + "#verdict=FAIL", f"--screenshot={shot}",
           "--window-size=390,2000", "--hide-scrollbars")
    width, _, rows = read_rgb(shot)
    colour = COLOURS[Verdict.FAIL]
    fail = (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))
    bands = [row.count(fail) for row in rows]
    assert max(bands) > width * 0.8, "no FAIL band across the screen"


def test_the_header_says_plainly_when_a_profile_tolerated_musts(report: tuple[Path, list]) -> None:
    _, results = report
    kept = [r for r in results if r.verdict in (Verdict.PASS, Verdict.UNSUPPORTED)]
    plain = html.outcome(kept, strict=False)
    assert plain == (f"{len(kept)} cases (2 UNSUPPORTED, 3 PASS); the target conforms. 2 UNSUPPORTED: "
                     "features the target answered it does not have.")
    tolerated = next(r for r in results if r.verdict is Verdict.NON_STRICT)
    tolerated.level, tolerated.deviation = "MUST", "rocketmq-5: answered 1, cited"
    told = html.outcome([tolerated, *kept], strict=False)
    assert "the target conforms" not in told
    assert ("the target breaks 1 MUST(s) that its profile tolerates as known, cited deviations (NON-STRICT): "
            "it conforms only under that profile.") in told


def test_a_report_can_link_to_a_clause_page_it_does_not_write(tmp_path: Path) -> None:
    """The store report of a run sits under the wire report and links to its clause page."""
    results = mixed_results()
    page = html.write(tmp_path / "index.html", results, title="store", clauses=f"../{CLAUSE_PAGE}")
    assert not (tmp_path / CLAUSE_PAGE).exists()
    assert page.read_text().count(f'<a href="../{CLAUSE_PAGE}#RMQ-FRAME-OPAQUE">') == len(results)
    case = (tmp_path / "cases" / "framing_case_fail.html").read_text()
    assert f'<a href="../../{CLAUSE_PAGE}#RMQ-FRAME-OPAQUE">' in case
