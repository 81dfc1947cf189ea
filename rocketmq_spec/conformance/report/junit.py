"""JUnit XML, so CI systems show conformance verdicts next to ordinary test results.

JUnit knows passed, failed, errored and skipped: FAIL and CRASH are failures, ERROR (a fault of the
suite's run, not of the target) an error, UNSUPPORTED is skipped, and NON-STRICT is a failure only under
``strict``; the verdict itself travels as a property. The frames of a case that did not pass go to its
``system-out``, with its requirement as a property; a passing case's are left out, as from the other
reports.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from itertools import groupby
from pathlib import Path

from rocketmq_spec.conformance.report.matrix import is_failure
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict


def build(results: Sequence[CaseResult], *, strict: bool,
          properties: Mapping[str, str] | None = None) -> ET.ElementTree:
    """``properties`` (the target, the profile applied and how it was chosen) go on every suite."""
    root = ET.Element("testsuites", name="rmq-conformance")
    ordered = sorted(results, key=lambda r: r.area)
    for area, group in groupby(ordered, key=lambda r: r.area):
        members = list(group)
        suite = ET.SubElement(root, "testsuite", name=area, tests=str(len(members)),
                              failures=str(sum(is_failure(r, strict=strict) and r.verdict is not Verdict.ERROR
                                               for r in members)),
                              errors=str(sum(r.verdict is Verdict.ERROR for r in members)),
                              skipped=str(sum(r.verdict is Verdict.UNSUPPORTED for r in members)),
                              time=f"{sum(r.duration for r in members):.3f}")
        if properties:
            suite_props = ET.SubElement(suite, "properties")
            for name, value in properties.items():
                ET.SubElement(suite_props, "property", name=name, value=value)
        for result in members:
            case = ET.SubElement(suite, "testcase", classname=f"conformance.{area}", name=result.case_id,
                                 time=f"{result.duration:.3f}")
            props = ET.SubElement(case, "properties")
            described = [("verdict", result.verdict.value), ("clause", result.clause_id),
                         ("level", result.level)]
            if result.verdict is not Verdict.PASS:
                described.append(("requirement", result.requirement))
            for name, value in described:
                ET.SubElement(props, "property", name=name, value=value)
            expected, seen = result.expected_and_seen()
            detail = f"expected {expected!r}, actual {seen!r}"
            if result.verdict is Verdict.ERROR:
                ET.SubElement(case, "error", message=result.message, type=result.verdict.value)
            elif is_failure(result, strict=strict):
                node = ET.SubElement(case, "failure", message=result.message, type=result.verdict.value)
                node.text = detail
            elif result.verdict is Verdict.UNSUPPORTED:
                ET.SubElement(case, "skipped", message=result.message)
            if result.frames and result.verdict is not Verdict.PASS:
                ET.SubElement(case, "system-out").text = result.hex_log()
    return ET.ElementTree(root)


def write(path: Path, results: Sequence[CaseResult], *, strict: bool,
          properties: Mapping[str, str] | None = None) -> Path:
    tree = build(results, strict=strict, properties=properties)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
