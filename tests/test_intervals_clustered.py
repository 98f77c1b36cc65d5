"""Prompt-clustered intervals (issue 14, defect 5): the CR1 factor G / (G - 1)
against statsmodels, one cluster, and the equal-opportunity interval when its
two recalls share prompts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from judge_bias.stats.intervals import (
    cluster_correlation,
    clustered_rates,
    newcombe_difference,
    wilson,
)


def test_design_effect_uses_statsmodels_cluster_variance() -> None:
    """n_eff = n * var_srs / var_c, var_c = statsmodels' cluster-robust variance of
    the mean (G / (G - 1) correction) and var_srs = p (1 - p) / (n - 1)."""
    rng = np.random.default_rng(2)
    prompt = np.repeat(np.arange(25), rng.integers(1, 6, 25))
    y = (rng.random(prompt.size) < 0.3 + 0.4 * (prompt % 3 == 0)).astype(float)
    sums = pd.DataFrame({"g": "a", "prompt": prompt, "y": y, "d": 1.0})
    got = clustered_rates(sums, ["g"], "prompt").loc["a"]
    ref = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": prompt})
    n, p = y.size, y.mean()
    var_c = float(ref.bse[0] ** 2)
    expected = min(n, n * p * (1 - p) / (n - 1) / var_c)
    assert got["n_eff"] == pytest.approx(expected, rel=1e-10)
    low, high = wilson(np.array(p), np.array(expected))
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((float(low), float(high)))


def test_one_cluster_counts_as_one_observation() -> None:
    sums = pd.DataFrame({"g": "a", "prompt": [7] * 40, "y": [1.0] * 10 + [0.0] * 30, "d": 1.0})
    got = clustered_rates(sums, ["g"], "prompt").loc["a"]
    assert got["n"] == 40 and got["n_eff"] == 1.0


def test_cluster_correlation_equals_a_loop_and_is_zero_without_shared_prompts() -> None:
    rng = np.random.default_rng(5)
    a = pd.DataFrame({"g": "x", "prompt": rng.integers(0, 15, 60), "y": rng.random(60), "d": 1.0})
    b = pd.DataFrame({"g": "x", "prompt": rng.integers(0, 15, 50), "y": rng.random(50), "d": 1.0})
    pa, pb = a["y"].sum() / 60, b["y"].sum() / 50
    u = a.groupby("prompt").apply(lambda c: (c["y"].sum() - pa * len(c)) / 60)
    v = b.groupby("prompt").apply(lambda c: (c["y"].sum() - pb * len(c)) / 50)
    both = pd.concat([u.rename("u"), v.rename("v")], axis=1).fillna(0)
    expected = (both["u"] * both["v"]).sum() / np.sqrt(
        (both["u"] ** 2).sum() * (both["v"] ** 2).sum()
    )
    got = cluster_correlation(a, b, ["g"], "prompt").loc["x"]
    assert got == pytest.approx(expected, rel=1e-12)
    disjoint = b.assign(prompt=b["prompt"] + 100)
    assert cluster_correlation(a, disjoint, ["g"], "prompt").loc["x"] == 0.0


def _eo_replicate(rng: np.random.Generator, n_prompts: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per prompt a latent pull u towards the judge's own answer, shared by its two
    judgments: one where humans prefer the own answer (picked own: recall_own) and
    one where they prefer the other (picked other: recall_other)."""
    u = rng.normal(0, 3.0, n_prompts)
    own = rng.random(n_prompts) < 1 / (1 + np.exp(-(0.5 + u)))
    other = rng.random(n_prompts) < 1 / (1 + np.exp(-(0.5 - u)))
    prompts = np.arange(n_prompts)
    a = pd.DataFrame({"g": "j", "prompt": prompts, "y": own.astype(float), "d": 1.0})
    b = pd.DataFrame({"g": "j", "prompt": prompts, "y": other.astype(float), "d": 1.0})
    return a, b


def test_eo_interval_covers_when_the_recalls_share_prompts() -> None:
    """With a shared prompt effect the two recalls are negatively correlated, so
    their difference varies more than independence assumes: the independent
    Newcombe interval under-covers, the correlated form does not. The true
    difference is 0 by symmetry (u is symmetric about 0)."""
    rng = np.random.default_rng(8)
    reps, covered, naive = 400, 0, 0
    for _ in range(reps):
        a, b = _eo_replicate(rng, 150)
        ra, rb = (clustered_rates(x, ["g"], "prompt").loc["j"] for x in (a, b))
        args = (ra["rate"], ra["ci_low"], ra["ci_high"], rb["rate"], rb["ci_low"], rb["ci_high"])
        phi = cluster_correlation(a, b, ["g"], "prompt").loc["j"]
        assert phi < 0
        low, high = newcombe_difference(*args, phi)
        covered += low <= 0 <= high
        low0, high0 = newcombe_difference(*args)
        naive += low0 <= 0 <= high0
    assert 0.92 <= covered / reps <= 0.98, covered / reps
    assert naive / reps < 0.90, naive / reps


def test_self_vs_peer_t_test_is_the_paired_t_test_with_one_item_per_prompt() -> None:
    from scipy import stats

    from judge_bias.agreement.self_vs_peer import _paired

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.6, 0.1, 40), rng.normal(0.55, 0.1, 40)
    mean, t, p, low, high = _paired(a, b, np.arange(40))
    ref = stats.ttest_rel(a, b)
    assert (t, p) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-10)
    ci = ref.confidence_interval(0.95)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_self_vs_peer_interval_covers_with_correlated_dimensions() -> None:
    """Three dimensions per prompt share a prompt effect: the clustered t interval
    covers the true mean difference at about 95%, the naive paired t-test less."""
    from scipy import stats

    from judge_bias.agreement.self_vs_peer import _paired

    rng = np.random.default_rng(4)
    reps, covered, naive = 600, 0, 0
    for _ in range(reps):
        prompts = np.repeat(np.arange(30), 3)
        d = 0.05 + rng.normal(0, 0.1, 30)[prompts] + rng.normal(0, 0.03, prompts.size)
        _, _, _, low, high = _paired(d, np.zeros_like(d), prompts)
        covered += low <= 0.05 <= high
        ci = stats.ttest_rel(d, np.zeros_like(d)).confidence_interval(0.95)
        naive += ci.low <= 0.05 <= ci.high
    assert 0.92 <= covered / reps <= 0.98, covered / reps
    assert naive / reps < 0.85, naive / reps
