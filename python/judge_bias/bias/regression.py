"""Self- and family-bias regressions (Play Favorites, Spiliopoulou et al. 2025).

The main specification is, in the authors' formula terms,

    rating ~ judge + gt:judge + same_judge + same_family + dimension - 1

with ``same_judge`` the judge's name on rows where judge == model (else the
baseline "0") and ``same_family`` the judge's family on rows where the
families match and judge != model (else "0"). The fit runs on sufficient
statistics aggregated by the database (judge_bias.bias.sufficient: one column per
identifiable term, named and typed; OLS with heteroskedasticity-robust HC0,
HC1, HC3 or prompt-clustered standard errors) and this module labels it with
Wald intervals. statsmodels' formula fit is the reference it is tested against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from judge_bias.bias.sufficient import (
    COUNT,
    CellDesign,
    Term,
    cell_design,
    collinear_note,
    design_size,
    fit_stats,
    has_moments,
    independent_columns,
    n_rows,
    stats_from_rows,
)
from judge_bias.limits import FLOAT, Budget

SE_TYPES = ("HC0", "HC1", "HC3", "cluster")
TERM_TYPES = (
    "self", "family", "judge_offset", "judge_slope", "judge_spline", "dimension", "length",
)  # fmt: skip
# A fit needs this many residual degrees of freedom (rows - parameters) or it
# gives no estimates: robust variances from a handful of residuals are noise.
MIN_RESIDUAL_DF = 10
# A term backed by fewer ratings than this (dbt var min_term_support) is never
# marked significant: with one self rating left, HC0 gives that rating leverage
# 1, a zero residual and a standard error that is pure artefact.
MIN_TERM_SUPPORT = 30
BASELINE = "0"
ESTIMATE_COLUMNS = [
    "analysis",
    "slice",
    "term",
    "term_type",
    "judge",
    "family",
    "dimension",
    "estimate",
    "std_error",
    "z",
    "p_value",
    "ci_low",
    "ci_high",
    "ci_level",
    "significant",
    "se_type",
    "n_obs",
    "n_support",
]
FIT_COLUMNS = [
    "analysis",
    "slice",
    "model_type",
    "n_obs",
    "n_params",
    "r_squared",
    "se_type",
    "ci_level",
    "notes",
]


@dataclass(frozen=True)
class Spec:
    """Which terms enter the regression."""

    dimension_effects: bool = True
    length: bool = False


def dense_design(
    frame: pd.DataFrame, dimension_effects: bool = False, length: bool = False
) -> tuple[np.ndarray, list[Term], list[str]]:
    """The n x p design of a (small) row frame, for the likelihood fits (ordinal):
    x = A_d z per row, the same terms as the OLS engine, collinear columns left out."""
    stats = stats_from_rows(frame, "row")
    design = cell_design(stats, dimension_effects, length)
    z = np.column_stack(
        [np.ones(len(stats)), stats["m_y0r1l0"].to_numpy(), stats["m_y0r0l1"].to_numpy()]
    )
    X = design.rows(z)
    weights = frame["n_rows"].to_numpy(dtype=float) if "n_rows" in frame else None
    gram = (X * weights[:, None]).T @ X if weights is not None else X.T @ X
    keep = independent_columns(gram)
    notes = list(design.notes)
    if len(keep) < X.shape[1]:
        notes.append(collinear_note(design.terms, keep))
    return X[:, keep], [design.terms[i] for i in keep], notes


NO_ROWS = "no estimates: no rows"  # an empty fit's note
EXACT_FIT_SE = 1e-12  # a standard error below this (relative to the estimate) is 0
# an estimate of standard error 0 is significant when its magnitude exceeds this:
# an exactly determined bias (a judge rating its own model 4 and every other 2:
# self = 0.5) is an effect whatever the rounding left as its standard error (0,
# or noise of 1e-11..1e-9 depending on the se type), while the rounded zeros of a
# constant outcome are <= 6e-14 (Play Favorites) and the smallest bias that means
# anything on the 0-1 scale is ~1e-3. The mart's check (_bias__models.yml) and
# panel_leaderboard's slopes use the same 1e-9.
EXACT_ZERO_ESTIMATE = 1e-9


def wald_table(
    terms: list[Term],
    params: np.ndarray,
    cov: np.ndarray,
    ci_level: float,
    support: np.ndarray | None = None,
    min_support: int = 0,
) -> pd.DataFrame:
    """Estimates with standard errors, z, two-sided p and Wald intervals (normal
    quantile and tail from the standard library: p = erfc(|z| / sqrt 2), exact in
    the far tail, so that the engine's process does not need scipy.stats).
    ``support``: ratings behind each term (n_support); a term with fewer than
    ``min_support`` is not marked significant, nor is a term of standard error 0
    whose estimate is a rounded zero (|estimate| <= EXACT_ZERO_ESTIMATE: its
    interval is the rounding, e.g. +-1e-17 for a judge's constant scores, and
    would exclude 0 by chance); an exactly determined non-zero estimate of
    standard error 0 is significant (z and p stay null)."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    # a standard error of 0 (every rating behind the term fitted exactly, e.g. a
    # judge's constant scores; rounding leaves ~1e-17) leaves z and p undefined:
    # null, named in the notes
    se = np.where(se <= EXACT_FIT_SE * np.maximum(1.0, np.abs(params)), 0.0, se)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, params / se, np.nan)
    crit = NormalDist().inv_cdf(0.5 + ci_level / 2.0)
    p_value = np.array(
        [math.erfc(abs(v) / math.sqrt(2.0)) if np.isfinite(v) else np.nan for v in z]
    )
    lo, hi = params - crit * se, params + crit * se
    return pd.DataFrame(
        {
            "term": [t.name for t in terms],
            "term_type": [t.term_type for t in terms],
            "judge": [t.judge for t in terms],
            "family": [t.family for t in terms],
            "dimension": [t.dimension for t in terms],
            "estimate": params,
            "std_error": se,
            "z": z,
            "p_value": p_value,
            "ci_low": lo,
            "ci_high": hi,
            "ci_level": ci_level,
            "significant": ((lo > 0) | (hi < 0))
            & ((se > 0) | (np.abs(params) > EXACT_ZERO_ESTIMATE))
            & (True if support is None else np.asarray(support) >= min_support),
            "n_support": pd.array(
                [None] * len(terms) if support is None else np.asarray(support, dtype="int64"),
                dtype="Int64",
            ),
        }
    )


def support_notes(table: pd.DataFrame, min_support: int) -> list[str]:
    """Notes on terms too thinly supported to be called significant, and on terms
    whose standard error is not a number."""
    notes = []
    thin = table[table["n_support"].notna() & (table["n_support"] < min_support)]
    if len(thin):
        pairs = zip(thin["term"], thin["n_support"], strict=True)
        listed = ", ".join(f"{t} ({n})" for t, n in pairs)
        notes.append(
            f"not marked significant, fewer than min_term_support = {min_support} ratings "
            f"behind the term: {listed}"
        )
    se = table["std_error"].astype(float)
    exact = table.loc[se == 0, "term"]
    if len(exact):
        notes.append(
            f"standard error 0 for {', '.join(exact)}: every rating behind the term is "
            "fitted exactly (e.g. constant scores); z and p_value are null, and the term is "
            f"significant only if |estimate| > {EXACT_ZERO_ESTIMATE:g} (an exactly determined "
            "effect, not a rounded zero)"
        )
    undefined = table.loc[~np.isfinite(se), "term"]
    if len(undefined):
        notes.append(
            f"standard error undefined for {', '.join(undefined)} (with HC3, a rating of "
            "leverage 1 has no residual: a term resting on one rating); use HC0/HC1 or more data"
        )
    return notes


def term_support(stats: pd.DataFrame, design: CellDesign, keep_terms: list[Term]) -> np.ndarray:
    """Ratings behind each term: the rows whose design column is not zero (a
    column has at most one non-zero z-component per cell, so the cells' counts
    repeated over their three rows of S add up each rating once)."""
    counts = np.bincount(design.cell, weights=stats[COUNT].to_numpy(dtype=float),
                         minlength=design.n_cells)  # fmt: skip
    support = (design.S != 0).T @ np.repeat(counts, 3)
    index = {t: i for i, t in enumerate(design.terms)}
    return np.rint([support[index[t]] for t in keep_terms]).astype("int64")


def se_bytes(stats: pd.DataFrame, se_type: str, n_cells: int, p: int) -> float:
    """Memory the standard-error type adds to an OLS fit: the prompts x p scores of
    cluster-robust errors, the cells x 3 x p spread of HC3's leverages."""
    if se_type == "cluster" and "prompt_id" in stats:
        return 2 * FLOAT * stats["prompt_id"].nunique() * p
    if se_type == "HC3":
        return 2 * FLOAT * 3 * n_cells * p
    return 0.0


@dataclass
class FitOutput:
    estimates: pd.DataFrame
    fit: dict[str, object]


def fit_bias_regression(
    data: pd.DataFrame,
    analysis: str,
    slice_: str = "all",
    spec: Spec | None = None,
    se_type: str = "HC0",
    ci_level: float = 0.90,
    extra_notes: list[str] | None = None,
    min_support: int = MIN_TERM_SUPPORT,
    budget: Budget | None = None,
) -> FitOutput:
    """Fit the main specification and label the result.

    ``data`` is a stats frame (judge_bias.bias.sufficient) of the grain the
    ``se_type`` needs, or prepared rows (rating, reference, keys), which are
    turned into row-grain statistics. A fit with fewer than MIN_RESIDUAL_DF
    residual degrees of freedom, or over the ``budget`` (judge_bias.limits), is
    skipped with a note, before its design is built.
    """
    budget = budget or Budget()
    if se_type not in SE_TYPES:
        raise ValueError(f"se_type must be one of {SE_TYPES}, not {se_type!r}")
    spec = spec or Spec()
    notes = list(extra_notes or [])
    stats = data if has_moments(data) else stats_from_rows(data, "row")
    if spec.length:
        missing = ~stats["has_length"].astype(bool)
        if missing.any():
            notes.append(f"{n_rows(stats[missing])} rows without length_feature left out")
            stats = stats[~missing]
    n = n_rows(stats)
    fit: dict[str, object] = {
        "analysis": analysis,
        "slice": slice_,
        "model_type": "ols",
        "n_obs": n,
        "n_params": 0,
        "r_squared": None,
        "se_type": se_type,
        "ci_level": ci_level,
    }
    empty = pd.DataFrame(columns=ESTIMATE_COLUMNS)
    if n == 0:  # no fit possible: model_type none, as bias_fits' yml defines it
        notes.append(NO_ROWS)
        return FitOutput(empty, fit | {"model_type": "none", "notes": "; ".join(notes)})
    if se_type == "cluster" and "prompt_id" not in stats:
        raise ValueError("cluster standard errors need prompt-grain statistics (prompt_id)")
    if se_type == "cluster" and stats["prompt_id"].nunique() < 2:
        notes.append("no estimates: cluster standard errors need at least two prompts")
        return FitOutput(empty, fit | {"model_type": "none", "notes": "; ".join(notes)})
    n_cells, p = design_size(stats, spec.dimension_effects, spec.length)
    if n - p < MIN_RESIDUAL_DF:
        notes.append(
            f"no estimates: slice too small ({n} rows for {p} parameters; "
            f"at least {MIN_RESIDUAL_DF} more rows than parameters needed)"
        )
        return FitOutput(
            empty, fit | {"model_type": "none", "n_params": p, "notes": "; ".join(notes)}
        )
    skipped = budget.ols(len(stats), p, se_bytes(stats, se_type, n_cells, p))
    if skipped:  # no fit run: model_type none; n_params says what it would have had
        notes.append(skipped)
        return FitOutput(
            empty, fit | {"model_type": "none", "n_params": p, "notes": "; ".join(notes)}
        )
    design = cell_design(stats, spec.dimension_effects, spec.length)
    res = fit_stats(stats, se_type, design=design)
    notes += res.notes
    support = term_support(stats, design, res.terms)
    table = wald_table(res.terms, res.params, res.cov, ci_level, support, min_support)
    notes += support_notes(table, min_support)
    table.insert(0, "slice", slice_)
    table.insert(0, "analysis", analysis)
    table["se_type"] = se_type
    table["n_obs"] = n
    fit |= {"n_params": len(res.terms), "r_squared": res.r_squared}
    fit["notes"] = "; ".join(notes) or None
    return FitOutput(table[ESTIMATE_COLUMNS], fit)
