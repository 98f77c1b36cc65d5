"""GAM robustness fit (Play Favorites section 6.2): the main specification with
``gt:judge`` replaced by a per-judge cubic regression spline of the reference.

    rating ~ judge + cr(reference):judge + same_judge + same_family + dimension - 1

The spline is patsy's ``cr`` (mgcv's cubic regression spline, natural
boundary conditions) with ``n_knots`` knots at evenly spaced quantiles of the
*distinct* reference values of the fit (the lowest and highest value are the
boundary knots), the same knots for every judge. Its basis is an
interpolating one (basis k is 1 at knot k, 0 at the others) and sums to 1, so
the first column is left out to keep the judge offsets: ``judge[j]`` is the
judge's fitted score at the lowest knot and ``judge[j]:cr(reference)[k]`` the
fitted difference between knot k and the lowest knot.

The basis is a function of the reference value, so with the reference value
in the cell key (``reference_value``; the human references are means of a few
Likert labels, hence few distinct values) every design row is again x = A_d z
with a constant A_d per cell, and the OLS engine (judge_bias.bias.sufficient) fits
it from the same moment sums as the main fit, with the same standard errors.
Prompt- and row-grain statistics have one reference per row already.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import patsy
import scipy.sparse

from judge_bias.bias.regression import (
    ESTIMATE_COLUMNS,
    MIN_RESIDUAL_DF,
    MIN_TERM_SUPPORT,
    NO_ROWS,
    FitOutput,
    se_bytes,
    support_notes,
    term_support,
    wald_table,
)
from judge_bias.bias.sufficient import (
    COUNT,
    KEY_COLUMNS,
    CellDesign,
    Term,
    cell_design,
    fit_stats,
    moment_name,
    n_rows,
    stats_from_rows,
)
from judge_bias.limits import Budget

N_KNOTS = 5  # knots of each judge's spline (fewer when the reference has fewer values)
MIN_KNOTS = 3  # below this the natural cubic spline is a straight line: no GAM
REFERENCE_KEY = "reference_value"  # the reference as a key of the statistics
# relative tolerance within which a stats row's references count as one value
CONSTANT_TOL = 1e-9


def reference_stats_from_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Cell statistics of prepared rows with the reference value as a further key
    (the pandas twin of int_bias_reference_stats)."""
    out = stats_from_rows(rows, "row")
    out[REFERENCE_KEY] = rows["reference"].to_numpy(dtype=float)
    return out.groupby([*KEY_COLUMNS, REFERENCE_KEY], dropna=False, sort=False,
                       as_index=False).sum(numeric_only=False)  # fmt: skip


def row_reference(stats: pd.DataFrame) -> np.ndarray | None:
    """The one reference value of each stats row, or None when some row sums ratings
    of different references (cell-grain statistics without reference_value)."""
    n = stats[COUNT].to_numpy(dtype=float)
    mean = stats[moment_name(0, 1, 0)].to_numpy(dtype=float) / n
    spread = stats[moment_name(0, 2, 0)].to_numpy(dtype=float) / n - mean**2
    if (np.abs(spread) > CONSTANT_TOL * (1.0 + mean**2)).any():
        return None
    return stats[REFERENCE_KEY].to_numpy(dtype=float) if REFERENCE_KEY in stats else mean


def gam_knots(values: np.ndarray, n_knots: int = N_KNOTS) -> np.ndarray:
    """min(n_knots, distinct values) knots at evenly spaced quantiles (linear
    interpolation) of the distinct values: the first and last are the extremes."""
    distinct = np.unique(np.asarray(values, dtype=float))
    k = min(n_knots, len(distinct))
    return np.quantile(distinct, np.linspace(0.0, 1.0, k)) if k else distinct


def spline_basis(values: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """patsy's cr basis at ``values`` (rows x len(knots)), the knots given in full."""
    env = {"x": np.asarray(values, dtype=float), "inner": knots[1:-1], "lo": knots[0],
           "hi": knots[-1]}  # fmt: skip
    formula = "cr(x, knots=inner, lower_bound=lo, upper_bound=hi) - 1"
    return np.asarray(patsy.dmatrix(formula, env))


def spline_term(judge: str, k: int) -> str:
    return f"judge[{judge}]:cr(reference)[{k}]"


def gam_design(stats: pd.DataFrame, reference: np.ndarray, knots: np.ndarray) -> CellDesign:
    """The main design with each judge's slope replaced by its spline columns; the
    cells are the main design's cells split by reference value."""
    main = cell_design(stats, dimension_effects=True, length=False)
    pair = pd.MultiIndex.from_arrays([main.cell, reference])
    cell, uniques = pair.factorize()
    parent = np.asarray(uniques.get_level_values(0), dtype=int)
    value = np.asarray(uniques.get_level_values(1), dtype=float)
    rows = (3 * parent[:, None] + np.arange(3)[None, :]).ravel()
    base = main.S[rows]
    types = [t.term_type for t in main.terms]
    offsets = [i for i, t in enumerate(types) if t == "judge_offset"]
    rest = [i for i, t in enumerate(types) if t not in ("judge_offset", "judge_slope")]
    judges = [str(main.terms[i].judge) for i in offsets]  # offset terms always name a judge
    family = {main.terms[i].judge: main.terms[i].family for i in offsets}
    n_basis = len(knots) - 1  # the first column is the judge offset's
    judge_of_cell = np.empty(len(uniques), dtype=object)
    judge_of_cell[cell] = stats["judge"].astype(str).to_numpy()
    position = {j: i for i, j in enumerate(judges)}
    basis = spline_basis(value, knots)[:, 1:]
    col = np.array([position[j] for j in judge_of_cell])[:, None] * n_basis + np.arange(n_basis)
    spline = scipy.sparse.csr_matrix(
        (basis.ravel(), ((3 * np.arange(len(uniques)))[:, None].repeat(n_basis, 1).ravel(),
                         col.ravel())),
        shape=(3 * len(uniques), len(judges) * n_basis),
    )  # fmt: skip
    S = scipy.sparse.hstack([base[:, offsets], spline, base[:, rest]]).tocsr()
    spline_terms = [
        Term(spline_term(j, k), "judge_spline", judge=j, family=family[j])
        for j in judges
        for k in range(1, n_basis + 1)
    ]
    terms = [main.terms[i] for i in offsets] + spline_terms + [main.terms[i] for i in rest]
    return CellDesign(S, np.asarray(cell), terms, list(main.notes))


def knots_note(knots: np.ndarray) -> str:
    shown = ", ".join(f"{k:.4g}" for k in knots)
    return (
        f"per-judge cubic regression spline of the reference (patsy cr), knots at {shown} "
        "(quantiles of the distinct reference values); judge[j] = fitted score at the "
        "first knot, cr(reference)[k] = difference at knot k"
    )


def fit_gam(
    stats: pd.DataFrame,
    se_type: str = "HC0",
    ci_level: float = 0.90,
    min_support: int = MIN_TERM_SUPPORT,
    budget: Budget | None = None,
    n_knots: int = N_KNOTS,
    analysis: str = "gam",
    slice_: str = "all",
) -> FitOutput:
    """The GAM fit of a stats frame whose rows each hold one reference value
    (reference-grain, prompt-grain or row-grain statistics), labelled as the
    other analyses (bias_estimates, bias_fits)."""
    budget = budget or Budget()
    n = n_rows(stats)
    fit: dict[str, object] = {"analysis": analysis, "slice": slice_, "model_type": "ols",
                              "n_obs": n, "n_params": 0, "r_squared": None,
                              "se_type": se_type, "ci_level": ci_level}  # fmt: skip
    empty = pd.DataFrame(columns=ESTIMATE_COLUMNS)

    def skipped(note: str, p: int = 0) -> FitOutput:
        """No fit run: model_type none (bias_fits' yml), n_params the design's size
        when it was sized (``p``), else 0."""
        return FitOutput(empty, fit | {"model_type": "none", "n_params": p, "notes": note})

    if n == 0:  # no fit possible: model_type none, as bias_fits' yml defines it
        return FitOutput(empty, fit | {"model_type": "none", "notes": NO_ROWS})
    reference = row_reference(stats)
    if reference is None:
        return skipped(
            "no estimates: the statistics sum ratings of different reference values "
            "(the spline basis needs one reference per statistics row)"
        )
    knots = gam_knots(reference, n_knots)
    if len(knots) < MIN_KNOTS:
        return skipped(
            f"no estimates: {len(knots)} distinct reference values, a cubic spline needs "
            f"at least {MIN_KNOTS}"
        )
    if se_type == "cluster" and stats["prompt_id"].nunique() < 2:
        return skipped("no estimates: cluster standard errors need at least two prompts")
    design = gam_design(stats, reference, knots)
    p = len(design.terms)
    if n - p < MIN_RESIDUAL_DF:
        return skipped(f"no estimates: too few rows ({n} rows for {p} parameters)", p)
    over = budget.ols(len(stats), p, se_bytes(stats, se_type, design.n_cells, p))
    if over:
        return skipped(over, p)
    res = fit_stats(stats, se_type, design=design)
    support = term_support(stats, design, res.terms)
    table = wald_table(res.terms, res.params, res.cov, ci_level, support, min_support)
    notes = [knots_note(knots), *res.notes, *support_notes(table, min_support)]
    table.insert(0, "slice", slice_)
    table.insert(0, "analysis", analysis)
    table["se_type"] = se_type
    table["n_obs"] = n
    fit |= {"n_params": len(res.terms), "r_squared": res.r_squared, "notes": "; ".join(notes)}
    return FitOutput(table[ESTIMATE_COLUMNS], fit)
