"""The covariance of PPI strata that share completions (judge_bias.ppi.clusters).

References: statsmodels' OLS with a cluster-robust (by completion) sandwich, no
small-sample correction, on the stacked design whose coefficients are each
stratum's labelled mean of Y - lambda_k Yhat and unlabelled mean of lambda_k Yhat
(the PPI estimator is their weighted sum, so its variance is c' V c); ppi_py's
``ppi_mean_ci`` where no completion has two units in a row (the variance is then
the independent strata's).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from ppi_py import ppi_mean_ci
from scipy import stats

from judge_bias.ppi.clusters import PAIR_TERMS, cross_moments, pair_terms
from judge_bias.ppi.estimator import combine, moments, stratum_estimates
from judge_bias.ppi.marts import KEYS, score_table, stratum_table

DIMENSIONS = ("correctness", "helpfulness", "faithfulness")
VAR_TOL = 1e-10  # relative: the same sums in another order


def _units(
    rng: np.random.Generator, n_completions: int, share: float, shared: bool = True
) -> pd.DataFrame:
    """Completions x dimensions: the human scores share the completion's quality (so
    a completion's dimensions are correlated), the judge is biased per dimension and
    noisy; a completion is labelled on every dimension or none. ``shared`` False
    gives each dimension its own completions (independent strata)."""
    rows = []
    for d, dim in enumerate(DIMENSIONS):
        ids = np.arange(n_completions) if shared else np.arange(n_completions) + d * 10_000
        q = (
            np.random.default_rng(7).normal(0.6, 0.15, size=n_completions)
            if shared
            else (rng.normal(0.6, 0.15, size=n_completions))
        )
        y = np.clip(np.rint((q + rng.normal(0, 0.1, n_completions)) * 4) / 4, 0, 1)
        yhat = np.clip(y + 0.05 * d + rng.normal(0, 0.12, n_completions), 0, 1)
        rows.append(pd.DataFrame({"completion": ids, "dimension": dim, "y": y, "yhat": yhat}))
    units = pd.concat(rows, ignore_index=True)
    labelled = set(rng.choice(units["completion"].unique(), size=round(share * n_completions),
                              replace=False))  # fmt: skip
    units["labelled"] = units["completion"].isin(labelled)
    units["group"] = "g"
    return units


def _moments(units: pd.DataFrame, stratum: str) -> pd.DataFrame:
    rows = []
    for s, g in units.groupby(stratum):
        lab = g[g["labelled"]]
        rows.append({"group": "g", "stratum": s,
                     **moments(lab["y"], lab["yhat"], g.loc[~g["labelled"], "yhat"])})  # fmt: skip
    return pd.DataFrame(rows)


def _estimate(units: pd.DataFrame, stratum: str = "dimension", method: str = "wald"):
    u = units.assign(stratum=units[stratum] if stratum != "all" else "all")
    strata = stratum_estimates(_moments(u, "stratum"), 0.9, method=method)
    cross = cross_moments(u, ["group"], ["completion"], "dimension")
    return strata, cross, combine(strata, ["group"], 0.9, method=method, cross=cross).iloc[0]


def _sandwich_var(units: pd.DataFrame, strata: pd.DataFrame, stratum: str) -> tuple[float, float]:
    """statsmodels: OLS of the stacked outcomes on stratum x label-status indicators,
    cluster-robust by completion (no small-sample correction); the PPI and the
    human-only estimators' variances as c' V c."""
    u = units.assign(stratum=units[stratum] if stratum != "all" else "all")
    lam = strata.set_index("stratum")["ppi_lambda"]
    weight = strata.set_index("stratum")["n_units"] / strata["n_units"].sum()
    u["lam"] = u["stratum"].map(lam)
    u["cell"] = u["stratum"] + np.where(u["labelled"], "|L", "|U")
    out = {}
    for name, lam_col in (("ppi", u["lam"]), ("human", 0.0 * u["lam"])):
        outcome = np.where(u["labelled"], u["y"] - lam_col * u["yhat"], lam_col * u["yhat"])
        x = pd.get_dummies(u["cell"], dtype=float)
        robust = {"groups": u["completion"], "use_correction": False}
        fit = sm.OLS(outcome, x).fit(cov_type="cluster", cov_kwds=robust)
        c = np.array([weight[col.split("|")[0]] for col in x.columns])
        out[name] = float(c @ fit.cov_params().to_numpy() @ c)
    return out["ppi"], out["human"]


@pytest.mark.parametrize("stratum", ["dimension", "all"])
@pytest.mark.parametrize("seed", [1, 2])
def test_pooled_variance_equals_the_cluster_robust_sandwich(stratum: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    units = _units(rng, 400, 0.15)
    strata, cross, got = _estimate(units, stratum)
    want, want_human = _sandwich_var(units, strata, stratum)
    assert got["std_error"] ** 2 == pytest.approx(want, rel=VAR_TOL)
    assert got["classical_std_error"] ** 2 == pytest.approx(want_human, rel=VAR_TOL)
    # completions' dimensions share their quality: the covariances are positive
    independent = combine(strata, ["group"], 0.9, method="wald").iloc[0]
    assert got["std_error"] > 1.2 * independent["std_error"]
    assert got["estimate"] == independent["estimate"]


def test_independent_strata_give_ppi_py_and_the_previous_variance() -> None:
    rng = np.random.default_rng(3)
    units = _units(rng, 300, 0.15, shared=False)
    strata, cross, got = _estimate(units)
    assert cross.empty  # no completion holds two units
    before = combine(strata, ["group"], 0.9, method="wald").iloc[0]
    assert got["std_error"] == before["std_error"]
    var, z = 0.0, stats.norm.ppf(0.95)
    for _, g in units.groupby("dimension"):
        lab = g[g["labelled"]]
        low, high = ppi_mean_ci(lab["y"].to_numpy(), lab["yhat"].to_numpy(),
                                g.loc[~g["labelled"], "yhat"].to_numpy(), alpha=0.1)  # fmt: skip
        var += (1 / 3) ** 2 * (float((high - low)[0]) / (2 * z)) ** 2
    assert got["std_error"] ** 2 == pytest.approx(var, rel=1e-9)


def test_a_stratum_holding_a_completion_twice_takes_its_covariances_in_both_marts() -> None:
    """ppi_strata without dimension: the pooled row's one stratum holds each
    completion's three dimensions; the strata mart's row and the scores mart's row
    are both the cluster-robust sandwich's."""
    units = _units(np.random.default_rng(4), 300, 0.2)
    strata, cross, got = _estimate(units, "all", method="skew")
    want, want_human = _sandwich_var(units, strata, "all")
    row = {"judge": "j", "is_panel": False, "model": "m", "dimension": "all"}
    m = _moments(units.assign(stratum="all"), "stratum").drop(columns="group").assign(**row)
    m["n_human_na"] = m["n_judge_na"] = 0
    c = cross.drop(columns="group").assign(**row)
    for table in (stratum_table(m, 0.9, None, "skew", c), score_table(m, 0.9, None, "skew", c)):
        assert len(table) == 1
        assert table["std_error"].iloc[0] ** 2 == pytest.approx(want, rel=VAR_TOL)
        assert table["classical_std_error"].iloc[0] ** 2 == pytest.approx(want_human, rel=VAR_TOL)
        assert table["ci_low"].iloc[0] == pytest.approx(got["ci_low"], rel=1e-12)
    independent = stratum_table(m, 0.9, None, "skew", None)
    assert independent["std_error"].iloc[0] < 0.85 * np.sqrt(want)
    assert set(KEYS) <= set(c.columns)


def test_a_stratum_with_one_label_adds_no_cross_term_and_no_warning() -> None:
    """A stratum with one human label is not estimable (combine's note); its one
    labelled unit is its own mean, so every product with its centred scores is 0 and
    its pairs add nothing (the cross terms equal those of the other strata's pairs
    alone), without numpy's invalid-value warning from n / (n - 1) = inf times 0
    (clusters.py, session 24)."""
    units = _units(np.random.default_rng(5), 200, 0.2)
    one = units["dimension"] == "faithfulness"
    first = units.loc[one & units["labelled"], "completion"].iloc[0]
    units.loc[one & (units["completion"] != first), "labelled"] = False
    strata, cross, got = _estimate(units.copy(), "dimension")
    assert "fewer than 2 human labels: not estimable in [faithfulness]" in got["notes"]
    strata = strata.assign(weight=strata["n_units"] / strata["n_units"].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terms = pair_terms(strata, cross, ["group"])
    others = cross[(cross["stratum_a"] != "faithfulness") & (cross["stratum_b"] != "faithfulness")]
    assert len(others) < len(cross)
    want = pair_terms(strata, others, ["group"])
    assert np.isfinite(terms[list(PAIR_TERMS)].to_numpy(dtype=float)).all()
    pd.testing.assert_frame_equal(terms, want)
