"""The data checks of the dbt project, one per rule: each model's rules are one
``model_checks`` test node per model and severity (dbt_tests/generic/model_checks.sql;
issue 34: dbt's cost is per node, ~60 ms, not per query), so this module lists a
manifest's checks whichever node holds them, and reads back which rules a failed
``model_checks`` node found violated.

``python -m judge_bias.warehouse.checks A/manifest.json B/manifest.json`` prints
the checks only one of two manifests has (none: the same checks), e.g. main's
one-test-per-check manifest against a branch's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import duckdb

from judge_bias.errors import SettingError
from judge_bias.limits import duckdb_memory_limit

# the rule kinds of model_checks, each the name of the single generic test it replaces
RULE_KINDS = (
    "not_null",
    "unique",
    "accepted_values",
    "unique_combination_of_columns",
    "expression_is_true",
    "value_between",
)
# the first line of a compiled model_checks test (its failing rows name the rules)
CHECKS_SELECT = "select check_name, n_failing"


class Check(NamedTuple):
    """One check: the model(s) it reads, the rule, its column (None for a rule on
    several columns or an expression), its other arguments (JSON), severity, the
    rows it reads (dbt's ``where``) and whether it is enabled."""

    models: str
    kind: str
    column: str | None
    arguments: str
    severity: str
    where: str | None
    enabled: bool


def _rule_check(rule: dict[str, Any]) -> tuple[str, str | None, dict[str, Any], str | None]:
    """(kind, column, other arguments, where) of one model_checks rule."""
    rule = dict(rule)
    where = rule.pop("where", None)
    kinds = [k for k in RULE_KINDS if k in rule]
    if len(kinds) != 1:
        raise ValueError(f"a model_checks rule names one of {RULE_KINDS}: {rule}")
    kind = kinds[0]
    target = rule.pop(kind)
    if kind == "unique_combination_of_columns":
        return kind, None, {"combination_of_columns": list(target)}, where
    if kind == "expression_is_true":
        return kind, None, {"expression": target, "where_clause": rule.get("where_clause")}, where
    return kind, target, rule, where


def manifest_checks(manifest: dict[str, Any]) -> set[Check]:
    """Every check of a dbt manifest: a single generic test is one check, a
    model_checks test one per rule; a singular test one check named after it.
    Disabled tests count too (dbt lists them among the nodes or apart, by command)."""
    checks = set()
    disabled = [n for versions in (manifest.get("disabled") or {}).values() for n in versions]
    for node in [*manifest["nodes"].values(), *disabled]:
        if node["resource_type"] != "test":
            continue
        meta = node.get("test_metadata") or {}
        kwargs = {k: v for k, v in meta.get("kwargs", {}).items() if k != "model"}
        attached = (node.get("attached_node") or "").split(".")[-1]
        models = ",".join(sorted(d.split(".")[-1] for d in node["depends_on"]["nodes"]))
        models = models or attached or node["name"]
        config = node["config"]
        severity, where = config["severity"].lower(), config.get("where")
        enabled = config["enabled"]
        name = meta.get("name") or f"singular:{node['name']}"
        if name != "model_checks":
            column = kwargs.pop("column_name", None)
            if name == "expression_is_true":
                expression, where_clause = kwargs["expression"], kwargs.get("where_clause")
                kwargs = {"expression": expression, "where_clause": where_clause}
            arguments = json.dumps(kwargs, sort_keys=True)
            checks.add(Check(models, name, column, arguments, severity, where, enabled))
            continue
        for rule in kwargs["rules"]:
            kind, column, args, rule_where = _rule_check(rule)
            arguments = json.dumps(args, sort_keys=True)
            # dbt applies the test's `where` to `model` and model_checks ands the
            # rule's with it: the rule reads the rows meeting both
            both = [w for w in (where, rule_where) if w]
            where_rule = (
                " and ".join(f"({w})" for w in both) if len(both) > 1 else rule_where or where
            )
            checks.add(Check(models, kind, column, arguments, severity, where_rule, enabled))
    return checks


def violated_rules(db_path: Path, compiled_sql: str) -> list[tuple[str, int]]:
    """(check_name, n_failing) of each rule a failed model_checks test found
    violated, by running its compiled SQL again on the warehouse (read-only; at
    failure time only). Empty when the SQL is not model_checks' or cannot run here
    (another engine, the warehouse gone): the failure line is then dbt's."""
    if not compiled_sql.lstrip().startswith(CHECKS_SELECT) or not db_path.is_file():
        return []
    try:
        # the build's DuckDB bounds (profiles.yml): a failure's re-run stays in them
        config: dict[str, str | bool | int | float | list[str]] = {
            "threads": 2,
            "memory_limit": duckdb_memory_limit(),
        }
        with duckdb.connect(str(db_path), read_only=True, config=config) as con:
            rows = con.execute(f"{compiled_sql} order by check_name").fetchall()
    except (duckdb.Error, SettingError):
        return []
    return [(str(name), int(n)) for name, n in rows]


def describe_violations(rules: list[tuple[str, int]]) -> str:
    """One line: 'not_null(judge) (3 rows), unique(prompt_id) (1 row)'."""
    return ", ".join(f"{name} ({n} row{'s' if n != 1 else ''})" for name, n in rules)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m judge_bias.warehouse.checks A/manifest.json B/manifest.json")
        return 2
    a, b = (manifest_checks(json.loads(Path(p).read_text(encoding="utf-8"))) for p in argv)
    print(f"{len(a)} checks in {argv[0]}, {len(b)} in {argv[1]}")
    for sign, rows in (("-", a - b), ("+", b - a)):
        for check in sorted(rows, key=repr):
            print(sign, tuple(check))
    same = "the same checks"
    print(same if a == b else f"{len(a - b)} only in the first, {len(b - a)} only in the second")
    return 0 if a == b else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
