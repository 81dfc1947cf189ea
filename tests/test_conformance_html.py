"""The HTML report renders its verdicts in a real browser (headless Chromium)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.report import html
from conformance.verdict import Verdict
from tests.test_conformance_framework import sample_results

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_TIMEOUT = 60
"""Seconds for Chromium to start, render a small page and exit."""


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (Debian packages chromium, chromium-driver)")
def test_html_report_renders_verdicts(tmp_path: Path) -> None:
    results = sample_results()
    page = html.write(tmp_path / "index.html", results, title="conformance <check>")
    dom = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=True).stdout
    cells = re.findall(r'<td class="verdict v-(\w+)" data-verdict="([^"]+)">([^<]+)</td>', dom)
    assert len(cells) == len(results)
    assert {text for _, _, text in cells} == {v.value for v in Verdict}
    assert all(Verdict[name].value == attr == text for name, attr, text in cells)
    assert "<title>conformance &lt;check&gt;</title>" in dom
    assert 'id="matrix"' in dom and "total" in dom
