"""The reference route's logistic fits: statsmodels on the rows, sharing no code
with the marts' route (``judge_bias.pairwise.logistic`` and ``fits``).

The coefficients and their prompt-clustered covariance are statsmodels'
``Logit(y, x).fit(cov_type='cluster')`` on the judgments themselves (the marts'
route fits a binomial GLM on distinct rows and computes the sandwich itself).

Separation is decided by one linear program of another form than the marts'
(which maximises along one direction, rerun until no new row is found): with t_j
in [0, 1] per distinct regressor row j holding one outcome only, maximise sum_j t_j
subject to t_j <= s_j x_j'b, s_i x_i'b >= 0 for every row (both signs for a row
holding both outcomes) and |b_k| <= 1e6. Any row some separating direction
predicts with probability 0 or 1 gets t_j = 1 at the optimum (the directions form
a convex cone, so a sum of them, scaled, reaches every such row with margin 1),
so the rows with t_j > 1/2 are the largest separated set; the terms along the
direction are those with |b_k| > 1e-6.
"""

from __future__ import annotations

import warnings

import numpy as np
import statsmodels.api as sm
from scipy import sparse
from scipy.optimize import linprog
from scipy.stats import norm

from judge_bias.errors import NumericalError

Z = float(norm.ppf(0.975))
_SCALE = 1e6  # bound of |b_k|: a separated row needs a margin of 1e-6 per unit of b


def separated_rows(x: np.ndarray, y: np.ndarray) -> tuple[int, list[int]]:
    """(judgments predicted with probability 0 or 1, columns along the direction);
    (0, []) when the maximum-likelihood estimate exists."""
    rows, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    ones = np.bincount(inverse, weights=y, minlength=len(rows))
    pos, neg = ones > 0, ones < counts
    single = pos ^ neg
    sign = np.where(pos, 1.0, -1.0)
    k, m = x.shape[1], int(single.sum())
    # variables: b (k), t (m); minimise -sum t
    cone = np.vstack([-rows[pos], rows[neg]])  # -(s x'b) <= 0
    a_cone = sparse.hstack([sparse.csr_matrix(cone), sparse.csr_matrix((len(cone), m))])
    lifted = -(sign[single][:, None] * rows[single])  # t - s x'b <= 0
    a_lift = sparse.hstack([sparse.csr_matrix(lifted), sparse.identity(m)])
    res = linprog(
        np.concatenate([np.zeros(k), -np.ones(m)]),
        A_ub=sparse.vstack([a_cone, a_lift]).tocsr(),
        b_ub=np.zeros(len(cone) + m),
        bounds=[(-_SCALE, _SCALE)] * k + [(0.0, 1.0)] * m,
        method="highs",
    )
    if res.status != 0:
        raise NumericalError(f"separation program failed: {res.message}")
    t = res.x[k:]
    n = int(counts[single][t > 0.5].sum())
    if n == 0:
        return 0, []
    return n, [int(c) for c in np.flatnonzero(np.abs(res.x[:k]) > 1e-6)]


def logit_terms(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str], labels: list[str]
) -> tuple[dict[str, float], str | None]:
    """``{name, name_ci_low, name_ci_high}`` per column of x (Wald 95%, prompt-clustered
    statsmodels Logit), or no terms and the reason there is no estimate; ``labels``
    name the columns in that reason."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if y.size <= x.shape[1] or np.all(y == y[0]):
        return {}, "not estimable (too few rows or one outcome only)"
    if np.linalg.matrix_rank(x) < x.shape[1]:
        return {}, "not estimable (a term does not vary)"
    n, along = separated_rows(x, y)
    if n:
        kind = "complete" if n == y.size else "quasi-complete"
        return {}, (
            f"not estimable ({kind} separation along {', '.join(labels[c] for c in along)}: "
            f"{n} of {y.size} judgments predicted with probability 0 or 1)"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.Logit(y, x).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    params, se = np.asarray(res.params), np.asarray(res.bse)
    if not res.mle_retvals["converged"] or not np.isfinite(params).all():
        return {}, "not estimable (the optimiser did not converge)"
    if not np.isfinite(se).all():
        return {}, "not estimable (the clustered covariance is not finite)"
    out: dict[str, float] = {}
    for i, name in enumerate(names):
        out[name] = params[i]
        out[name + "_ci_low"] = params[i] - Z * se[i]
        out[name + "_ci_high"] = params[i] + Z * se[i]
    return out, None
