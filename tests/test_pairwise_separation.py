"""Separated logistic fits have no estimate (issue 29, defect 5): planted complete
and quasi-complete separation is found by ``logistic.separation`` with the count of
judgments it predicts with probability 0 or 1 (counted here from the planted rule),
and every pairwise fit (length_slope, *_given_human, pairwise_joint_bias) then gives
a null estimate and that note, in the route the marts run (SQL aggregates) and the
row route. A fit that is not separated equals statsmodels' Logit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from judge_bias.pairwise import logistic
from judge_bias.pairwise.reference.human import joint_bias, pairwise_bias_with_human
from judge_bias.pairwise.sums import joint_bias_from_cells, pairwise_bias_from_aggregates
from tests.test_pairwise_sums import aggregates, checked_rows


def _design(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    o = rng.choice([-1.0, 0.0, 1.0], n)
    x = rng.uniform(-1, 1, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.8 * o + 1.5 * x)))).astype(float)
    return np.column_stack([np.ones(n), o, x]), y, o, x


def test_separation_counts_planted_complete_and_quasi_complete_separation() -> None:
    design, y, o, x = _design(2000, seed=1)
    assert logistic.separation(design, y) is None
    # complete: the first slot exactly when x > 0.1
    complete = logistic.separation(design, (x > 0.1).astype(float))
    assert complete is not None and complete.complete
    assert (complete.n_separated, complete.n_judgments) == (2000, 2000)
    # quasi-complete: the own completion always chosen (o = +1 -> 1, o = -1 -> 0),
    # the pairs without it as simulated
    quasi_y = np.where(o == 1, 1.0, np.where(o == -1, 0.0, y))
    quasi = logistic.separation(design, quasi_y)
    assert quasi is not None and not quasi.complete
    assert quasi.n_separated == int((o != 0).sum()) and quasi.columns == (1,)
    # the reference optimiser does not reach an estimate on it: no convergence
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.Logit(quasi_y, design).fit(disp=0)
    assert not ref.mle_retvals["converged"]
    note = logistic.fit(design, quasi_y, np.arange(2000) % 50, ["position", "self", "length"])
    assert note == (
        "not estimable (quasi-complete separation along self: "
        f"{int((o != 0).sum())} of 2000 judgments predicted with probability 0 or 1)"
    )


def test_separation_on_grouped_rows_and_ties_at_the_boundary() -> None:
    # x = 0 rows hold both outcomes; every other row is on its side: quasi-complete,
    # with the x = 0 rows left out of the count
    x = np.repeat([-1.0, -0.5, 0.0, 0.5, 1.0], 40)
    y = np.where(x > 0, 1.0, np.where(x < 0, 0.0, np.arange(200) % 2))
    sep = logistic.separation(np.column_stack([np.ones(200), x]), y)
    assert sep is not None and (sep.n_separated, sep.columns) == (160, (1,))
    # one y = 1 among the x < 0 rows breaks it: the estimate exists
    y[0] = 1.0
    assert logistic.separation(np.column_stack([np.ones(200), x]), y) is None


def test_a_fit_that_is_not_separated_equals_statsmodels() -> None:
    design, y, _, _ = _design(1500, seed=2)
    groups = np.arange(1500) % 90
    params, cov = logistic.fit(design, y, groups, ["a", "b", "c"])
    ref = sm.Logit(y, design).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    assert params == pytest.approx(np.asarray(ref.params), abs=1e-6)
    assert cov == pytest.approx(np.asarray(ref.cov_params()), abs=1e-6)


def test_bad_input_to_the_separation_check_is_an_error() -> None:
    with pytest.raises(ValueError, match="0/1 outcomes"):
        logistic.separation(np.ones((3, 1)), np.array([0.0, 0.5, 1.0]))
    with pytest.raises(ValueError, match="finite"):
        logistic.separation(np.array([[1.0], [np.nan]]), np.array([0.0, 1.0]))


def _planted_rows() -> tuple[pd.DataFrame, dict[str, int]]:
    """checked_rows with three judges separated, and the judgments each separation
    predicts with probability 0 or 1, counted from the planted rule:
    judge-a always picks its own completion (joint fit, along self-preference);
    judge-b picks what the human picked whenever the human decided, at random on a
    human tie (given-human fit, along the human verdict);
    judge-c picks the longer completion, at random on equal lengths (length_slope)."""
    rows = checked_rows(5)
    rng = np.random.default_rng(5)
    ok = rows["reject_code"].isna().to_numpy()
    judge = rows["judge"].to_numpy()
    sf, ss = rows["is_self_first"].to_numpy(bool), rows["is_self_second"].to_numpy(bool)
    verdict = rows["verdict"].to_numpy(dtype=object)
    random_pick = rng.choice(["first", "second"], len(rows))
    a = ok & (judge == "judge-a")
    verdict[a] = np.where(sf[a], "first", np.where(ss[a], "second", verdict[a]))
    hv = rows["human_verdict"].to_numpy(dtype=object)
    b = ok & (judge == "judge-b")
    verdict[b] = np.where(np.isin(hv[b], ["first", "second"]), hv[b], random_pick[b])
    c = ok & (judge == "judge-c")
    equal = c & (rng.random(len(rows)) < 0.2)
    rows.loc[equal, "length_second"] = rows.loc[equal, "length_first"]
    lf, ls = rows["length_first"].to_numpy(float), rows["length_second"].to_numpy(float)
    verdict[c] = np.where(lf[c] > ls[c], "first", np.where(lf[c] < ls[c], "second", verdict[c]))
    rows["verdict"] = verdict
    known = ~np.isnan(lf) & ~np.isnan(ls)
    decisive = np.isin(verdict, ["first", "second"])
    counts = {
        "judge-a": int((a & decisive & known & (sf | ss)).sum()),
        "judge-a-all": int((a & decisive & known).sum()),
        "judge-b": int((b & known & np.isin(hv, ["first", "second"])).sum()),
        "judge-b-all": int((b & known & np.isin(hv, ["first", "second", "tie"])).sum()),
        "judge-c": int((c & known & (lf != ls)).sum()),
        "judge-c-all": int((c & known & decisive).sum()),
    }
    return rows, counts


def test_separated_pairwise_fits_are_null_with_a_counted_note_in_both_routes() -> None:
    rows, counts = _planted_rows()
    agg = aggregates(rows)
    listed = rows[rows["reject_code"].isna() | rows["kept_as_invalid"]].assign(
        verdict=lambda f: f["verdict"].where(~f["kept_as_invalid"], "invalid")
    )
    accepted = rows[rows["reject_code"].isna()]
    marts = {
        "sums": pairwise_bias_from_aggregates(
            agg["int_pairwise_prompt_sums"],
            agg["int_pairwise_logit_cells"],
            agg["int_pairwise_kappa_counts"],
        ),  # fmt: skip
        "rows": pairwise_bias_with_human(listed),
    }
    joints = {
        "sums": joint_bias_from_cells(agg["int_pairwise_logit_cells"]),
        "rows": joint_bias(accepted),
    }
    for route in ("sums", "rows"):
        joint = joints[route].set_index("judge")
        a = joint.loc["judge-a"]
        assert a[["position_logodds", "self_preference_logodds", "length_slope"]].isna().all()
        assert (
            f"not estimable (quasi-complete separation along self_preference_logodds: "
            f"{counts['judge-a']} of {counts['judge-a-all']} judgments"
        ) in a["notes"]
        # the other judges' joint fits are estimates
        assert joint.loc[["judge-b", "judge-d"], "self_preference_logodds"].notna().all()
        pooled = marts[route].set_index(["judge", "opponent"]).xs("all", level="opponent")
        b = pooled.loc["judge-b"]
        assert np.isnan(b["length_slope_given_human"])
        assert np.isnan(b["first_slot_rate_given_human"])
        assert (
            "*_given_human not estimable (quasi-complete separation along human_verdict: "
            f"{counts['judge-b']} of {counts['judge-b-all']} judgments"
        ) in b["notes"]
        assert np.isfinite(pooled.loc["judge-d", "length_slope_given_human"])
        c = pooled.loc["judge-c"]
        assert np.isnan(c["length_slope"]) and np.isnan(c["length_slope_ci_low"])
        assert (
            "length slope not estimable (quasi-complete separation along length_slope: "
            f"{counts['judge-c']} of {counts['judge-c-all']} judgments"
        ) in c["notes"]
        assert np.isfinite(pooled.loc["judge-d", "length_slope"])
