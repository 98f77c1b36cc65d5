"""Why a statistic of agreement_judge_human is null: the notes of its rows.

A correlation is undefined with fewer than 5 rated pairs or when either side's
scores are constant; a Fisher interval when |r| = 1; the prompt-level design
effect (and so the clustered interval) with one prompt. The mart keeps those
cells null and says which and why in ``notes``.
"""

from __future__ import annotations

import numpy as np


def correlation_notes(
    stats_: dict,
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None,
    names: tuple[str, ...],
) -> str | None:
    """Why a correlation, its interval or a design effect of one judge_human row is
    null (a statistic undefined on these data), or None when every one is there."""
    live = np.ones(len(x), dtype=bool) if weights is None else np.asarray(weights) > 0
    if not any(np.isfinite(stats_.get(nm, np.nan)) for nm in names):
        if stats_["n"] < 5:
            reason = f"{stats_['n']} rated pairs (at least 5 needed)"
        elif np.unique(x[live]).size < 2:
            reason = "the judge's scores are constant"
        elif np.unique(y[live]).size < 2:
            reason = "the human scores are constant"
        else:
            reason = "undefined on these data"
        return f"correlations null: {reason}"
    skipped = stats_.get("_table_skipped")  # judge_human.TABLE_SKIPPED
    notes = [skipped] if skipped else []
    no_ci = [nm for nm in names if not np.isfinite(stats_.get(f"{nm}_ci_low", np.nan))]
    if skipped:
        no_ci = [nm for nm in no_ci if nm not in ("kendall_tau_b", "gk_gamma")]
    at_one = [nm for nm in no_ci if abs(stats_.get(nm, 0.0)) >= 1]
    fisher = [nm for nm in at_one if nm != "gk_gamma"]
    if fisher:
        notes.append(f"{', '.join(fisher)} at +-1: no Fisher interval")
    if "gk_gamma" in at_one:
        notes.append(
            "gk_gamma at +-1 (no untied pair ordered the other way): its asymptotic "
            "standard error is 0, no interval"
        )
    no_ci = [nm for nm in no_ci if nm not in at_one]
    if no_ci:
        notes.append(f"no interval for {', '.join(no_ci)}")
    deff = [c for c in ("pearson", "spearman") if f"{c}_design_effect" in stats_]
    if any(not np.isfinite(stats_[f"{c}_design_effect"]) for c in deff):
        why = "one prompt" if stats_.get("n_prompts") == 1 else "no variation within the rows"
        notes.append(f"design effect null ({why}): no prompt-clustered interval")
    return "; ".join(notes) or None
