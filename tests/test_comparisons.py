"""The comparison statistics (judge_bias.comparisons) against independent references.

References: truescore 0.7.4's ``ppi_compare`` / ``ppi_estimate`` (PPI on the per-prompt
difference; its clustered variance) and ``required_gold_labels``; statsmodels'
``multipletests`` (Holm, Benjamini-Hochberg); the stratified PPI++ means of
ppi_model_scores (judge_bias.ppi.marts.score_table); a simulation with a planted
difference between two models and a judge biased toward one of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from truescore.compare import ppi_compare
from truescore.correct import ppi_estimate
from truescore.power import required_gold_labels

from judge_bias.comparisons.adjust import adjust_within, benjamini_hochberg, holm
from judge_bias.comparisons.budget import budget_rows, human_only_needed, labels_needed
from judge_bias.comparisons.paired import differences
from judge_bias.comparisons.units import statistics
from judge_bias.ppi.marts import score_table

TOL = 1e-10


def _units(arrays: dict, labelled: dict, strata: dict | None = None) -> pd.DataFrame:
    """Unit rows from {(model, dimension): (y, yhat)} over prompts p000...; labelled:
    {(model, dimension): bool mask}; strata: {(model, dimension): stratum} (`all`)."""
    rows = []
    for (model, dim), (y, f) in arrays.items():
        n = len(y)
        rows.append(
            pd.DataFrame(
                {
                    "judge": "j",
                    "is_panel": False,
                    "model": model,
                    "prompt_id": [f"p{p:04d}" for p in range(n)],
                    "dimension": dim,
                    "stratum": (strata or {}).get((model, dim), "all"),
                    "y": np.where(labelled[model, dim], y, np.nan),
                    "yhat": f,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def paired_data() -> dict:
    """Two models on 300 prompts, one dimension, labels on the same 30% of prompts for
    both; the judge adds 0.1 to A's scores only."""
    rng = np.random.default_rng(1)
    p = 300
    ya = rng.normal(0.6, 0.2, p)
    yb = ya - 0.05 + rng.normal(0, 0.1, p)
    fa = ya + 0.1 + rng.normal(0, 0.1, p)
    fb = yb + rng.normal(0, 0.1, p)
    lab = rng.random(p) < 0.3
    units = _units({("A", "d"): (ya, fa), ("B", "d"): (yb, fb)}, {("A", "d"): lab, ("B", "d"): lab})
    return {"units": units, "ya": ya, "yb": yb, "fa": fa, "fb": fb, "idx": np.flatnonzero(lab)}


def _row(units: pd.DataFrame, lam: float | None, level: float, dim: str = "d") -> pd.Series:
    moments, cross = statistics(units)
    out = differences(moments, cross, level, lam)
    return out[out["dimension"] == dim].iloc[0]


@pytest.mark.parametrize("lam", [1.0, 0.0, 0.4])
def test_fixed_lambda_is_ppi_on_the_per_prompt_difference(paired_data: dict, lam: float) -> None:
    """With labels on the same prompts for both models, one stratum and one lambda, the
    paired difference is PPI on the per-prompt difference (truescore's ppi_estimate on
    judge_a - judge_b), its unbiased prompt-paired variance truescore's to rounding."""
    d = paired_data
    row = _row(d["units"], lam, 0.95)
    ref = ppi_estimate(d["fa"] - d["fb"], (d["ya"] - d["yb"])[d["idx"]], d["idx"],
                       alpha=0.05, lambda_=lam)  # fmt: skip
    assert row["difference"] == pytest.approx(ref.point, abs=TOL)
    assert row["std_error"] == pytest.approx(ref.standard_error, rel=1e-9)
    assert row["ci_low"] == pytest.approx(ref.low, abs=TOL)
    assert row["ci_high"] == pytest.approx(ref.high, abs=TOL)


def test_at_truescore_lambda_it_is_ppi_compare(paired_data: dict) -> None:
    """ppi_compare tunes one lambda on the difference; fixing ours at that lambda gives
    its estimate, interval and p-value."""
    d = paired_data
    ref = ppi_compare(d["fa"], d["fb"], d["ya"][d["idx"]], d["yb"][d["idx"]], d["idx"],
                      alpha=0.10)  # fmt: skip
    lam = ppi_estimate(d["fa"] - d["fb"], (d["ya"] - d["yb"])[d["idx"]], d["idx"]).lambda_
    row = _row(d["units"], lam, 0.90)
    assert row["difference"] == pytest.approx(ref.difference, abs=TOL)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert row["p_value"] == pytest.approx(ref.p_value, rel=1e-6)


def test_tuned_lambda_is_the_difference_of_ppi_model_scores(paired_data: dict) -> None:
    """Definitional difference from truescore: our lambda is tuned per model and stratum
    (so the difference is exactly ppi_model_scores' estimate of A minus B's), not once
    on the difference; the two estimates differ, both unbiased."""
    moments, cross = statistics(paired_data["units"])
    row = differences(moments, cross, 0.90, None).query("dimension == 'd'").iloc[0]
    scores = score_table(moments, 0.90, None, "wald").set_index(["model", "dimension"])
    expected = scores.loc[("A", "d"), "estimate"] - scores.loc[("B", "d"), "estimate"]
    assert row["difference"] == pytest.approx(expected, abs=TOL)
    classical = (
        scores.loc[("A", "d"), "classical_estimate"] - scores.loc[("B", "d"), "classical_estimate"]
    )
    assert row["human_only_difference"] == pytest.approx(classical, abs=TOL)
    d = paired_data
    ts = ppi_compare(d["fa"], d["fb"], d["ya"][d["idx"]], d["yb"][d["idx"]], d["idx"])
    assert abs(row["difference"] - ts.difference) > 1e-4  # a different lambda, named


def test_judge_only_difference_is_the_paired_mean_difference(paired_data: dict) -> None:
    """The judge-only difference and its se: the per-prompt judge differences' mean and
    sd / sqrt(n) (ddof 1), scipy's paired t-test's numbers."""
    d = paired_data
    row = _row(d["units"], None, 0.90)
    diff = d["fa"] - d["fb"]
    assert row["judge_only_difference"] == pytest.approx(diff.mean(), abs=TOL)
    assert row["judge_only_std_error"] == pytest.approx(stats.sem(diff), rel=1e-9)
    assert row["judge_minus_human_gap"] == pytest.approx(diff.mean() - row["difference"])


def test_pooled_dimensions_are_prompt_clustered_as_truescore() -> None:
    """Three dimensions pooled (dimension `all`): units of one prompt covary across models
    and dimensions. At lambda 0 our variance is truescore's cluster-robust one (clusters =
    prompts) up to the small-sample factor: ours n / (n - 1) on the labelled units,
    truescore's G / (G - 1) on the labelled prompts (a difference of definition; its
    interval also takes t(G - 1), ours z)."""
    rng = np.random.default_rng(2)
    p, dims = 150, 3
    hard = rng.normal(0, 0.2, p)
    lab = rng.random(p) < 0.4
    arrays = {}
    for model, mu, bias in (("A", 0.6, 0.1), ("B", 0.5, 0.0)):
        for k in range(dims):
            y = mu + hard + rng.normal(0, 0.1, p)
            arrays[model, f"d{k}"] = (y, y + bias + rng.normal(0, 0.1, p))
    units = _units(arrays, {key: lab for key in arrays})
    f = np.concatenate([arrays["A", f"d{k}"][1] - arrays["B", f"d{k}"][1] for k in range(dims)])
    g = np.concatenate([arrays["A", f"d{k}"][0] - arrays["B", f"d{k}"][0] for k in range(dims)])
    idx = np.flatnonzero(np.tile(lab, dims))
    clusters = np.tile(np.arange(p), dims)
    ref = ppi_estimate(f, g[idx], idx, alpha=0.05, lambda_=0.0, clusters=clusters)
    row = _row(units, 0.0, 0.95, "all")
    n_lab, g_lab = idx.size, int(lab.sum())
    assert row["difference"] == pytest.approx(ref.point, abs=TOL)
    ours = row["std_error"] ** 2 * (n_lab - 1) / n_lab * g_lab / (g_lab - 1)
    assert ours == pytest.approx(ref.standard_error**2, rel=1e-9)
    # without the clustering the variance would be a third of it (3 dimensions, shared
    # prompts): the pooled row's pairing ratio says how much the pairs matter
    assert row["pairing_variance_ratio"] < 1


def test_holm_and_bh_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for m in (1, 2, 7, 40):
        p = np.concatenate([rng.uniform(0, 0.05, m // 2), rng.uniform(0, 1, m - m // 2)])
        for ours, method in ((holm, "holm"), (benjamini_hochberg, "fdr_bh")):
            expected = multipletests(p, method=method)[1]
            np.testing.assert_allclose(ours(p), expected, rtol=0, atol=1e-12)
    # ties and a missing p-value: left out of the family, kept missing
    p = np.array([0.01, np.nan, 0.01, 0.04, 0.5])
    ok = np.isfinite(p)
    for ours, method in ((holm, "holm"), (benjamini_hochberg, "fdr_bh")):
        got = ours(p)
        assert np.isnan(got[1])
        np.testing.assert_allclose(got[ok], multipletests(p[ok], method=method)[1], atol=1e-12)


def test_adjustments_are_within_each_grain() -> None:
    frame = pd.DataFrame(
        {"judge": ["a", "a", "a", "b", "b"], "p_value": [0.01, 0.02, 0.03, 0.01, 0.5]}
    )
    out = adjust_within(frame, ["judge"])
    np.testing.assert_allclose(out["p_value_holm"], [0.03, 0.04, 0.04, 0.02, 0.5])
    assert out["n_tests"].tolist() == [3, 3, 3, 2, 2]


def _draw(rng: np.random.Generator, reps: int, prompts: int, share: float) -> pd.DataFrame:
    """``reps`` replicates (judge = replicate) of two models on two dimensions: A's mean
    human score 0.05 above B's, shared prompt difficulty, a judge adding 0.10 to A only,
    labels on a random ``share`` of each model's completions."""
    hard = rng.normal(0, 0.15, (reps, prompts))
    rep = np.repeat([f"r{r:04d}" for r in range(reps)], prompts)
    pid = np.tile([f"p{p:04d}" for p in range(prompts)], reps)
    frames = []
    for model, mu, bias in (("A", 0.55, 0.10), ("B", 0.50, 0.0)):
        lab = rng.random((reps, prompts)) < share
        for k in range(2):
            y = np.clip(mu + hard + rng.normal(0, 0.15, (reps, prompts)), 0, 1)
            f = np.clip(y + bias + 0.05 * k + rng.normal(0, 0.12, (reps, prompts)), 0, 1)
            frames.append(
                pd.DataFrame(
                    {
                        "judge": rep, "is_panel": False, "model": model, "prompt_id": pid,
                        "dimension": f"d{k}", "stratum": f"dimension=d{k}",
                        "y": np.where(lab, y, np.nan).ravel(), "yhat": f.ravel(),
                        "truth": y.ravel(),
                    }
                )
            )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def test_coverage_of_the_paired_difference_with_a_planted_difference() -> None:
    """800 replicates (Monte Carlo SE of a coverage: 0.011) at the documented size:
    300 prompts, 30% of each model's completions labelled (about 90 labels a model).
    The 90% intervals of the PPI and human-only differences cover the planted
    difference 0.87-0.93 of the time, per dimension and pooled; the judge-only
    interval, biased by the judge's +0.10 for A, almost never does; the same intervals
    without the prompts' covariance (the models taken as independent) over-cover
    (above 0.94): pairing matters. About 40-60 s."""
    rng = np.random.default_rng(5)
    big = _draw(rng, 1, 400_000, 1.0)
    means = big.groupby(["model", "dimension"])["truth"].mean()
    truth = {d: means["A", d] - means["B", d] for d in ("d0", "d1")}
    truth["all"] = (
        big.loc[big["model"] == "A", "truth"].mean() - big.loc[big["model"] == "B", "truth"].mean()
    )
    units = _draw(rng, 800, 300, 0.3)
    moments, cross = statistics(units.drop(columns="truth"))
    out = differences(moments, cross, 0.90)
    t = out["dimension"].map(truth)
    z = stats.norm.ppf(0.95)
    covered = (
        pd.DataFrame(
            {
                "dimension": out["dimension"],
                "ppi": (out["ci_low"] <= t) & (t <= out["ci_high"]),
                "human": (out["human_only_ci_low"] <= t) & (t <= out["human_only_ci_high"]),
                "judge": (out["judge_only_ci_low"] <= t) & (t <= out["judge_only_ci_high"]),
                "unpaired": (out["difference"] - t).abs()
                <= z * out["std_error"] / np.sqrt(out["pairing_variance_ratio"]),
            }
        )
        .groupby("dimension")
        .mean()
    )
    assert covered["ppi"].between(0.87, 0.93).all(), covered
    assert covered["human"].between(0.86, 0.94).all(), covered
    assert (covered["judge"] < 0.05).all(), covered
    assert (covered["unpaired"] > 0.94).all(), covered
    assert (out["std_error"] < out["human_only_std_error"]).mean() > 0.9  # the judge helps


@pytest.mark.parametrize(
    ("n_total", "half_width", "rate", "sens", "spec"),
    [(2000, 0.03, 0.5, 0.9, 0.9), (500, 0.05, 0.3, 0.8, 0.95), (300, 0.01, 0.5, 0.9, 0.9)],
)
def test_labels_needed_match_required_gold_labels(
    n_total: int, half_width: float, rate: float, sens: float, spec: float
) -> None:
    """The moments a binary judge's sensitivity and specificity imply (truescore's judge
    model) give truescore's labels, half-width and feasibility; the human-only count is
    its gold_only_required (z^2 p (1 - p) / h^2)."""
    q = rate * sens + (1 - rate) * (1 - spec)
    strata = pd.DataFrame(
        {
            "weight": [1.0], "n_units": [n_total], "var_y": [rate * (1 - rate)],
            "cov_y_yhat": [rate * sens - rate * q], "judge_var_pop": [q * (1 - q)],
        }
    )  # fmt: skip
    z = float(stats.norm.ppf(0.95))
    ref = required_gold_labels(n_total, target_half_width=half_width, true_rate=rate,
                               sensitivity=sens, specificity=spec, alpha=0.10)  # fmt: skip
    n, hw, feasible = labels_needed(strata, half_width, z)
    assert (n, feasible) == (ref.required_gold, ref.feasible)
    assert hw == pytest.approx(ref.achieved_half_width, rel=1e-12)
    assert human_only_needed(strata, half_width, z) == ref.gold_only_required


def test_budget_rows_reach_the_target_by_simulation() -> None:
    """label_budget's count, used: label that many of 2,000 completions at random, and
    the PPI++ half-width (ppi_model_scores' estimator, Wald) is at the target on average
    (within 10%); the human-only count gives the human-only target."""
    rng = np.random.default_rng(7)
    n = 2000
    y = rng.normal(0.6, 0.2, n)
    f = y + 0.1 + rng.normal(0, 0.08, n)
    full = _units({("A", "d"): (y, f), ("B", "d"): (y - 0.1, f)},
                  {("A", "d"): np.ones(n, bool), ("B", "d"): np.ones(n, bool)})  # fmt: skip
    full = full.assign(is_panel=True, judge="panel")
    moments, _ = statistics(full)
    plan = budget_rows(moments, 0.02, 0.90).set_index(["model", "dimension"]).loc[("A", "d")]
    need = int(plan["labels_needed"])
    assert need < plan["labels_needed_human_only"]
    widths = []
    for _ in range(40):
        lab = np.zeros(n, bool)
        lab[rng.choice(n, need, replace=False)] = True
        units = _units({("A", "d"): (y, f)}, {("A", "d"): lab}).assign(is_panel=True)
        m, _ = statistics(units)
        s = score_table(m[m["dimension"] == "d"], 0.90, None, "wald").iloc[0]
        widths.append(stats.norm.ppf(0.95) * s["std_error"])
    assert np.mean(widths) == pytest.approx(0.02, rel=0.10)


def test_budget_rows_without_labels_enough_are_notes_not_errors() -> None:
    """A model whose strata hold fewer than 2 human labels each (a DeepEval run: no
    human labels at all) gets label_budget rows with a note and null counts; the mart
    raised KeyError('labels_needed_human_only') on such data."""
    rng = np.random.default_rng(3)
    n = 50
    y = rng.normal(0.6, 0.2, n)
    f = y + rng.normal(0, 0.1, n)
    one = np.zeros(n, bool)
    one[0] = True
    units = _units({("A", "d"): (y, f)}, {("A", "d"): one}).assign(is_panel=True)
    moments, _ = statistics(units)
    out = budget_rows(moments, 0.05, 0.90)
    row = out.set_index(["model", "dimension"]).loc[("A", "d")]
    assert "fewer than 2 human labels" in str(row["note"])
    assert pd.isna(row["labels_needed"]) and pd.isna(row["labels_needed_human_only"])


def test_a_pair_without_an_estimate_names_no_estimator() -> None:
    """model_comparisons' method is null on a pair with no difference estimated (a
    model's stratum with fewer than 2 human labels), as on a row the memory budget
    skipped; a pair that is estimated names it (mend24: every row named it)."""
    import duckdb

    from judge_bias.comparisons.marts import comparisons_mart, method_name

    rng = np.random.default_rng(3)
    n = 60
    y = {m: rng.normal(0.6, 0.2, n) for m in "ABC"}
    arrays = {(m, "d"): (y[m], y[m] + rng.normal(0, 0.1, n)) for m in "ABC"}
    lab = rng.random(n) < 0.5
    one = np.zeros(n, bool)
    one[0] = True
    units = _units(arrays, {("A", "d"): lab, ("B", "d"): lab, ("C", "d"): one})
    moments, cross = statistics(units)
    con = duckdb.connect()
    con.register("m", moments)
    con.register("c", cross)
    out = comparisons_mart(con.table("m"), con.table("c"), lambda key: None)
    with_c = (out["model_a"] == "C") | (out["model_b"] == "C")
    assert with_c.any() and (~with_c).any()
    assert out.loc[with_c, "difference"].isna().all() and out.loc[with_c, "method"].isna().all()
    assert out.loc[~with_c, "difference"].notna().all()
    assert (out.loc[~with_c, "method"] == method_name(None)).all()


def test_no_pair_at_all_is_an_empty_mart() -> None:
    """One model (or pairwise-only data: LLMBar, AlpacaEval): no pair to compare, so
    differences() returns a frame without a difference column; mend24's method mask
    read that column before the mart's columns were set and failed the build with
    KeyError('difference'). The mart is empty, with its columns and types."""
    import duckdb

    from judge_bias.comparisons.marts import COMPARISON_COLUMNS, comparisons_mart

    rng = np.random.default_rng(5)
    n = 40
    y = rng.normal(0.6, 0.2, n)
    units = _units({("A", "d"): (y, y + rng.normal(0, 0.1, n))}, {("A", "d"): rng.random(n) < 0.5})
    moments, cross = statistics(units)
    con = duckdb.connect()
    con.register("m", moments)
    con.register("c", cross)
    out = comparisons_mart(con.table("m"), con.table("c"), lambda key: None)
    assert out.empty and list(out.columns) == list(COMPARISON_COLUMNS)
