"""Ordered-logit robustness fit per dimension on the raw Likert scores.

Same terms as the main regression (judge, judge x human score, self, family)
with statsmodels' OrderedModel; a dimension with two levels gets a binary
logit instead. The thresholds take the place of the intercept, so judge
offsets are relative to the first judge (alphabetically). Standard errors
are the model-based ones (inverse Hessian).

The design is discrete (judges, indicators, a human score with few distinct
values), so the fit runs on the distinct (score, design row) combinations
with frequency weights: the same likelihood, exactly, on far fewer rows.

Convergence is judged at the optimum the optimiser returns, not by its flag
alone (BFGS stops "without convergence" on a loss of precision at a point
that is the optimum for every practical purpose): the remaining Newton step,
(inverse Hessian) x (gradient), measured in standard errors, must be below
``NEWTON_STEP_TOL``. The note says which case it is.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from judge_bias.bias.regression import (
    ESTIMATE_COLUMNS,
    MIN_TERM_SUPPORT,
    FitOutput,
    dense_design,
    support_notes,
    wald_table,
)
from judge_bias.bias.sufficient import design_size
from judge_bias.limits import Budget
from judge_bias.stats.fit_warnings import ignore_fit_warnings

# A fit is converged when one more Newton step would move no parameter by more
# than this many of its standard errors.
NEWTON_STEP_TOL = 1e-3


@cache
def weighted_ordered_model() -> Any:
    """The class WeightedOrderedModel, made on first use: statsmodels takes about
    1 CPU s to import, and the validation imports this package for its
    analysis names only (issue 34)."""
    from scipy.special import expit
    from scipy.stats import logistic
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    class WeightedOrderedModel(OrderedModel):
        """OrderedModel whose log-likelihood counts each row ``freq_weights`` times."""

        def __init__(self, endog, exog, freq_weights: np.ndarray, **kwargs) -> None:
            super().__init__(endog, exog, **kwargs)
            self.freq_weights = np.asarray(freq_weights, dtype=float)

        def loglike(self, params: np.ndarray) -> float:
            return float(np.sum(self.freq_weights * self.loglikeobs(params)))

        def cdf(self, x: np.ndarray) -> np.ndarray:
            """scipy.stats.logistic.cdf without scipy's per-call argument checks
            (it returns expit too, 0 and 1 at -inf and inf, nan at nan: the same
            floats); twice per log-likelihood, ~6,500 of which per demo fit
            (int_bias_results on the demo: 5.8 -> 4.1 CPU s)."""
            if self.distr is logistic:
                return expit(np.asarray(x, dtype=np.float64))
            return super().cdf(x)

    return WeightedOrderedModel


def __getattr__(name: str) -> Any:
    if name == "WeightedOrderedModel":
        return weighted_ordered_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compress(
    y: np.ndarray, X: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (y, X) rows and how often each occurs (summing ``weights`` if given)."""
    rows, inverse = np.unique(np.column_stack([y, X]), axis=0, return_inverse=True)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    return rows[:, 0], rows[:, 1:], np.bincount(inverse.ravel(), weights=w)


def ordinal_design(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list, list[str]]:
    """(endog codes, exog, terms, notes): the main design minus the first judge offset.

    ``df`` holds rows, or distinct rows with their count in ``n_rows``."""
    frame = df.assign(rating=df["judge_score"], length_feature=np.nan)
    X, terms, notes = dense_design(frame, dimension_effects=False)
    first = next(i for i, t in enumerate(terms) if t.term_type == "judge_offset")
    keep = [i for i in range(len(terms)) if i != first]
    notes = [*notes, f"judge offsets relative to {terms[first].judge}"]
    y = df["judge_score"].to_numpy(dtype=float)
    return y, X[:, keep], [terms[i] for i in keep], notes


def newton_step_in_se(score: np.ndarray, cov: np.ndarray) -> float:
    """The largest remaining Newton step cov @ score, in standard errors
    (``score``: gradient of the log-likelihood; ``cov``: inverse of its negative
    Hessian, the model-based covariance)."""
    step = cov @ score
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(step) / se
    return float(np.nanmax(ratio)) if np.isfinite(ratio).any() else float("inf")


def convergence_note(flag: bool, step_se: float) -> str | None:
    """The note on convergence, from the optimiser's flag and the remaining step."""
    if step_se < NEWTON_STEP_TOL:
        if flag:
            return None
        return (
            "the optimiser stopped without its convergence flag (loss of precision), but "
            f"the remaining Newton step is {step_se:.1e} standard errors: converged"
        )
    return f"did not converge: the remaining Newton step is {step_se:.2g} standard errors"


def _cov(res) -> np.ndarray:
    """The fit's covariance, NaN when statsmodels has none (a singular Hessian)."""
    try:
        return np.asarray(res.cov_params(), dtype=float)
    except ValueError:
        k = len(res.params)
        return np.full((k, k), np.nan)


def fit_ordinal(
    df: pd.DataFrame,
    analysis: str,
    slice_: str,
    ci_level: float,
    budget: Budget | None = None,
    min_support: int = MIN_TERM_SUPPORT,
) -> FitOutput:
    """Ordered (or binary) logit of the raw judge score on rows, or on distinct rows
    with their counts in ``n_rows`` (as int_bias_ordinal_counts gives them). Over the
    ``budget``'s parameter cap or memory it is skipped with a note, unfitted."""
    weights = df["n_rows"].to_numpy(dtype=float) if "n_rows" in df else None
    n_obs = int(weights.sum()) if weights is not None else len(df)
    fit: dict[str, object] = {
        "analysis": analysis,
        "slice": slice_,
        "n_obs": n_obs,
        "r_squared": None,
        "se_type": "model",
        "ci_level": ci_level,
    }
    empty = pd.DataFrame(columns=ESTIMATE_COLUMNS)
    levels = np.sort(df["judge_score"].dropna().unique())
    if len(levels) < 2 or df["judge"].nunique() < 1:
        msg = f"no estimates: {len(levels)} distinct judge score(s)"
        return FitOutput(empty, fit | {"model_type": "none", "n_params": 0, "notes": msg})
    model_type = "logit" if len(levels) == 2 else "ordered_logit"
    n_terms = design_size(df.assign(dimension=""), False, False)[1] - 1  # first offset out
    skipped = (budget or Budget()).ordinal(len(df), n_terms, len(levels))
    if skipped:
        n_params = n_terms + len(levels) - 1
        return FitOutput(
            empty, fit | {"model_type": "none", "n_params": n_params, "notes": skipped}
        )
    y, X, terms, notes = ordinal_design(df)
    from statsmodels.genmod import families
    from statsmodels.genmod.generalized_linear_model import GLM

    # convergence and a singular Hessian are read from the results into the notes:
    # statsmodels' warnings of them ignored by a filter installed once, numpy's
    # floating-point ones for this thread only (never catch_warnings: it swapped the
    # filters of the process, and dbt's other Python model lost its warnings)
    ignore_fit_warnings()
    with np.errstate(all="ignore"):
        yc, Xc, freq = compress(y, X, weights)
        if len(levels) == 2:
            exog = np.column_stack([np.ones(len(yc)), Xc])
            res = GLM(
                (yc == levels[1]).astype(float),
                exog,
                family=families.Binomial(),
                freq_weights=freq,
            ).fit()
            params, cov = res.params[1:], _cov(res)[1:, 1:]
        else:
            endog = pd.Series(pd.Categorical(yc, categories=levels, ordered=True))
            res = weighted_ordered_model()(endog, Xc, freq, distr="logit").fit(
                method="bfgs", disp=False, maxiter=20000, gtol=1e-8
            )
            k = X.shape[1]
            params, cov = np.asarray(res.params)[:k], _cov(res)[:k, :k]
    retvals = getattr(res, "mle_retvals", None) or {"converged": getattr(res, "converged", True)}
    n_params = len(res.params)
    if not np.isfinite(cov).all():
        if not retvals.get("converged", True):
            notes.append("the optimiser did not converge")
        notes.append(
            "no estimates: the Hessian is not invertible (a term at the edge of its range, "
            "e.g. a self term whose few ratings all take one level)"
        )
        return FitOutput(
            empty, fit | {"model_type": model_type, "n_params": n_params, "notes": "; ".join(notes)}
        )
    full = np.asarray(res.params)
    step = newton_step_in_se(np.asarray(res.model.score(full)), _cov(res))
    note = convergence_note(bool(retvals.get("converged", True)), step)
    if note:
        notes.append(note)
    support = np.rint(((Xc != 0) * freq[:, None]).sum(axis=0)).astype("int64")
    table = wald_table(terms, np.asarray(params), np.asarray(cov), ci_level, support, min_support)
    notes += support_notes(table, min_support)
    table.insert(0, "slice", slice_)
    table.insert(0, "analysis", analysis)
    table["se_type"] = "model"
    table["n_obs"] = n_obs
    fit |= {"model_type": model_type, "n_params": n_params, "notes": "; ".join(notes)}
    return FitOutput(table[ESTIMATE_COLUMNS], fit)
