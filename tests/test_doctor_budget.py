"""The doctor's label-budget formulas against independent references: truescore's
required_gold_labels (PPI for a binary judge, and its human-only count),
statsmodels' OLS standard error (the self-bias term), and a simulation of the PPI
estimator's spread at the n the formula gives. New module: these fail on the old
code (no judge_bias.doctor)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm

from judge_bias.doctor import budget

truescore_power = pytest.importorskip("truescore.power", reason="truescore is in the dev lock")

CASES = [  # n_total, half-width, true rate, sensitivity, specificity, alpha
    (2000, 0.03, 0.5, 0.9, 0.9, 0.05),
    (500, 0.05, 0.3, 0.8, 0.95, 0.10),
    (10000, 0.02, 0.7, 0.95, 0.7, 0.05),
    (150, 0.02, 0.5, 0.9, 0.9, 0.05),  # out of reach
]


def _binary_moments(p: float, sens: float, spec: float) -> tuple[float, float, float]:
    q = p * sens + (1 - p) * (1 - spec)
    return p * (1 - p), q * (1 - q), p * sens - p * q


@pytest.mark.parametrize("case", CASES)
def test_ppi_need_matches_truescore(case: tuple) -> None:
    n_total, h, p, sens, spec, alpha = case
    ref = truescore_power.required_gold_labels(
        n_total, target_half_width=h, true_rate=p, sensitivity=sens, specificity=spec,
        alpha=alpha,
    )  # fmt: skip
    var_y, var_f, cov = _binary_moments(p, sens, spec)
    need = budget.ppi_required_n(n_total, var_y, var_f, cov, h, 1 - alpha)
    if ref.feasible:
        assert need.n == ref.required_gold
        assert need.best_half_width == pytest.approx(ref.achieved_half_width, rel=1e-12)
        assert need.lam == pytest.approx(ref.lambda_used, rel=1e-12)
    else:
        assert need.n is None
        assert need.best_half_width == pytest.approx(ref.achieved_half_width, rel=1e-12)
    assert budget.human_only_n(math.sqrt(var_y), h, 1 - alpha) == ref.gold_only_required


def test_self_term_standard_error_is_statsmodels_ols() -> None:
    """se(gamma) = sigma_hat / sqrt(n p (1 - p)) for an intercept and a 0/1 indicator."""
    rng = np.random.default_rng(7)
    for n, p in ((400, 0.11), (1000, 0.5), (250, 0.3)):
        d = (np.arange(n) < round(n * p)).astype(float)
        y = 0.6 + 0.05 * d + rng.normal(0, 0.2, n)
        fit = sm.OLS(y, sm.add_constant(d)).fit()
        share = d.mean()
        sigma = math.sqrt(fit.ssr / (n - 2))
        assert fit.bse[1] == pytest.approx(sigma / math.sqrt(n * share * (1 - share)), rel=1e-10)


def test_self_term_n_is_the_smallest_that_reaches_the_half_width() -> None:
    z = budget.z_value(0.95)
    for sigma, p, h in ((0.2, 0.11, 0.05), (0.1, 0.5, 0.02), (0.3, 0.25, 0.1)):
        n = budget.regression_self_n(sigma, p, h, 0.95)
        assert (
            z * sigma / math.sqrt(n * p * (1 - p))
            <= h
            < z * sigma / math.sqrt((n - 1) * p * (1 - p))
        )
    with pytest.raises(ValueError, match="share of self rows"):
        budget.regression_self_n(0.2, 0.0, 0.05, 0.95)


def test_ppi_spread_at_the_planned_n_is_the_half_width() -> None:
    """Simulate the PPI mean (lambda from the plan) at the planned n: z times the
    estimator's standard deviation over 4,000 replications is within 5% of h."""
    rng = np.random.default_rng(11)
    n_total, h, p, sens, spec = 3000, 0.03, 0.4, 0.85, 0.9
    var_y, var_f, cov = _binary_moments(p, sens, spec)
    need = budget.ppi_required_n(n_total, var_y, var_f, cov, h, 0.95)
    assert need.n is not None
    n, lam = need.n, need.lam
    estimates = []
    for _ in range(4000):
        y = rng.random(n_total) < p
        f = np.where(y, rng.random(n_total) < sens, rng.random(n_total) >= spec)
        yl, fl, fu = y[:n], f[:n], f[n:]
        estimates.append(yl.mean() + lam * (fu.mean() - fl.mean()))
    spread = budget.z_value(0.95) * np.std(estimates, ddof=1)
    assert spread == pytest.approx(h, rel=0.05)
