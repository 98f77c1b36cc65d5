"""Logistic fits of the pairwise marts, with their failures reported (issue 29).

A logistic maximum-likelihood estimate exists exactly when the data are not
separated (Albert & Anderson 1984): there is no direction b != 0 with
x_i'b >= 0 for every judgment with y = 1 and x_i'b <= 0 for every one with
y = 0. Along such a direction the likelihood keeps rising as the coefficients
grow, so an optimiser stops wherever its tolerance says and the "estimate" (and
its standard error) is an artefact of the stopping rule. With complete
separation every judgment lies strictly on its side; with quasi-complete
separation only some do (their fitted probabilities go to 0 or 1) and the rest
lie on the boundary x_i'b = 0, and a fit typically stops with moderate, even
plausible-looking, coefficients.

``separation`` decides this by linear programming, as R's ``detectseparation``
does (Konis 2007): maximise sum_j s_j x_j'b over the distinct rows j of x
holding one outcome only (s = +1 for y = 1, -1 for y = 0), subject to
s_j x_j'b >= 0 for every row (a row holding both outcomes gets both
constraints, so x_j'b = 0) and -1 <= b <= 1. A positive optimum is a
separating direction; the rows with s_j x_j'b > 1e-6 are the judgments it
predicts with probability 0 or 1. The program is rerun with the objective over
the rows not yet found until it finds none: the feasible directions form a
convex cone, so the union is the largest such set, and its size is the count in
the note. The regressors here are bounded (codes in {-1, 0, 1}, tanh features
in [-1, 1]), so 1e-6 is far above HiGHS's 1e-7 feasibility tolerance and far
below the margins a real direction gives.

``fit`` runs the separation check, then the optimiser (statsmodels), and
returns the coefficients and the prompt-clustered covariance, or a note saying
why there is no estimate: too few rows, a term that does not vary, separation
(with the terms along the direction and the count), or an optimiser that did
not converge. Callers put the note in the mart's ``notes`` and leave the
estimate null.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linprog
from statsmodels.discrete.discrete_model import Logit
from statsmodels.genmod import families
from statsmodels.genmod.generalized_linear_model import GLM

from judge_bias.errors import NumericalError
from judge_bias.stats.fit_warnings import ignore_fit_warnings

# margin s_j x_j'b above which a row counts as separated (module docstring)
_MARGIN = 1e-6


@dataclass(frozen=True)
class Separation:
    """A separating direction: the judgments it predicts with probability 0 or 1
    (``n_separated`` of ``n_judgments``) and the columns it moves along."""

    n_separated: int
    n_judgments: int
    columns: tuple[int, ...]

    @property
    def complete(self) -> bool:
        return self.n_separated == self.n_judgments


def separation(x: np.ndarray, y: np.ndarray) -> Separation | None:
    """The largest separation of the 0/1 outcomes ``y`` by the columns of ``x``
    (module docstring), or None when the maximum-likelihood estimate exists."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError(f"x must be n x k and y of length n; got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all((y == 0) | (y == 1))):
        raise ValueError("separation needs finite regressors and 0/1 outcomes")
    distinct, index = np.unique(x, axis=0, return_inverse=True)
    index = index.ravel()
    n_one = np.bincount(index, weights=y, minlength=len(distinct))
    n_all = np.bincount(index, minlength=len(distinct)).astype(float)
    has_one, has_zero = n_one > 0, n_one < n_all
    both = distinct[has_one & has_zero]
    if len(both) and np.linalg.matrix_rank(both) == x.shape[1]:
        return None  # x_j'b = 0 on rows spanning every direction: b = 0
    # s_j x_j'b >= 0, one constraint per outcome present in a row; in a fixed random
    # order: HiGHS took 30 times longer on the sorted rows np.unique gives (200k rows)
    signed = np.vstack([distinct[has_one], -distinct[has_zero]])
    signed = signed[np.random.default_rng(0).permutation(len(signed))]
    single = np.flatnonzero(has_one ^ has_zero)
    s_single = np.where(has_one[single], 1.0, -1.0)[:, None] * distinct[single]
    separated = np.zeros(len(single), dtype=bool)
    columns = np.zeros(x.shape[1], dtype=bool)
    # each program finds a direction that separates rows not yet found; their sum is
    # a direction too (the cone is convex), so this ends at the largest set
    while not separated.all():
        res = linprog(
            -s_single[~separated].sum(axis=0),
            A_ub=-signed,
            b_ub=np.zeros(len(signed)),
            bounds=[(-1.0, 1.0)] * x.shape[1],
            method="highs",
        )
        if res.status != 0:
            raise NumericalError(f"the separation check's linear program failed: {res.message}")
        new = (s_single @ res.x > _MARGIN) & ~separated
        if not new.any():
            break
        separated |= new
        columns |= np.abs(res.x) > _MARGIN
    n_separated = int(n_all[single][separated].sum())
    if n_separated == 0:
        return None
    return Separation(n_separated, len(y), tuple(int(c) for c in np.flatnonzero(columns)))


def clustered_covariance(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, params: np.ndarray
) -> np.ndarray:
    """The prompt-clustered sandwich at ``params``, with statsmodels' small-sample
    factor G/(G-1) * (N-1)/(N-K) (its cov_type='cluster')."""
    mu = 1.0 / (1.0 + np.exp(-(x @ params)))
    bread = np.linalg.pinv((x * (mu * (1.0 - mu))[:, None]).T @ x)
    codes = pd.factorize(pd.Series(groups))[0]
    scores = np.column_stack(
        [np.bincount(codes, weights=(y - mu) * x[:, k]) for k in range(x.shape[1])]
    )
    n_groups, n_obs, k = scores.shape[0], len(y), x.shape[1]
    cov = bread @ (scores.T @ scores) @ bread
    if n_groups > 1:
        cov *= n_groups / (n_groups - 1.0) * (n_obs - 1.0) / (n_obs - k)
    return cov


def maximum_likelihood(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
    """statsmodels' logistic fit of y on x and whether its optimiser converged; on
    distinct rows of x with successes of trials (the same likelihood) when that
    halves the rows, else Logit on the rows."""
    distinct, index = np.unique(x, axis=0, return_inverse=True)
    index = index.ravel()
    # separation is checked before, convergence read from the results: statsmodels'
    # warnings of them ignored by a filter installed once, numpy's floating-point ones
    # (overflow in exp) for this thread only (catch_warnings swapped the process's
    # filters: dbt's other Python model lost its warnings while this one fitted)
    ignore_fit_warnings()
    with np.errstate(all="ignore"):
        if 2 * len(distinct) <= len(x):
            trials = np.bincount(index).astype(float)
            successes = np.bincount(index, weights=y)
            fit = GLM(
                np.column_stack([successes, trials - successes]),
                distinct,
                family=families.Binomial(),
            ).fit()
            converged = bool(fit.converged)
        else:
            fit = Logit(y, x).fit(disp=0)
            converged = bool(fit.mle_retvals["converged"])
    return np.asarray(fit.params, dtype=float), converged


def separation_note(sep: Separation, names: list[str]) -> str:
    """The mart note of a separated fit: the kind, the terms along the direction and
    the count of judgments predicted with probability 0 or 1."""
    kind = "complete" if sep.complete else "quasi-complete"
    terms = ", ".join(names[c] for c in sep.columns)
    return (
        f"not estimable ({kind} separation along {terms}: "
        f"{sep.n_separated} of {sep.n_judgments} judgments predicted with probability 0 or 1)"
    )


def fit(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str]
) -> tuple[np.ndarray, np.ndarray] | str:
    """Coefficients and clustered covariance of the logistic fit of y (0/1) on the
    columns of x (named ``names`` in notes), or the note saying why there is none."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(y) < x.shape[1] + 1 or y.min() == y.max():
        return "not estimable (too few rows or one outcome only)"
    if np.linalg.matrix_rank(x) < x.shape[1]:
        return "not estimable (a term does not vary)"
    sep = separation(x, y)
    if sep is not None:
        return separation_note(sep, names)
    params, converged = maximum_likelihood(x, y)
    if not converged or not np.all(np.isfinite(params)):
        return "not estimable (the optimiser did not converge)"
    cov = clustered_covariance(x, y, groups, params)
    if not np.all(np.isfinite(np.diag(cov))):
        return "not estimable (the clustered covariance is not finite)"
    return params, cov
