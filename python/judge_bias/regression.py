"""Self- and family-bias regressions (Play Favorites, Spiliopoulou et al. 2025).

The main specification is, in the authors' formula terms,

    rating ~ judge + gt:judge + same_judge + same_family + dimension - 1

with ``same_judge`` the judge's name on rows where judge == model (else the
baseline "0") and ``same_family`` the judge's family on rows where the
families match and judge != model (else "0"). This module builds that design
itself (one column per identifiable term, named and typed), fits it by OLS and
computes heteroskedasticity-robust (HC0, HC1, HC3) or prompt-clustered
standard errors with Wald intervals. statsmodels' formula fit is the
reference it is tested against. ``fit_ols`` is the single entry point a
faster engine can replace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.linalg
from scipy import stats

SE_TYPES = ("HC0", "HC1", "HC3", "cluster")
TERM_TYPES = ("self", "family", "judge_offset", "judge_slope", "dimension", "length")
# A fit needs this many residual degrees of freedom (rows - parameters) or it
# gives no estimates: robust variances from a handful of residuals are noise.
MIN_RESIDUAL_DF = 10
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
class Term:
    """One column of the design: what it estimates and for whom."""

    name: str
    term_type: str  # self, family, judge_offset, judge_slope, dimension, length
    judge: str | None = None
    family: str | None = None
    dimension: str | None = None


@dataclass(frozen=True)
class Spec:
    """Which terms enter the regression."""

    dimension_effects: bool = True
    length: bool = False


@dataclass
class Design:
    X: np.ndarray
    y: np.ndarray
    terms: list[Term]
    groups: np.ndarray | None
    notes: list[str] = field(default_factory=list)


@dataclass
class OLSResult:
    params: np.ndarray
    cov: np.ndarray
    n_obs: int
    n_params: int
    r_squared: float
    residuals: np.ndarray


def self_levels(df: pd.DataFrame) -> pd.Series:
    """The ``same_judge`` factor: judge name on self rows, else the baseline."""
    return pd.Series(np.where(df["is_self"], df["judge"], BASELINE), index=df.index)


def family_levels(df: pd.DataFrame) -> pd.Series:
    """The ``same_family`` factor: judge family on same-family rows, else the baseline."""
    return pd.Series(np.where(df["is_same_family"], df["judge_family"], BASELINE), index=df.index)


def build_design(df: pd.DataFrame, spec: Spec, reference: str = "reference") -> Design:
    """The design of the main specification on ``df``.

    ``df`` needs rating, ``reference``, judge, judge_family, is_self,
    is_same_family, dimension, prompt_id and, for ``spec.length``,
    length_feature. Terms the data cannot identify are left out with a note.
    """
    notes: list[str] = []
    if spec.length:
        missing = df["length_feature"].isna()
        if missing.any():
            notes.append(f"{int(missing.sum())} rows without length_feature left out")
            df = df[~missing]
    judges = sorted(df["judge"].unique())
    cols: list[np.ndarray] = []
    terms: list[Term] = []
    judge = df["judge"].to_numpy()
    ref = df[reference].to_numpy(dtype=float)
    family_of = df.groupby("judge")["judge_family"].first().to_dict()
    for j in judges:
        cols.append((judge == j).astype(float))
        terms.append(Term(f"judge[{j}]", "judge_offset", judge=j, family=family_of[j]))
    for j in judges:
        cols.append(np.where(judge == j, ref, 0.0))
        terms.append(Term(f"judge[{j}]:reference", "judge_slope", judge=j, family=family_of[j]))

    same_judge = self_levels(df).to_numpy()
    for j in judges:
        if (same_judge == j).any():
            cols.append((same_judge == j).astype(float))
            terms.append(Term(f"self[{j}]", "self", judge=j, family=family_of[j]))
        else:
            notes.append(f"self[{j}] not identifiable: the judge never rates its own model")
    same_family = family_levels(df).to_numpy()
    for fam in sorted(set(family_of.values())):
        if (same_family == fam).any():
            cols.append((same_family == fam).astype(float))
            terms.append(Term(f"family[{fam}]", "family", family=fam))
        else:
            notes.append(
                f"family[{fam}] not identifiable: its judges rate no other model of the family"
            )
    if spec.dimension_effects:
        dims = sorted(df["dimension"].unique())
        dim = df["dimension"].to_numpy()
        for d in dims[1:]:  # treatment coding, first level as baseline (as patsy)
            cols.append((dim == d).astype(float))
            terms.append(Term(f"dimension[{d}]", "dimension", dimension=d))
        if len(dims) > 1:
            notes.append(f"dimension effects relative to '{dims[0]}'")
    if spec.length:
        lf = df["length_feature"].to_numpy(dtype=float)
        for j in judges:
            cols.append(np.where(judge == j, lf, 0.0))
            terms.append(Term(f"judge[{j}]:length", "length", judge=j, family=family_of[j]))

    X = np.column_stack(cols) if cols else np.empty((len(df), 0))
    groups = df["prompt_id"].to_numpy() if "prompt_id" in df else None
    design = Design(X, df["rating"].to_numpy(dtype=float), terms, groups, notes)
    return _drop_collinear(design)


def _drop_collinear(design: Design, tol: float = 1e-10) -> Design:
    """Leave out columns that are linear combinations of earlier ones, with a note."""
    X = design.X
    if X.shape[1] == 0 or X.shape[0] == 0:
        return design
    _, r, piv = scipy.linalg.qr(X, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int((diag > tol * diag[0]).sum()) if diag.size else 0
    if rank == X.shape[1]:
        return design
    keep = np.sort(piv[:rank])
    dropped = [design.terms[i].name for i in range(X.shape[1]) if i not in set(keep)]
    design.notes.append(
        f"{', '.join(dropped)} not identifiable: collinear with other terms in this data"
    )
    return Design(
        X[:, keep], design.y, [design.terms[i] for i in keep], design.groups, design.notes
    )


def fit_ols(
    X: np.ndarray, y: np.ndarray, se_type: str = "HC0", groups: np.ndarray | None = None
) -> OLSResult:
    """OLS with a sandwich covariance, as statsmodels' ``fit(cov_type=...)``.

    HC1 scales HC0 by n / (n - p); HC3 divides each squared residual by
    (1 - h_ii)^2; ``cluster`` sums scores within ``groups`` and applies
    statsmodels' correction G / (G - 1) * (n - 1) / (n - p).
    """
    if se_type not in SE_TYPES:
        raise ValueError(f"se_type must be one of {SE_TYPES}, not {se_type!r}")
    n, p = X.shape
    q, r = np.linalg.qr(X)
    params = scipy.linalg.solve_triangular(r, q.T @ y)
    resid = y - X @ params
    r_inv = scipy.linalg.solve_triangular(r, np.eye(p))
    bread = r_inv @ r_inv.T  # (X'X)^-1
    if se_type == "cluster":
        if groups is None:
            raise ValueError("cluster standard errors need groups (prompt_id)")
        codes, uniques = pd.factorize(groups)
        scores = np.zeros((len(uniques), p))
        np.add.at(scores, codes, X * resid[:, None])
        g = len(uniques)
        meat = scores.T @ scores * (g / (g - 1)) * ((n - 1) / (n - p))
    else:
        weights = resid**2
        if se_type == "HC3":
            leverage = np.einsum("ij,ij->i", q, q)
            weights = weights / (1.0 - leverage) ** 2
        meat = (X * weights[:, None]).T @ X
        if se_type == "HC1":
            meat *= n / (n - p)
    cov = bread @ meat @ bread
    centred = y - y.mean()
    r_squared = 1.0 - float(resid @ resid) / float(centred @ centred)
    return OLSResult(params, cov, n, p, r_squared, resid)


def wald_table(
    terms: list[Term],
    params: np.ndarray,
    cov: np.ndarray,
    ci_level: float,
) -> pd.DataFrame:
    """Estimates with standard errors, z, two-sided p and Wald intervals."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = params / se
    crit = stats.norm.ppf(0.5 + ci_level / 2.0)
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
            "p_value": 2.0 * stats.norm.sf(np.abs(z)),
            "ci_low": lo,
            "ci_high": hi,
            "ci_level": ci_level,
            "significant": (lo > 0) | (hi < 0),
        }
    )


@dataclass
class FitOutput:
    estimates: pd.DataFrame
    fit: dict[str, object]


def fit_bias_regression(
    df: pd.DataFrame,
    analysis: str,
    slice_: str = "all",
    spec: Spec | None = None,
    se_type: str = "HC0",
    ci_level: float = 0.90,
    reference: str = "reference",
    extra_notes: list[str] | None = None,
) -> FitOutput:
    """Fit the main specification on ``df`` and label the result."""
    spec = spec or Spec()
    notes = list(extra_notes or [])
    design = build_design(df, spec, reference)
    notes += design.notes
    n, p = design.X.shape
    fit: dict[str, object] = {
        "analysis": analysis,
        "slice": slice_,
        "model_type": "ols",
        "n_obs": n,
        "n_params": p,
        "r_squared": None,
        "se_type": se_type,
        "ci_level": ci_level,
    }
    empty = pd.DataFrame(columns=ESTIMATE_COLUMNS)
    if se_type == "cluster":
        n_groups = len(pd.unique(design.groups)) if design.groups is not None else 0
        if n_groups < 2:
            notes.append("no estimates: cluster standard errors need at least two prompts")
            return FitOutput(empty, fit | {"notes": "; ".join(notes)})
    if n - p < MIN_RESIDUAL_DF or p == 0:
        notes.append(
            f"no estimates: slice too small ({n} rows for {p} parameters; "
            f"at least {MIN_RESIDUAL_DF} more rows than parameters needed)"
        )
        return FitOutput(empty, fit | {"notes": "; ".join(notes)})
    res = fit_ols(design.X, design.y, se_type, design.groups)
    table = wald_table(design.terms, res.params, res.cov, ci_level)
    table.insert(0, "slice", slice_)
    table.insert(0, "analysis", analysis)
    table["se_type"] = se_type
    table["n_obs"] = n
    fit["r_squared"] = res.r_squared
    fit["notes"] = "; ".join(notes) or None
    return FitOutput(table[ESTIMATE_COLUMNS], fit)
