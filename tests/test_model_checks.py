"""model_checks (dbt_tests/generic/model_checks.sql): a model's checks as one dbt
test node, each rule failing on the rows its single test fails on (dbt's own
not_null, unique and accepted_values are the reference), its severity and where
kept, and a failure that names the violated rules and their failing rows."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.build import PROJECT_DIR, BuildResult
from judge_bias.warehouse.checks import manifest_checks, violated_rules
from judge_bias.warehouse.dbt_child import BuildError, dbt_failure
from tests.test_build_outcome import copy_warehouse

pytestmark = pytest.mark.dbt

# id, grp, kind, score, a, b, note. Clean: every rule holds (score 1 + 1e-10 is
# within the tolerance of computed doubles, macros/floats.sql).
CLEAN = [
    (1, "x", "p", 0.5, 1, 1, "n"),
    (2, "y", "q", 0.0, 1, 2, "n"),
    (3, "z", None, 1.0000000001, 2, 1, "n"),
]
# Broken: each rule violated on rows counted by hand below.
BROKEN = [
    *CLEAN,
    (None, "x", "p", 0.5, 3, 1, None),  # not_null(id); unique(grp) 'x'; note null, id null
    (None, "w", "r", 2.0, 3, 2, "n"),  # not_null(id); value_between(score)
    (4, "y", "r", -1.0, 1, 1, None),  # unique(grp) 'y'; expression_is_true; value_between
    (5, "v", "s", None, 1, 1, "n"),  # expression (null score is not true); (a, b) = (1, 1)
    (6, "u", "p", 0.1, 100, 3, "n"),  # the warning: a < 100
]
EXPECTED = {  # rule -> rows (or duplicated values) its single test returns
    "not_null(id)": 2,
    "unique(grp)": 2,  # the values x and y
    "accepted_values(kind)": 2,  # the values r and s (null is accepted, as in dbt)
    "unique_combination_of_columns(a, b)": 1,  # (1, 1) three times
    "expression_is_true(score >= 0)": 2,  # -1 and null
    "value_between(score, 0, 1)": 2,  # 2 and -1 (null is not checked)
    "not_null(note) where id is not null": 1,  # id 4 (the row of id null is left out)
    # the bitstring route of unique (dense_integer): a of ids 3-6 is 2, 1, 1, 100
    "unique(a) where id > 2": 1,  # the value 1
}
RULES = """
              - not_null: id
              - unique: grp
              - {accepted_values: kind, values: [p, q]}
              - unique_combination_of_columns: [a, b]
              - expression_is_true: "score >= 0"
              - {value_between: score, min_value: 0, max_value: 1}
              - {not_null: note, where: "id is not null"}
              - {unique: a, dense_integer: true, where: "id > 2"}
"""
# the reference: each check as its own test (dbt's built-in ones and the project's)
SINGLE = """
    columns:
      - name: id
        data_tests: [not_null]
      - name: grp
        data_tests: [unique]
      - name: kind
        data_tests:
          - accepted_values: {arguments: {values: [p, q]}}
      - name: score
        data_tests:
          - value_between: {arguments: {min_value: 0, max_value: 1}}
      - name: note
        data_tests:
          - not_null: {config: {where: "id is not null"}}
      - name: a
        data_tests:
          - unique: {config: {where: "id > 2"}}
"""


def _project(tmp_path: Path, rules: str = RULES) -> Path:
    """A dbt project of one model (planted, the rows of CLEAN or, with the var
    broken, BROKEN) with this project's generic tests, float and incremental macros."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "checks" / "generic").mkdir(parents=True)
    (project / "macros").mkdir()
    for path in (PROJECT_DIR / "dbt_tests" / "generic").glob("*.sql"):
        (project / "checks" / "generic" / path.name).symlink_to(path)
    # model_checks reads floats.sql's tolerances and incremental.sql's rule scope
    for name in ("floats.sql", "incremental.sql"):
        (project / "macros" / name).symlink_to(PROJECT_DIR / "macros" / name)
    (project / "dbt_project.yml").write_text(
        "name: probe\nversion: '1.0.0'\nconfig-version: 2\nprofile: probe\n"
        "model-paths: [models]\nmacro-paths: [macros]\ntest-paths: [checks]\n"
        "models: {probe: {+materialized: table}}\n"
    )
    (project / "profiles.yml").write_text(
        "probe:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        f"      path: '{tmp_path / 'probe.duckdb'}'\n      threads: 1\n"
    )

    def values(rows: list[tuple]) -> str:
        return ",\n        ".join(
            "(" + ", ".join("null" if v is None else repr(v) for v in row) + ")" for row in rows
        )

    (project / "models" / "planted.sql").write_text(
        "select * from (values\n"
        "    {% if var('broken', false) %}\n        " + values(BROKEN) + "\n"
        "    {% else %}\n        " + values(CLEAN) + "\n    {% endif %}\n"
        ") as t (id, grp, kind, score, a, b, note)\n"
    )
    (project / "models" / "planted.yml").write_text(
        "version: 2\nmodels:\n  - name: planted\n    data_tests:\n"
        "      - model_checks:\n          name: planted_checks\n"
        f"          arguments:\n            rules:{rules}"
        "      - model_checks:\n          name: planted_warnings\n"
        "          arguments:\n            rules:\n"
        '              - expression_is_true: "a < 100"\n'
        "          config: {severity: warn}\n"
        "      - unique_combination_of_columns:\n"
        "          arguments: {combination_of_columns: [a, b]}\n"
        "      - expression_is_true:\n"
        '          arguments: {expression: "score >= 0"}\n' + SINGLE
    )
    return project


def _dbt(project: Path, broken: bool) -> tuple[int, dict[str, dict]]:
    """dbt build of the probe project: exit code and run_results by node name
    (none when it stopped before running a node: the output instead)."""
    cmd = [
        str(Path(sys.executable).with_name("dbt")), "--quiet", "build",
        "--project-dir", str(project), "--profiles-dir", str(project),
        "--vars", json.dumps({"broken": broken}),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    path = project / "target" / "run_results.json"
    if not path.exists():
        return proc.returncode, {"output": {"message": proc.stdout + proc.stderr}}
    results = json.loads(path.read_text())["results"]
    return proc.returncode, {r["unique_id"].split(".")[2]: r for r in results}


def test_each_rule_fails_on_the_rows_its_single_test_fails_on(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, clean = _dbt(project, broken=False)
    assert code == 0, {k: r["message"] for k, r in clean.items() if r["status"] != "pass"}
    assert {r["status"] for r in clean.values() if r["unique_id"].startswith("test.")} == {"pass"}

    since = time.time() - 1
    code, broken = _dbt(project, broken=True)
    assert code == 1
    checks = broken["planted_checks"]
    assert checks["status"] == "fail"
    db = tmp_path / "probe.duckdb"
    found = dict(violated_rules(db, checks["compiled_code"]))
    assert found == EXPECTED
    # the same counts as the single tests on the same rows
    single = {k: r["failures"] for k, r in broken.items() if not k.startswith("planted_")}
    by_kind = {k.split("(")[0] + ("_where" if "where" in k else ""): n for k, n in found.items()}
    reference = {
        "not_null": single["not_null_planted_id"],
        "unique": single["unique_planted_grp"],
        "accepted_values": single["accepted_values_planted_kind__p__q"],
        "unique_combination_of_columns": single["unique_combination_of_columns_planted_a__b"],
        "expression_is_true": single["expression_is_true_planted_score_0"],
        "value_between": single["value_between_planted_score__1__0"],
        "not_null_where": single["not_null_planted_note"],
        "unique_where": single["unique_planted_a"],
    }
    assert by_kind == reference
    # a warning stays a warning (one node per severity)
    assert broken["planted_warnings"]["status"] == "warn"
    assert broken["planted_warnings"]["failures"] == 1
    # the failure line names the violated rules and their rows (its first failed
    # node's: the single tests are left out of the run's results here)
    path = project / "target" / "run_results.json"
    results = json.loads(path.read_text())
    results["results"] = [r for r in results["results"] if r["unique_id"] == checks["unique_id"]]
    path.write_text(json.dumps(results))
    message = str(dbt_failure(["build"], project / "target", since, [], 1, db))
    assert message.startswith("dbt build failed in test planted_checks: 8 checks failed: ")
    assert "not_null(id) (2 rows)" in message
    assert "not_null(note) where id is not null (1 row)" in message


def test_an_unknown_rule_is_a_compile_error(tmp_path: Path) -> None:
    project = _project(tmp_path, rules="\n              - not_nul: id\n")
    code, results = _dbt(project, broken=False)
    assert code != 0
    assert "model_checks of" in results["output"]["message"], results
    assert "unknown rule {'not_nul': 'id'}" in results["output"]["message"], results


def test_the_build_names_the_failed_check_of_a_mart(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    """On the demo warehouse with 3 ratings' run_id nulled, fct_judge_ratings'
    checks fail and the line names not_null(run_id) and its 3 rows."""
    db = copy_warehouse(demo_build, tmp_path / "wh")
    with duckdb.connect(str(db)) as con:
        con.execute(
            "update fct_judge_ratings set run_id = null where source_row_number in "
            "(select source_row_number from fct_judge_ratings order by 1 limit 3)"
        )
    with pytest.raises(BuildError) as failed:
        build_mod.run_dbt(
            ["test", "--select", "fct_judge_ratings_checks"],
            db,
            PROJECT_DIR / "data" / "demo",
            capture=True,
        )
    assert str(failed.value) == (
        "dbt test failed in test fct_judge_ratings_checks: "
        "1 check failed: not_null(run_id) (3 rows)"
    )


def test_demo_checks_are_one_node_per_model_and_severity(demo_build: BuildResult) -> None:
    """Every model_checks node holds one model's rules of one severity, and the
    demo project keeps its checks: main before model_checks had 396 test nodes
    (int_bias_cell_prompt_moments, incremental warehouses only, added one for a
    while: its key); 397 with the singular test every_load_is_scoped (incremental
    warehouses only: disabled here, and counted); 408 with int_ppi_unit_pair_sums'
    eleven rules (its key and ten not_null); 407 without int_agreement_judge_human_pairs
    (its key: the rows and key of int_agreement_binary_ratings, checked there); 406
    without int_glm_agreement_ratings (its key: the table is gone, session 18); 410 with
    int_ppi_unit_groups' four (its key, unit_key unique and not null, pair_group not
    null; session 19); 413 with pairwise_bias's three value_between rules of
    self_preference_rate_ties_half and its interval (session 21); 414 with
    stg_inputs__relation_counts' rows_in_relation = rows_loaded (session 24: each load
    from relations reconciled with a plain count of the rows it selected); 415 with its
    warn-severity rows_late = 0 (session 26: rows written late, never read)."""
    target = build_mod.target_dir(demo_build.db_path)
    manifest = json.loads((target / "manifest.json").read_text())
    tests = [n for n in manifest["nodes"].values() if n["resource_type"] == "test"]
    grouped = [n for n in tests if (n.get("test_metadata") or {}).get("name") == "model_checks"]
    keys = [(n["attached_node"], n["config"]["severity"]) for n in grouped]
    assert len(keys) == len(set(keys))
    assert all(len(n["depends_on"]["nodes"]) <= 1 for n in grouped)
    assert len(manifest_checks(manifest)) == 415
    assert len(tests) < 120


def test_a_rule_reads_the_rows_of_its_own_and_the_test_where() -> None:
    # dbt filters `model` by the test's `where` and model_checks ands the rule's:
    # the check described is the conjunction (a rule without one keeps the test's)
    node = {
        "resource_type": "test",
        "test_metadata": {
            "name": "model_checks",
            "kwargs": {
                "model": "m",
                "rules": [{"not_null": "a", "where": "b > 0"}, {"not_null": "c"}],
            },
        },
        "depends_on": {"nodes": ["model.judge_bias.m"]},
        "config": {"severity": "ERROR", "where": "run_id is not null", "enabled": True},
    }
    checks = manifest_checks({"nodes": {"test.m": node}})
    assert {(c.column, c.where) for c in checks} == {
        ("a", "(run_id is not null) and (b > 0)"),
        ("c", "run_id is not null"),
    }
