"""The GLM agreement's rows, read from int_glm_ratings by judge_bias.glm.dbt (issue 34:
no 11.7M-row table of every unit's rows at 10M ratings): on-scale ratings, one per
dimension x grader x unit, the first run in run_id (text) order, of the units
unit_sample chooses, found in SQL by their positions among the sorted units."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.glm.agreement import unit_sample
from judge_bias.glm.dbt import AGREEMENT_COLUMNS, agreement_rows, sampled_units
from judge_bias.glm.runner import GlmConfig, Inputs, _agreement_rows
from tests.test_spark_aggregates import _glm_ratings


def _deduplicated(ratings: pd.DataFrame) -> pd.DataFrame:
    """The pandas steps of judge_bias.glm.dbt before issue 17 (filter, project, sort,
    drop duplicates), the reference for the rows kept."""
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
    # rows tied on run_id: the lowest grader_type, then score
    return ref.sort_values(
        ["dimension", "grader", "unit", "run_id", "grader_type", "score"]
    ).drop_duplicates(["dimension", "grader", "unit"])


def test_rows_equal_the_pandas_deduplication() -> None:
    ratings = _glm_ratings()
    # a judge and an annotator of one name tie on run_id: grader_type orders them
    first = ratings[ratings["on_scale"] & (ratings["run_id"] == "1")].iloc[[0]]
    tie = first.assign(grader_type="human", score=9.0)  # kept: "human" < "llm"
    ratings = pd.concat([ratings, tie], ignore_index=True).sample(frac=1.0, random_state=2)
    got = agreement_rows(duckdb.connect().from_df(ratings), GlmConfig())
    ref = _deduplicated(ratings)
    order = ["dimension", "grader", "unit", "run_id"]
    ref = ref.sort_values(order).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)
    assert len(got) < int(ratings["on_scale"].sum())  # repeated runs were there to drop
    assert (got["run_id"] == "10").any()  # "10" before "2": text order
    assert (got["score"] == 9.0).sum() == 1
    assert list(got.columns) == AGREEMENT_COLUMNS


def _rating_rows(n_units: int) -> pd.DataFrame:
    """int_glm_ratings' rows of n_units units: prompts whose text order is not their
    number order (p1 < p10 < p1é < p2) nor their case-folded order (P5 < p1: code
    points, review18a), a quote and a backslash (SQL literals escaped, Spark's too),
    every unit rated twice (run 1 and 2) by 3 graders in d1, the units of m2 missing
    in d2."""
    rng = np.random.default_rng(3)
    units = [
        (
            ("P" if i % 5 == 0 else "p")
            + f"{i}'s"
            + ("é" if i % 7 == 0 else "")
            + ("\\n" if i % 11 == 0 else ""),
            f"m{i % 3}",
        )
        for i in range(n_units)
    ]
    rows = [
        (d, g, "llm", model, prompt, run, float(rng.integers(1, 6)), True)
        for d in ("d1", "d2")
        for g in ("j1", "j2", "a1")
        for prompt, model in units
        for run in ("1", "2")
        if not (d == "d2" and model == "m2")  # d2 has fewer units than d1
    ]
    columns = ["dimension", "grader", "grader_type", "model", "prompt_id", "run_id", "score"]
    frame = pd.DataFrame(rows, columns=[*columns, "on_scale"])
    off = frame.iloc[:5].assign(on_scale=False, prompt_id="off", score=0.5)  # never read
    return pd.concat([frame, off]).sample(frac=1.0, random_state=1, ignore_index=True)


@pytest.mark.parametrize("max_units", [40, 60, 500])
def test_the_units_are_unit_samples_and_only_theirs_are_pulled(max_units) -> None:
    """sampled_units draws the positions from the units' count and finds them in SQL:
    the same units as unit_sample on every unit, sorted in Python (fails when the
    SQL order differs from np.sort's, or the draw from a count differs from the
    draw from the array)."""
    frame = _rating_rows(90)
    relation = duckdb.connect().from_df(frame)
    every = _deduplicated(frame)
    pairs = every[["dimension", "unit"]].drop_duplicates()
    expected = unit_sample(pairs, max_units, seed=7)
    got = sampled_units(relation, max_units, seed=7)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    config = GlmConfig(agreement_max_units=max_units)
    rows = agreement_rows(relation, config)
    per_dim = rows.groupby("dimension")["unit"].nunique().to_dict()
    assert per_dim == {"d1": min(max_units, 90), "d2": min(max_units, 60)}
    assert len(rows) == len(every.merge(expected, on=["dimension", "unit"]))
    # the runner, given every deduplicated row (in another order), reads the same rows
    inputs = Inputs(*(pd.DataFrame() for _ in range(4)), {}, every.sample(frac=1.0), pd.DataFrame())
    for dimension in ("d1", "d2"):
        ref = _agreement_rows(inputs, dimension, config)
        mine = rows[rows["dimension"] == dimension]
        key = ["grader", "unit"]
        pd.testing.assert_frame_equal(
            mine.sort_values(key).reset_index(drop=True),
            ref.sort_values(key).reset_index(drop=True),
            check_dtype=False,
        )


def test_nothing_is_read_without_a_model_the_agreement_reads() -> None:
    relation = duckdb.connect().from_df(_rating_rows(10))
    off = agreement_rows(relation, GlmConfig(models=("pairwise",)))
    assert off.empty and list(off.columns) == AGREEMENT_COLUMNS
    none = agreement_rows(relation.filter("false"), GlmConfig())
    assert none.empty and list(none.columns) == AGREEMENT_COLUMNS


def test_two_pairs_of_one_unit_string_are_one_unit() -> None:
    """Prompt "a|b" with model "c" and prompt "a" with model "b|c" are one unit "a|b|c"
    to unit_sample and the deduplication (as before issue 34): counted once, so the
    positions drawn are those of the units unit_sample sorts (fails when the units
    are counted as (prompt, model) pairs)."""
    frame = _rating_rows(30)
    extra = frame.iloc[:2].assign(dimension="d1", grader="j1", run_id="1", on_scale=True)
    extra["prompt_id"], extra["model"] = ["a|b", "a"], ["c", "b|c"]
    frame = pd.concat([frame, extra], ignore_index=True)
    pairs = _deduplicated(frame)[["dimension", "unit"]].drop_duplicates()
    relation = duckdb.connect().from_df(frame)
    for max_units in (10, 25):
        expected = unit_sample(pairs, max_units, seed=11)
        pd.testing.assert_frame_equal(
            sampled_units(relation, max_units, seed=11), expected, check_dtype=False
        )
    rows = agreement_rows(relation, GlmConfig())
    assert len(rows[rows["unit"] == "a|b|c"]) == 1
