"""judge_drift, judge_stability and agreement_binary statistics against independent
references on the same data: truescore 0.7.4 (judge_drift, judge_agreement,
gwet_ac1, quadratic_weighted_kappa, rogan_gladen_estimate), sklearn's
cohen_kappa_score, the krippendorff package, scipy and statsmodels. Where the
definitions differ (interval methods, observed vs declared scale levels, 0/0
cases) the difference is named and tested on its own."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import truescore as ts
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from judge_bias.drift.settings import DriftSettings, settings_from_config
from judge_bias.drift.stability import judge_stability_mart
from judge_bias.drift.versions import alpha_interval_two, drift_statistics, judge_drift_mart
from judge_bias.stats.binary_cells import gwet_ac1_binary
from tests.agreement_reference import binary_agreement, quadratic_weighted_kappa, rogan_gladen

TOL = 1e-9


def _binary(seed: int, n: int = 300, accuracy: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n)
    judge = np.where(rng.random(n) < accuracy, human, 1 - human)
    return judge, human


def test_rates_and_ac1_match_truescore_judge_agreement() -> None:
    judge, human = _binary(1)
    ours = binary_agreement(judge, human, np.arange(judge.size), level=0.95)
    ref = ts.judge_agreement(judge, human, alpha=0.05)
    for name in ("accuracy", "sensitivity", "specificity"):
        iv = getattr(ref, name)
        assert ours[name] == pytest.approx(iv.point, abs=TOL)
        # one rating per prompt: the design effect is 1, the interval plain Wilson
        assert ours[f"{name}_ci_low"] == pytest.approx(iv.low, abs=1e-9)
        assert ours[f"{name}_ci_high"] == pytest.approx(iv.high, abs=1e-9)
    assert ours["gwet_ac1"] == pytest.approx(ref.gwet_ac1.point, abs=TOL)
    assert ours["gwet_ac1"] == pytest.approx(ts.gwet_ac1(judge, human), abs=TOL)
    # definitional difference: both percentile bootstraps, ours over prompts with our
    # seed, truescore's over rows with its own: close, not equal
    assert ours["gwet_ac1_ci_low"] == pytest.approx(ref.gwet_ac1.low, abs=0.03)
    assert ours["gwet_ac1_ci_high"] == pytest.approx(ref.gwet_ac1.high, abs=0.03)
    assert (ours["true_pass"], ours["false_pass"], ours["false_fail"], ours["true_fail"]) == (
        ref.true_positives,
        ref.false_positives,
        ref.false_negatives,
        ref.true_negatives,
    )


def test_ac1_closed_form_by_hand() -> None:
    # Gwet (2008) two raters, 2x2: n11=40 n10=5 n01=10 n00=45 -> p_o = .85,
    # pi = (80+15)/200 = .475, p_e = 2 .475 .525 = .49875, AC1 = .35125 / .50125
    assert float(gwet_ac1_binary(40, 5, 10, 45)) == pytest.approx(0.35125 / 0.50125, abs=1e-12)


def test_qwk_matches_sklearn_and_truescore_when_every_level_occurs() -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(1, 6, 400)
    y = np.clip(x + rng.integers(-2, 3, 400), 1, 5)
    ours = quadratic_weighted_kappa(x, y)
    assert ours == pytest.approx(cohen_kappa_score(x, y, weights="quadratic"), abs=1e-12)
    assert ours == pytest.approx(ts.quadratic_weighted_kappa(x, y), abs=1e-12)
    # invariant to the linear normalisation onto 0-1
    assert quadratic_weighted_kappa((x - 1) / 4, (y - 1) / 4) == pytest.approx(ours, abs=1e-12)


def test_qwk_missing_level_named_difference() -> None:
    """Scores 1, 2, 4 on a 1-4 scale (3 never used): we weight by the score distance,
    as sklearn does when given the whole scale (labels=[1, 2, 3, 4]); truescore and
    sklearn without labels index the observed levels, treating 2 -> 4 as one step."""
    x = np.array([1, 2, 4, 4, 1, 2, 4, 2, 1, 4])
    y = np.array([1, 4, 4, 2, 2, 2, 1, 2, 1, 4])
    ours = quadratic_weighted_kappa(x, y)
    full = cohen_kappa_score(x, y, weights="quadratic", labels=[1, 2, 3, 4])
    observed = cohen_kappa_score(x, y, weights="quadratic")
    assert ours == pytest.approx(full, abs=1e-12)
    assert ts.quadratic_weighted_kappa(x, y) == pytest.approx(observed, abs=1e-12)
    assert abs(ours - observed) > 0.01


def test_rogan_gladen_matches_truescore() -> None:
    judge, human = _binary(3, n=300, accuracy=0.85)
    rng = np.random.default_rng(4)
    unlabelled = (rng.random(700) < 0.4).astype(int)
    all_judge = np.concatenate([judge, unlabelled])
    human_all = np.concatenate([human.astype(float), np.full(700, np.nan)])
    ours = binary_agreement(all_judge, human_all, np.arange(1000), level=0.90)
    ref = ts.rogan_gladen_estimate(all_judge, human, np.arange(300), alpha=0.10)
    assert ours["rg_pass_rate"] == pytest.approx(ref.point, abs=TOL)
    # named difference: truescore's interval treats p_obs, sens and spec as independent
    # (the independent form here, equal to it); ours keeps their covariance (the
    # labelled ratings are in p_obs) and is narrower
    ids = np.arange(1000)
    indep = rogan_gladen(all_judge, ids, judge, human, ids[:300], 0.90, independent=True)
    assert (indep.point, indep.low, indep.high) == pytest.approx((ref.point, ref.low, ref.high))
    assert ours["rg_pass_rate_ci_high"] - ours["rg_pass_rate_ci_low"] < ref.high - ref.low
    # the linearised standard error against a bootstrap of the ratings (iid: one per prompt)
    rng = np.random.default_rng(5)
    draws = []
    for _ in range(2000):
        take = rng.integers(0, 1000, 1000)
        lab = take[take < 300]
        j, h = judge[lab], human[lab]
        se_b, sp_b = j[h == 1].mean(), 1 - j[h == 0].mean()
        draws.append((all_judge[take].mean() + sp_b - 1) / (se_b + sp_b - 1))
    z = stats.norm.ppf(0.95)
    se_ours = (ours["rg_pass_rate_ci_high"] - ours["rg_pass_rate_ci_low"]) / (2 * z)
    assert se_ours == pytest.approx(np.std(draws), rel=0.08)
    # by hand: (p_obs + spec - 1) / (sens + spec - 1)
    sens = judge[human == 1].mean()
    spec = 1 - judge[human == 0].mean()
    assert ours["rg_pass_rate"] == pytest.approx(
        (all_judge.mean() + spec - 1) / (sens + spec - 1), abs=TOL
    )


def test_clustered_rates_widen_with_prompt_clusters() -> None:
    """Ratings of one prompt that agree together: the interval is wider than the
    plain Wilson interval of the same counts (design effect > 1)."""
    rng = np.random.default_rng(5)
    prompt_right = rng.random(60) < 0.7
    right = np.repeat(prompt_right, 5)
    human = np.ones(300)
    judge = np.where(right, 1.0, 0.0)
    ours = binary_agreement(judge, human, np.repeat(np.arange(60), 5), level=0.90)
    low, high = proportion_confint(right.sum(), 300, alpha=0.10, method="wilson")
    assert ours["sensitivity"] == pytest.approx(right.mean())
    assert ours["sensitivity_ci_high"] - ours["sensitivity_ci_low"] > 1.5 * (high - low)


def test_drift_matches_truescore_on_binary_versions() -> None:
    """truescore.judge_drift: same accuracies, change and flip rate; its flip interval
    is Clopper-Pearson (ours Wilson) and its change interval McNemar's Wald with z
    and variance / n (ours CR1: variance / (n - 1) with t on n - 1 df)."""
    before, human = _binary(6, n=250, accuracy=0.8)
    rng = np.random.default_rng(7)
    after = np.where(rng.random(250) < 0.1, 1 - before, before)
    ours = drift_statistics(before, after, np.arange(250), human.astype(float))
    ref = ts.judge_drift(before, after, human, alpha=0.10)
    assert ours["accuracy_before"] == pytest.approx(ref.baseline_agreement, abs=TOL)
    assert ours["accuracy_after"] == pytest.approx(ref.current_agreement, abs=TOL)
    assert ours["accuracy_change"] == pytest.approx(ref.agreement_change, abs=TOL)
    assert ours["flip_rate"] == pytest.approx(ref.flip_rate, abs=TOL)
    n = 250
    flips = int(np.sum(before != after))
    assert (ref.flip_low, ref.flip_high) == pytest.approx(
        proportion_confint(flips, n, alpha=0.10, method="beta"), abs=1e-9
    )
    assert (ours["flip_rate_ci_low"], ours["flip_rate_ci_high"]) == pytest.approx(
        proportion_confint(flips, n, alpha=0.10, method="wilson"), abs=1e-9
    )
    ref_half = (ref.high - ref.low) / 2
    ours_half = (ours["accuracy_change_ci_high"] - ours["accuracy_change_ci_low"]) / 2
    scale = np.sqrt(n / (n - 1)) * stats.t.ppf(0.95, n - 1) / stats.norm.ppf(0.95)
    assert ours_half == pytest.approx(ref_half * scale, rel=1e-9)


def test_mean_shift_is_statsmodels_cluster_robust_mean() -> None:
    rng = np.random.default_rng(8)
    prompts = np.repeat(np.arange(40), 4)
    x = rng.integers(1, 6, 160) / 5
    y = np.clip(x + rng.normal(0.05, 0.2, 160) + np.repeat(rng.normal(0, 0.1, 40), 4), 0, 1)
    ours = drift_statistics(x, y, prompts)
    fit = sm.OLS(y - x, np.ones(160)).fit(
        cov_type="cluster", cov_kwds={"groups": prompts}, use_t=True
    )
    low, high = fit.conf_int(alpha=0.10)[0]
    assert ours["mean_shift"] == pytest.approx(fit.params[0], abs=TOL)
    assert ours["mean_shift_ci_low"] == pytest.approx(low, abs=1e-9)
    assert ours["mean_shift_ci_high"] == pytest.approx(high, abs=1e-9)
    assert ours["mean_shift_p_value"] == pytest.approx(fit.pvalues[0], abs=1e-9)


def test_version_agreement_matches_krippendorff_scipy_sklearn() -> None:
    rng = np.random.default_rng(9)
    x = rng.integers(1, 6, 200)
    y = np.clip(x + rng.integers(-1, 2, 200), 1, 5)
    xn, yn = (x - 1) / 4, (y - 1) / 4
    ours = drift_statistics(xn, yn, np.arange(200))
    assert ours["alpha_interval"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([x, y]), level_of_measurement="interval"),
        abs=1e-9,
    )
    assert ours["qwk"] == pytest.approx(cohen_kappa_score(x, y, weights="quadratic"), abs=1e-9)
    rho = stats.spearmanr(x, y).statistic
    assert ours["spearman"] == pytest.approx(rho, abs=1e-12)
    se = np.sqrt((1 + rho**2 / 2) / 197)  # Bonett-Wright
    z = stats.norm.ppf(0.95)
    assert ours["spearman_ci_low"] == pytest.approx(np.tanh(np.arctanh(rho) - z * se), abs=1e-12)
    for name in ("qwk", "alpha_interval"):
        assert ours[f"{name}_ci_low"] < ours[name] < ours[f"{name}_ci_high"]
    n = 200.0
    sums = [n, xn.sum(), yn.sum(), (xn * xn).sum(), (yn * yn).sum(), (xn * yn).sum()]
    assert float(alpha_interval_two(*np.array(sums))) == pytest.approx(ours["alpha_interval"])


def test_drift_flag_rule() -> None:
    rng = np.random.default_rng(10)
    prompts = np.arange(300)
    x = rng.integers(0, 5, 300) / 4
    same = drift_statistics(x, x, prompts)
    assert not same["drift_flag"] and same["flip_rate"] == 0 and same["drift_reasons"] is None
    shifted = drift_statistics(x, np.clip(x + 0.25, 0, 1), prompts)
    assert shifted["drift_flag"] and "shift" in shifted["drift_reasons"]
    # flips that cancel: no mean shift, half the verdicts rewritten
    flipped = np.where(rng.random(300) < 0.5, 1 - x, x)
    swapped = drift_statistics(x, flipped, prompts, settings=DriftSettings(drift_min_shift=0.5))
    assert swapped["drift_reasons"] == "flips"


def test_stability_by_hand() -> None:
    # item a: runs 0, 0.5 (flip, pass crossed), item b: runs 1, 1, 1, item c: 0, 0.5, 1
    runs = {"a": [0.0, 0.5], "b": [1.0, 1.0, 1.0], "c": [0.0, 0.5, 1.0]}
    rows = []
    for item, scores in runs.items():
        s = np.array(scores)
        counts = np.unique(s, return_counts=True)[1]
        n = s.size
        rows.append(
            {
                "judge": "j",
                "dimension": "d",
                "prompt_id": item,
                "n_runs": n,
                "mean_score": s.mean(),
                "ss": ((s - s.mean()) ** 2).sum(),
                "discordant_share": (n * n - (counts**2).sum()) / (n * (n - 1)),
                "min_score": s.min(),
                "max_score": s.max(),
            }
        )
    out = judge_stability_mart(pd.DataFrame(rows)).iloc[0]
    assert out["flip_rate"] == pytest.approx((1 + 0 + 1) / 3)
    assert out["pass_cross_rate"] == pytest.approx(2 / 3)
    pooled = (np.var([0, 0.5], ddof=1) * 1 + 0 + np.var([0, 0.5, 1], ddof=1) * 2) / (1 + 2 + 2)
    assert out["within_item_sd"] == pytest.approx(np.sqrt(pooled))
    assert out["within_item_sd_ci_low"] < out["within_item_sd"] < out["within_item_sd_ci_high"]
    assert out["n_runs"] == 8 and out["n_items"] == 3


@pytest.mark.parametrize(
    ("judge", "human"),
    [
        (np.full(20, 0.5), np.full(20, 0.5)),  # constant, all agree
        (np.array([1.0]), np.array([1.0])),  # one item
        (np.ones(10), np.zeros(10)),  # all disagree, one class each
        (np.array([0.0, 1, 0, 1]), np.full(4, np.nan)),  # no human labels
    ],
)
def test_awkward_inputs_give_nulls_with_notes_never_nan(judge, human) -> None:  # type: ignore[no-untyped-def]
    row = binary_agreement(judge, human, np.arange(judge.size))
    for key, value in row.items():
        if isinstance(value, float):
            assert np.isfinite(value), key  # a statistic is a number or None, never NaN
    nulls = [k for k, v in row.items() if v is None and not k.endswith(("_ci_low", "_ci_high"))]
    if [k for k in nulls if k != "notes"]:
        assert row["notes"], nulls  # every null statistic is explained
    if np.isfinite(human).any():
        assert row["gwet_ac1"] == pytest.approx(
            ts.gwet_ac1((judge >= 0.5).astype(int), (human >= 0.5).astype(int))
        )
    stats_row = drift_statistics(judge, judge[::-1], np.arange(judge.size), human)
    for key, value in stats_row.items():
        if isinstance(value, float):
            assert np.isfinite(value), key


def test_constant_scores_qwk_null_where_truescore_says_one() -> None:
    """Named difference: both raters one constant -> QWK is 0/0; truescore returns 1.0,
    we return null with a note (agreement cannot be told from chance)."""
    x = np.full(10, 0.5)
    assert ts.quadratic_weighted_kappa(x, x) == 1.0
    assert quadratic_weighted_kappa(x, x) is None
    row = binary_agreement(x, x, np.arange(10))
    assert row["qwk"] is None and "qwk" in str(row["notes"])
    assert row["gwet_ac1"] == pytest.approx(1.0)


def test_drift_mart_pairs_and_unmatched_pair() -> None:
    items = pd.DataFrame(
        {
            "judge": ["a"] * 4 + ["b"] * 4,
            "dimension": ["d1", "d1", "d2", "d2"] * 2,
            "prompt_id": ["p1", "p2", "p1", "p2"] * 2,
            "model": "m",
            "framing": "positive",
            "judge_score_norm": [0.0, 1.0, 0.5, 0.5, 0.0, 1.0, 1.0, 0.5],
            "human_score_norm": [0.0, 1.0, np.nan, np.nan, 0.0, 1.0, np.nan, np.nan],
        }
    )
    pairs = pd.DataFrame({"judge_before": ["a", "ghost"], "judge_after": ["b", "b"]})
    out = judge_drift_mart(items, pairs).set_index(["judge_before", "dimension"])
    assert set(out.index) == {("a", "d1"), ("a", "d2"), ("a", "all"), ("ghost", "all")}
    assert out.loc[("a", "d2"), "flip_rate"] == pytest.approx(0.5)
    assert out.loc[("a", "all"), "n_items"] == 4
    assert out.loc[("ghost", "all"), "n_items"] == 0
    assert not out.loc[("ghost", "all"), "drift_flag"]
    assert "no items" in out.loc[("ghost", "all"), "notes"]


def test_settings_from_config_defaults_and_errors() -> None:
    assert settings_from_config({}.get) == DriftSettings()
    got = settings_from_config({"ci_level": "0.95", "n_boot": "100", "pass_threshold": ""}.get)
    assert got.ci_level == 0.95 and got.n_boot == 100 and got.pass_threshold == 0.5
    with pytest.raises(ValueError, match="ci_level"):
        DriftSettings(ci_level=1.5)


def test_agreement_binary_mart_draws_the_bootstrap_once_per_prompt_count(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The B x G resample counts are drawn once per distinct number of prompts G (at
    10M ratings each draw is 500 x 139k counts), and each judge x dimension's row is
    the one binary_agreement gives alone, with its own draw."""
    import judge_bias.stats.binary_agreement as ba

    rng = np.random.default_rng(3)
    n = 600
    frame = pd.DataFrame(
        {
            "judge": np.repeat(["j1", "j2", "j3"], n // 3),
            "dimension": np.tile(["d1", "d2"], n // 2),
            "prompt_id": np.tile([f"p{i}" for i in range(50)], n // 50),
            "judge_score_norm": rng.integers(0, 5, n) / 4,
            "human_score_norm": rng.integers(0, 5, n) / 4,
            "n_rows": rng.integers(1, 4, n),
        }
    )
    frame = frame[~((frame["judge"] == "j3") & (frame["prompt_id"] < "p2"))]  # fewer prompts
    calls: list[int] = []
    real = ba.cluster_bootstrap_weights

    def counting(g: int, n_boot: int, seed: int) -> np.ndarray:
        calls.append(g)
        return real(g, n_boot, seed)

    monkeypatch.setattr(ba, "cluster_bootstrap_weights", counting)
    mart = ba.agreement_binary_mart(frame, n_boot=200)
    assert len(mart) == 3 * 3  # each judge: d1, d2, all
    assert sorted(set(calls)) == sorted(calls)  # one draw per G
    sizes = {len(set(g["prompt_id"])) for _, g in frame.groupby(["judge", "dimension"])}
    sizes |= {len(set(g["prompt_id"])) for _, g in frame.groupby("judge")}  # "all"
    assert sorted(calls) == sorted(sizes)
    monkeypatch.setattr(ba, "cluster_bootstrap_weights", real)
    for _, row in mart.iterrows():
        sub = frame if row["dimension"] == "all" else frame[frame["dimension"] == row["dimension"]]
        sub = sub[sub["judge"] == row["judge"]]
        rows = sub.loc[sub.index.repeat(sub["n_rows"])]
        alone = binary_agreement(
            rows["judge_score_norm"].to_numpy(),
            rows["human_score_norm"].to_numpy(),
            rows["prompt_id"].to_numpy(dtype=object),
            n_boot=200,
        )
        for key in ("gwet_ac1_ci_low", "gwet_ac1_ci_high", "qwk_ci_low", "qwk_ci_high"):
            assert row[key] == pytest.approx(alone[key], rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize(
    ("runs", "collation", "n_runs"),
    [
        (["1", "1"], None, None),  # one run: the pass is skipped, nothing kept
        (["1", "2"], None, 2),
        (["Run1", "run1"], "nocase", 2),  # case-only runs stay two (review21a)
        ([None, "1"], None, 2),  # a null run is a run of its own
    ],
)
def test_stability_items_gate_on_runs(runs, collation, n_runs) -> None:
    """int_stability_items skips its pass when the facts hold one run, telling runs
    apart by their hashes: under a nocase default collation too, as the duplicate
    check of the facts does; an item rated in two runs is kept with n_runs 2."""
    import duckdb

    from tests.sql_models import run_model

    con = duckdb.connect()
    if collation:
        con.execute(f"set default_collation = '{collation}'")
    fct = pd.DataFrame(
        {
            "judge": "j",
            "dimension": "d",
            "prompt_id": "p1",
            "model": "m",
            "framing": "positive",
            "run_id": runs,
            "judge_score_norm": [0.25, 0.75],
        }  # fmt: skip
    )
    if runs == ["1", "1"]:  # one run: two items rated once each
        fct["prompt_id"] = ["p1", "p2"]
    items = run_model(con, "int_stability_items", fct_judge_ratings=fct).df()
    assert items["n_runs"].tolist() == ([] if n_runs is None else [n_runs])
