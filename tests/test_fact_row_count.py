"""fct_judge_ratings' key test (models/marts/ratings/_ratings__models.yml): its rows
are int_judge_ratings_checked's accepted rows carried 1:1, whose key is tested
unique there, so the fact's key holds when it has as many rows as those and its
source_row_number is unique. The count (dbt_tests/generic/same_row_count.sql)
replaced a GROUP BY over the six key columns: 2.47 -> 0.22 CPU s at 10M."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from judge_bias.warehouse.build import BuildError, BuildResult, run_dbt, target_dir
from judge_bias.warehouse.checks import violated_rules
from tests.test_build_outcome import copy_warehouse

pytestmark = pytest.mark.dbt


def _failed(db: Path) -> dict[str, str]:
    """The failed nodes of the last dbt run on ``db``: name -> compiled SQL."""
    results = json.loads((target_dir(db) / "run_results.json").read_text(encoding="utf-8"))
    return {
        r["unique_id"].split(".")[2]: r["compiled_code"]
        for r in results["results"]
        if r["status"] == "fail"
    }


@pytest.mark.parametrize(
    ("plant", "expected"),
    [
        # a fan-out of a join: a rating twice, same key and source row
        (
            "insert into fct_judge_ratings select * from fct_judge_ratings limit 1",
            {"same_row_count", "fct_judge_ratings_checks"},
        ),
        # a rating lost by a join: the key test of the GROUP BY never saw it
        (
            "delete from fct_judge_ratings where source_row_number = "
            "(select max(source_row_number) from fct_judge_ratings)",
            {"same_row_count"},
        ),
    ],
    ids=["fan_out", "lost_row"],
)
def test_the_fact_key_test_fails_on_a_fan_out_and_a_lost_row(
    demo_build: BuildResult, tmp_path: Path, plant: str, expected: set[str]
) -> None:
    db = copy_warehouse(demo_build, tmp_path)
    # a test of two models runs when both are selected (dbt's indirect selection)
    select = ["test", "--select", "fct_judge_ratings int_judge_ratings_checked"]
    run_dbt(select, db, quiet=True, capture=True)  # the demo passes
    with duckdb.connect(str(db)) as con:
        con.execute(plant)
    with pytest.raises(BuildError):
        run_dbt(select, db, quiet=True, capture=True)
    failed = _failed(db)
    assert {n.split("_fct_judge_ratings")[0] for n in failed} == expected, failed
    if "fct_judge_ratings_checks" in failed:
        violated = dict(violated_rules(db, failed["fct_judge_ratings_checks"]))
        assert violated == {"unique(source_row_number)": 1}, violated


def test_debiased_scores_key_test_fails_on_a_repeated_estimate(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    # debiased_scores is a view of fct_judge_ratings joined to one self-bias row per
    # judge: a second main self-bias row of a judge repeats that judge's own ratings
    db = copy_warehouse(demo_build, tmp_path)
    select = ["test", "--select", "debiased_scores fct_judge_ratings"]
    run_dbt(select, db, quiet=True, capture=True)  # the demo passes
    with duckdb.connect(str(db)) as con:
        assert con.execute(
            "select table_type from information_schema.tables where table_name = 'debiased_scores'"
        ).fetchall() == [("VIEW",)]
        con.execute(
            "insert into bias_estimates select * from bias_estimates where analysis = 'main' "
            "and slice = 'all' and term_type = 'self' and estimate is not null limit 1"
        )
    with pytest.raises(BuildError):
        run_dbt(select, db, quiet=True, capture=True)
    assert {n.split("_debiased_scores")[0] for n in _failed(db)} == {"same_row_count"}
