"""How many human labels a given precision needs (half-width h at confidence level
1 - alpha, z = Phi^-1(1 - alpha / 2)), on scores normalised to [0, 1].

- **Human-only mean** (the classical estimate, ``ppi_model_scores``' human-only
  column): var = sd_Y^2 / n, so n = ceil((z sd_Y / h)^2).
- **PPI++ mean** (``judge_bias.ppi.estimator``, ppi_py's ``ppi_mean_ci`` with tuned
  lambda): with n labelled units out of n_total judged ones (N = n_total - n
  unlabelled), population moments var_Y, var_f (the judge's score), cov(Y, f):

      lambda(n) = clip(cov / (var_f (1 + n / N)), 0, 1)
      var(n)    = (var_Y - 2 lambda cov + lambda^2 var_f) / n + lambda^2 var_f / N

  and n is the smallest with z sqrt(var(n)) <= h (a search over n, as
  truescore.power.required_gold_labels does for a binary judge; the same
  moments give the same n, which tests/test_doctor_budget.py checks). For large
  N, var_Y - cov^2 / var_f = var_Y (1 - rho^2): the judge's residual variance
  replaces the human variance.
- **Bias-regression self term**: gamma_j is the coefficient of a 0/1 indicator
  (judge j rates its own model) in an OLS fit with residual sd sigma_e. With
  share p of j's rows on its own model and the indicator nearly uncorrelated
  with the other regressors, se(gamma_j) = sigma_e / sqrt(n p (1 - p)) (exact for
  an intercept and the indicator alone, the two-group mean difference), so
  n = ceil((z sigma_e / h)^2 / (p (1 - p))) rows of j with a human reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats


def z_value(ci_level: float) -> float:
    """Phi^-1(1 - alpha / 2) for a two-sided interval at ``ci_level``."""
    return float(stats.norm.ppf(0.5 + ci_level / 2))


def human_only_n(sd: float, half_width: float, ci_level: float) -> int:
    """Labels for the human-only mean: ceil((z sd / h)^2)."""
    return max(1, math.ceil((z_value(ci_level) * sd / half_width) ** 2))


def ppi_half_width(
    n: int, n_total: int, var_y: float, var_f: float, cov: float, ci_level: float
) -> tuple[float, float]:
    """PPI++ half-width and tuned lambda with n of n_total units labelled."""
    unlabelled = n_total - n
    if unlabelled <= 0 or n < 2:
        return math.inf, 0.0
    lam = 0.0 if var_f <= 0 else min(1.0, max(0.0, cov / (var_f * (1 + n / unlabelled))))
    variance = (var_y - 2 * lam * cov + lam**2 * var_f) / n + lam**2 * var_f / unlabelled
    return z_value(ci_level) * math.sqrt(max(variance, 0.0)), lam


@dataclass(frozen=True)
class PpiNeed:
    """The PPI label need: n (None when n_total cannot reach h) and the best half-width."""

    n: int | None
    best_half_width: float
    lam: float


def ppi_required_n(
    n_total: int, var_y: float, var_f: float, cov: float, half_width: float, ci_level: float
) -> PpiNeed:
    """The smallest n with PPI++ half-width <= h (None when no n < n_total does)."""
    best, best_lam = math.inf, 0.0
    for n in range(2, n_total):
        half, lam = ppi_half_width(n, n_total, var_y, var_f, cov, ci_level)
        if half < best:
            best, best_lam = half, lam
        if half <= half_width:
            return PpiNeed(n, half, lam)
    return PpiNeed(None, best, best_lam)


def regression_self_n(sigma_e: float, p_self: float, half_width: float, ci_level: float) -> int:
    """Rows with a human reference for the self-bias term: (z sigma_e / h)^2 / (p (1 - p))."""
    if not 0 < p_self < 1:
        raise ValueError(f"the share of self rows must be in (0, 1); got {p_self}")
    z = z_value(ci_level)
    return max(1, math.ceil((z * sigma_e / half_width) ** 2 / (p_self * (1 - p_self))))
