"""int_glm_agreement_ratings (SQL) keeps the rows the GLM agreement read before issue
17 moved the filter and deduplication out of pandas: on-scale ratings, one per
dimension x grader x unit, the first run in run_id (text) order."""

from __future__ import annotations

import duckdb
import pandas as pd

from tests.sql_models import run_model
from tests.test_spark_aggregates import _glm_ratings


def test_sql_rows_equal_the_pandas_deduplication() -> None:
    ratings = _glm_ratings()
    got = run_model(duckdb.connect(), "int_glm_agreement_ratings", int_glm_ratings=ratings).df()
    # the pandas steps of judge_bias.glm.dbt before: filter, project, sort, drop duplicates
    on = ratings[ratings["on_scale"]]
    ref = pd.DataFrame(
        {
            "dimension": on["dimension"],
            "grader": on["grader"],
            "grader_type": on["grader_type"],
            "model": on["model"],
            "item": on["prompt_id"],
            "unit": on["prompt_id"] + "|" + on["model"],
            "score": on["score"],
            "run_id": on["run_id"],
        }
    )
    ref = ref.sort_values(["dimension", "grader", "unit", "run_id"]).drop_duplicates(
        ["dimension", "grader", "unit"]
    )
    order = ["dimension", "grader", "unit", "run_id"]
    got = got.sort_values(order).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, ref.reset_index(drop=True), check_dtype=False)
    assert len(got) < len(on)  # repeated runs were there to drop
    assert (got["run_id"] == "10").any() or not (on["run_id"] == "10").any()
