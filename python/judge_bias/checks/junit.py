"""JUnit XML of a check run, the format CI systems (GitHub Actions test reporters,
GitLab, Jenkins) read: one testsuite `judge-bias check`, one testcase per rule x
subject (classname the rule), a `failure` for a finding, `skipped` for a rule that
could not run; a warning is a passing testcase with its line in system-out."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from judge_bias.checks.rules import Result


def junit_xml(results: Sequence[Result], policy_source: str) -> str:
    failures = sum(r.is_finding for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    suite = ET.Element(
        "testsuite",
        name="judge-bias check",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="policy", value=policy_source)
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=r.rule, name=r.subject)
        if r.is_finding:
            ET.SubElement(case, "failure", message=r.message, type="finding").text = r.line()
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", message=r.message)
        else:
            ET.SubElement(case, "system-out").text = r.line()
    suites = ET.Element("testsuites", name="judge-bias", tests=str(len(results)),
                        failures=str(failures))  # fmt: skip
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def write_junit(path: str | Path, results: Sequence[Result], policy_source: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(junit_xml(results, policy_source) + "\n", encoding="utf-8")
    return p
