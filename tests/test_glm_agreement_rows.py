"""int_glm_agreement_ratings (SQL) keeps the rows the GLM agreement read before issue
17 moved the filter and deduplication out of pandas: on-scale ratings, one per
dimension x grader x unit, the first run in run_id (text) order."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.glm.dbt import AGREEMENT_COLUMNS, agreement_rows
from judge_bias.glm.runner import GlmConfig, Inputs, _agreement_rows
from tests.sql_models import MACROS, run_model
from tests.test_spark_aggregates import _glm_ratings


@pytest.mark.parametrize("collide", [False, True])
def test_sql_rows_equal_the_pandas_deduplication(collide: bool, monkeypatch) -> None:
    """collide: every key hashes alike (row_key_hash a constant), so every row is a
    candidate repeat: the ranking by the key itself still keeps one row per key."""
    if collide:
        monkeypatch.setitem(MACROS["duckdb"], "row_key_hash", lambda columns: "0")
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
    # rows tied on run_id (the test data has them): the lowest grader_type, then score
    ref = ref.sort_values(
        ["dimension", "grader", "unit", "run_id", "grader_type", "score"]
    ).drop_duplicates(["dimension", "grader", "unit"])
    order = ["dimension", "grader", "unit", "run_id"]
    got = got.sort_values(order).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, ref.reset_index(drop=True), check_dtype=False)
    assert len(got) < len(on)  # repeated runs were there to drop
    assert (got["run_id"] == "10").any() or not (on["run_id"] == "10").any()


def _rating_rows(n_units: int) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    units = [f"p{i}'s|m{i % 3}" for i in range(n_units)]  # a quote: SQL literals escaped
    rows = [
        (d, g, "llm", u.split("|")[1], u.split("|")[0], u, float(rng.integers(1, 6)), "r1")
        for d in ("d1", "d2")
        for g in ("j1", "j2", "a1")
        for u in units
        if not (d == "d2" and u.endswith("m2"))  # d2 has fewer units than d1
    ]
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS).sample(frac=1.0, random_state=1)


def test_agreement_pulls_only_the_sampled_units_and_samples_as_the_runner_does() -> None:
    frame = _rating_rows(90)
    config = GlmConfig(agreement_max_units=40)
    relation = duckdb.connect().from_df(frame)
    got = agreement_rows(relation, config)
    # per dimension at most 40 units, every rating of each chosen unit
    per_dim = got.groupby("dimension")["unit"].nunique().to_dict()
    assert per_dim == {"d1": 40, "d2": 40}
    chosen = got[["dimension", "unit"]].drop_duplicates()
    whole = frame.merge(chosen, on=["dimension", "unit"])
    assert len(got) == len(whole) == 3 * 80
    # the runner, given every row (in another order), reads the same rows
    inputs = Inputs(*(pd.DataFrame() for _ in range(4)), {}, frame, pd.DataFrame())
    for dimension in ("d1", "d2"):
        ref = _agreement_rows(inputs, dimension, config)
        mine = got[got["dimension"] == dimension]
        assert set(ref["unit"]) == set(mine["unit"])
        assert len(ref) == len(mine)
    # a small table is read whole; no ordinal model requested: nothing is read
    assert len(agreement_rows(duckdb.connect().from_df(_rating_rows(10)), config)) == 3 * 17
    off = agreement_rows(relation, GlmConfig(models=("pairwise",)))
    assert off.empty and list(off.columns) == AGREEMENT_COLUMNS
