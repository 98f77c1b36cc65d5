"""int_ppi_stratum_moments' second moments (var_y, var_yhat_labelled, cov_y_yhat,
var_yhat_unlabelled) against exact rational arithmetic on 5-point scores (review18c:
the sums of squared centred scores lost ~1e-13 relative on such data at 10M ratings;
n x var_pop and covar_pop keep ~1e-14)."""

from __future__ import annotations

from fractions import Fraction

import duckdb
import numpy as np
import pandas as pd

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
