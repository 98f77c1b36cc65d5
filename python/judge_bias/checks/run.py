"""Evaluate a policy on a built warehouse (read-only): the results of every rule it
names, in its order, and the summary line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from judge_bias.checks.policy import Policy
from judge_bias.checks.rules import RULES, Result


def run_policy(db: str | Path, policy: Policy) -> list[Result]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        results: list[Result] = []
        for name, options in policy.rules.items():
            opts = {"items": options} if isinstance(options, list) else dict(options)
            found = RULES[name].evaluate(con, opts, policy)
            results.extend(found)
        return results
    finally:
        con.close()


def summary(results: Sequence[Result], policy: Policy) -> str:
    findings = sum(r.is_finding for r in results)
    warnings = sum(r.status == "failed" and not r.is_finding for r in results)
    passed = sum(r.status == "passed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    return (
        f"judge-bias check ({policy.source}): {findings} finding(s), {warnings} warning(s), "
        f"{passed} passed, {skipped} skipped"
    )
