"""int_ppi_stratum_moments' second moments (var_y, var_yhat_labelled, cov_y_yhat,
var_yhat_unlabelled) against exact rational arithmetic on 5-point scores (review18c:
the sums of squared centred scores lost ~1e-13 relative on such data at 10M ratings;
n x var_pop and covar_pop keep ~1e-14)."""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.ppi import marts
from tests.sql_models import render

# measured on these units: the sums of squares ~1e-12 (5.7e-13 at 1M units),
# var_pop and covar_pop 1e-14 to 8e-14 (DuckDB's threads add partial states in
# varying order)
TOLERANCE = 3e-13


def five_point_units(n: int = 2_000_000, seed: int = 5) -> pd.DataFrame:
    """One judge's units of two models and one dimension: human and judge scores on
    the normalised 5-point scale, 80% labelled."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, n) / 4
    yhat = np.clip(np.rint((y + rng.normal(0.1, 0.2, n)) * 4) / 4, 0, 1)
    labelled = rng.random(n) < 0.8
    return pd.DataFrame(
        {
            "judge": "j",
            "is_panel": False,
            "model": np.where(rng.random(n) < 0.5, "m1", "m2"),
            "prompt_id": "p",
            "dimension": "d",
            "y": np.where(labelled, y, np.nan),
            "yhat": yhat,
            "status": np.where(labelled, "labelled", "unlabelled"),
            "stratum": "all",
        }
    )


def exact_moment(counts: pd.Series) -> Fraction:
    """The population covariance of (x, z) from the counts of each pair of values,
    in exact fractions (the scores are exact binary fractions)."""
    n = int(counts.sum())
    pairs = [(Fraction(float(x)), Fraction(float(z)), int(k)) for (x, z), k in counts.items()]
    mx = sum(x * k for x, _, k in pairs) / n
    mz = sum(z * k for _, z, k in pairs) / n
    return sum(k * (x - mx) * (z - mz) for x, z, k in pairs) / n


def test_second_moments_equal_exact_sums() -> None:
    units = five_point_units()
    con = duckdb.connect()
    con.register("int_ppi_units", units)
    got = con.sql(render("int_ppi_stratum_moments")).df()
    assert set(got["model"]) == {"m1", "m2", "all"}
    for _, row in got.iterrows():
        rows = units if row["model"] == "all" else units[units["model"] == row["model"]]
        lab = rows[rows["status"] == "labelled"]
        unl = rows[rows["status"] == "unlabelled"]
        want = {
            "var_y": exact_moment(lab.groupby(["y", "y"]).size()),
            "var_yhat_labelled": exact_moment(lab.groupby(["yhat", "yhat"]).size()),
            "cov_y_yhat": exact_moment(lab.groupby(["y", "yhat"]).size()),
            "var_yhat_unlabelled": exact_moment(unl.groupby(["yhat", "yhat"]).size()),
        }
        for column, exact in want.items():
            error = abs(Fraction(float(row[column])) - exact) / exact
            assert error < TOLERANCE, (row["model"], column, float(error))


def constant_units(human: float, judge: float, labelled_per_model: int) -> pd.DataFrame:
    """One judge's units of three models and two dimensions, each pair with
    ``labelled_per_model`` labelled units and four unlabelled ones: every human score
    ``human``, every judge score ``judge``."""
    rows = []
    for model, dimension in itertools.product(("m1", "m2", "m3"), ("d1", "d2")):
        for i in range(labelled_per_model):
            rows.append((model, dimension, f"p{i}", human, judge, "labelled"))
        for i in range(4):
            rows.append((model, dimension, f"q{i}", np.nan, judge, "unlabelled"))
    units = pd.DataFrame(rows, columns=["model", "dimension", "prompt_id", "y", "yhat", "status"])
    return units.assign(judge="j", is_panel=False, stratum="all")


@pytest.mark.parametrize("labelled_per_model", [3, 5, 7])
def test_constant_inexact_scores_have_no_negative_variance(labelled_per_model: int) -> None:
    """Every score of a group one value that binary cannot hold (0.7, 5/6, 0.1): the
    second moments are 0 (exactly: the scores are equal), never below it, and
    ppi_model_scores' intervals (its human-only one takes sqrt(var_y / n)) are
    finite and hold the constant. The shift of each unit group's var_pop to the
    pooled means once added 2 * dy * s_a, s_a the rounding of the unit group's mean:
    var_y -1.2e-32 and a NaN human-only interval."""
    values = (0.7, 5 / 6, 0.1)
    for human, judge in itertools.product(values, values):
        con = duckdb.connect()
        con.register("int_ppi_units", constant_units(human, judge, labelled_per_model))
        got = con.sql(render("int_ppi_stratum_moments")).df()
        assert len(got) == 12  # 3 models and 'all' x 2 dimensions and 'all'
        for column in ("var_y", "var_yhat_labelled", "var_yhat_unlabelled"):
            assert (got[column] >= 0).all(), (human, judge, column, got[column].min())
            assert (got[column] < 1e-28).all(), (human, judge, column, got[column].max())
        assert (got["cov_y_yhat"].abs() < 1e-28).all()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # sqrt of a negative
            scores = marts.score_table(got, 0.95, None, "skew", None)
        assert len(scores) == 12
        for column in ("classical_ci_low", "classical_ci_high", "classical_estimate"):
            np.testing.assert_allclose(scores[column], human, rtol=0, atol=1e-12)
        for column in ("ci_low", "ci_high", "estimate"):
            np.testing.assert_allclose(scores[column], human, rtol=0, atol=1e-12)
        for column in ("classical_std_error", "std_error"):
            assert np.isfinite(scores[column]).all(), (human, judge, column)
            assert (scores[column] < 1e-12).all(), (human, judge, column)


def test_a_group_without_units_names_no_estimator() -> None:
    """A judge x model whose units all lack a judge score or a label status has no
    estimate: its method and variance_method are null (as a row the memory budget
    skipped), not the estimator's name as if it had been fitted (mend24)."""
    con = duckdb.connect()
    con.register("int_ppi_units", constant_units(0.7, 0.5, 5))
    got = con.sql(render("int_ppi_stratum_moments")).df()
    m1 = got["model"] == "m1"
    got.loc[m1, ["n_labelled", "n_unlabelled"]] = 0
    got.loc[m1, "n_judge_na"] = 9
    scores = marts.score_table(got, 0.95, None, "skew", None)
    empty = scores[scores["model"] == "m1"]
    assert len(empty) == 3 and empty["estimate"].isna().all()
    assert empty["method"].isna().all() and empty["variance_method"].isna().all()
    fitted = scores[scores["model"] != "m1"]
    assert fitted["estimate"].notna().all() and fitted["method"].notna().all()
    assert fitted["variance_method"].notna().all()


def test_a_group_with_one_label_in_a_stratum_names_no_estimator() -> None:
    """A model with units but one human label per dimension: not estimable (estimate
    NaN, notes 'fewer than 2 human labels'), yet mend24 kept its method and
    variance_method (only rows without units lost them), while model_comparisons
    nulls method on the same data. Null wherever the estimate is."""
    units = constant_units(0.7, 0.5, 5)
    one_label = (units["model"] == "m1") & (units["status"] == "labelled")
    units = units[~(one_label & (units["prompt_id"] != "p0"))]
    con = duckdb.connect()
    con.register("int_ppi_units", units)
    got = con.sql(render("int_ppi_stratum_moments")).df()
    scores = marts.score_table(got, 0.95, None, "skew", None)
    unlabelled = scores[(scores["model"] == "m1") & (scores["dimension"] != "all")]
    assert len(unlabelled) == 2 and (unlabelled["n_labelled"] == 1).all()
    assert (unlabelled["n_units"] > 0).all() and unlabelled["estimate"].isna().all()
    assert unlabelled["notes"].str.startswith("fewer than 2 human labels").all()
    assert unlabelled["method"].isna().all() and unlabelled["variance_method"].isna().all()
    estimated = scores.drop(unlabelled.index)
    assert estimated["estimate"].notna().all() and estimated["method"].notna().all()
    assert estimated["variance_method"].notna().all()
