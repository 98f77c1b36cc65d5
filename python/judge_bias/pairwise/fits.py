"""The logistic fits and per-row notes of the pairwise marts (the aggregate route,
``sums``): the unconditional length slope, the fit given the human verdict, the
joint fit's terms, Cohen's kappa from (verdict, human verdict) counts, and the
notes of pairwise_bias. Definitions: ``reference.rates`` and ``reference.human``
(module docstrings); ``logistic.fit`` checks separation before each fit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.pairwise import logistic
from judge_bias.pairwise.columns import (
    GIVEN_HUMAN_NOTE,
    LOGIT_TERMS,
    no_length_slope_note,
    own_ties_rate_note,
)
from judge_bias.stats.intervals import Z95


def length_slopes(w: pd.DataFrame, x: np.ndarray) -> pd.DataFrame:
    """Per judge: position intercept and slope on x of logit P(first chosen), with a
    cluster-robust (prompt) Wald 95% interval of the slope; ties and rows with
    unknown x are left out. Indexed by judge code."""
    keep = w["decisive"].to_numpy() & np.isfinite(x)
    rows = []
    for judge in np.unique(w["judge"].to_numpy()[keep]):
        sel = keep & (w["judge"].to_numpy() == judge)
        xj, yj = x[sel], w["first"].to_numpy()[sel].astype(float)
        prompt = w["prompt"].to_numpy()[sel]
        row = {"judge": judge, "n_length_judgments": int(sel.sum())}
        if yj.min() == yj.max() or np.ptp(xj) == 0:
            row["note"] = "length slope not estimable (one outcome only or no length variation)"
            rows.append(row)
            continue
        design = np.column_stack([np.ones(len(xj)), xj])
        result = logistic.fit(design, yj, prompt, ["position", "length_slope"])
        if isinstance(result, str):
            row["note"] = f"length slope {result}"
            rows.append(row)
            continue
        params, cov = result
        se = float(np.sqrt(cov[1, 1]))
        row.update(
            length_slope=params[1],
            length_slope_ci_low=params[1] - Z95 * se,
            length_slope_ci_high=params[1] + Z95 * se,
            length_intercept=params[0],
            length_slope_se=se,
        )
        rows.append(row)
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "n_length_judgments",
            "length_slope",
            "length_slope_ci_low",
            "length_slope_ci_high",
            "length_intercept",
            "length_slope_se",
            "note",
        ],
    )


def mart_notes(
    table: pd.DataFrame,
    slopes: pd.DataFrame,
    pooled_code: int,
    ties_with_lengths: set[int] | frozenset[int] = frozenset(),
) -> list[str | None]:
    """pairwise_bias's notes per row; the pooled rows also carry the slope's note
    (``ties_with_lengths``: the judge codes whose ties have lengths)."""
    notes = []
    for row in table.itertuples(index=False):
        note = []
        if row.n_swapped_pairs == 0:
            note.append("no pair asked in both orders")
        if row.n_self_judgments == 0:
            note.append("no pair with the judge's own model")
        else:
            if np.isnan(row.self_preference_rate):
                note.append(own_ties_rate_note(int(row.n_self_judgments)))
            if np.isnan(row.self_preference_prob):
                note.append("no p_first")
        if np.isnan(row.eo_bias) and row.n_self_judgments > 0:
            note.append("eo_bias needs human verdicts preferring each side")
        if row.opponent == pooled_code:
            slope_note = slopes["note"].get(row.judge) if "note" in slopes else None
            if isinstance(slope_note, str):
                note.append(slope_note)
            elif np.isnan(row.length_slope):
                note.append(
                    no_length_slope_note(
                        int(row.n_judgments), int(row.n_ties), row.judge in ties_with_lengths
                    )
                )
        notes.append("; ".join(note) or None)
    return notes


def logit_clustered(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Logistic regression of y (0/1) on the columns of x (with its constant) and
    the prompt-clustered covariance, as statsmodels' Logit(...).fit(cov_type=
    'cluster') computes it (no separation check: ``logistic.fit`` has it)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    params, _ = logistic.maximum_likelihood(x, y)
    return params, logistic.clustered_covariance(x, y, groups, params)


def cohens_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa between two label vectors (closed form: (po - pe) / (1 - pe))."""
    return cohens_kappa_table(a, b)


def cohens_kappa_table(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Cohen's kappa of label pairs (a[i], b[i]), each standing for ``weights[i]``
    judgments (1 each when None): from (verdict, human verdict) counts."""
    labels, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    if len(a) == 0:
        return float("nan")
    k = len(labels)
    table = np.zeros((k, k))
    np.add.at(table, (codes[: len(a)], codes[len(a) :]), 1.0 if weights is None else weights)
    table /= table.sum()
    po = np.trace(table)
    pe = table.sum(axis=1) @ table.sum(axis=0)
    return float((po - pe) / (1.0 - pe)) if pe < 1 else float("nan")


def fit_terms(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str],
    labels: list[str] | None = None,
) -> tuple[dict[str, float], str | None]:  # fmt: skip
    """Coefficients and Wald intervals named ``names`` (the constant first), or the
    note of ``logistic.fit`` when the fit has no estimate (separation, no
    convergence, too few rows)."""
    result = logistic.fit(x, y, groups, labels or names)
    if isinstance(result, str):
        return {}, result
    params, cov = result
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    out: dict[str, float] = {}
    for name, b, s in zip(names, params, se, strict=True):
        out |= {name: b, f"{name}_ci_low": b - Z95 * s, f"{name}_ci_high": b + Z95 * s}
    return out, None


def given_human_fit(h: np.ndarray, x: np.ndarray, first: np.ndarray, prompt: np.ndarray) -> dict:
    """The conditional fit's columns for one judge (pooled row), with its note
    (``GIVEN_HUMAN_NOTE``) when the fit has no estimate."""
    design = np.column_stack([np.ones(len(h)), h, x])
    terms, note = fit_terms(
        design, first, prompt, ["_b0", "_bh", "length_slope_given_human"],
        labels=["position", "human_verdict", "length"],
    )  # fmt: skip
    row: dict = {"n_given_human_judgments": len(h)}
    if note:
        row[GIVEN_HUMAN_NOTE] = f"*_given_human {note}"
    if terms:
        row |= {k: v for k, v in terms.items() if k.startswith("length_slope")}
        for suffix in ("", "_ci_low", "_ci_high"):
            row[f"first_slot_rate_given_human{suffix}"] = 1 / (1 + np.exp(-terms[f"_b0{suffix}"]))
    return row


def given_human_columns(table: pd.DataFrame, fits: dict, pooled: np.ndarray) -> None:
    """Put the conditional fits (per judge code) on the pooled rows of ``table``."""
    for col in ("n_given_human_judgments", GIVEN_HUMAN_NOTE) + tuple(
        f"{t}{s}" for t in LOGIT_TERMS for s in ("", "_ci_low", "_ci_high")
    ):
        table[col] = [
            fits.get(j, {}).get(col, np.nan) if p else np.nan
            for j, p in zip(table["judge"], pooled, strict=True)
        ]


def with_given_human_note(table: pd.DataFrame) -> pd.Series:
    """``notes`` with the conditional fit's note appended (pooled rows)."""
    parts = [
        "; ".join(str(n) for n in pair if isinstance(n, str)) or None
        for pair in zip(table["notes"], table[GIVEN_HUMAN_NOTE], strict=True)
    ]
    return pd.Series(parts, index=table.index, dtype="object")
