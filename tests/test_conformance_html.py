"""The HTML report renders its verdicts in a real browser (headless Chromium)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.report import html
from conformance.verdict import Verdict
from tests.test_conformance_framework import sample_results

BROWSER_TIMEOUT = 60
"""Seconds for Chromium to start, render a small page and exit."""
INSTALL_TIMEOUT = 900
"""Seconds for apt-get to fetch and install Chromium on a fresh machine."""
DEBIAN_PACKAGES = ("chromium", "chromium-driver")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium() -> str:
    """Chromium from Debian's packages, installed on first use where the tests run as root (as CI does)."""
    found = _chromium()
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        for command in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES]):
            subprocess.run(command, check=True, capture_output=True, timeout=INSTALL_TIMEOUT,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        found = _chromium()
    if found is None:
        pytest.skip(f"needs Debian packages {', '.join(DEBIAN_PACKAGES)} (install them as root)")
    return found


def test_html_report_renders_verdicts(tmp_path: Path, chromium: str) -> None:
    results = sample_results()
    page = html.write(tmp_path / "index.html", results, title="conformance <check>")
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=True).stdout
    cells = re.findall(r'<td class="verdict v-(\w+)" data-verdict="([^"]+)">([^<]+)</td>', dom)
    assert len(cells) == len(results)
    assert {text for _, _, text in cells} == {v.value for v in Verdict}
    assert all(Verdict[name].value == attr == text for name, attr, text in cells)
    assert "<title>conformance &lt;check&gt;</title>" in dom
    assert 'id="matrix"' in dom and "total" in dom
