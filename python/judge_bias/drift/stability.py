"""judge_stability: reruns of one judge on one item (run_id), per judge x dimension.

Input: one row per item (judge x dimension x prompt x model x framing) rated in at
least two runs, summarised in SQL (int_stability_items): n_runs, the squared
deviations of its normalised scores from their mean (ss), the share of its run pairs
whose scores differ (discordant_share), its lowest and highest score (min_score,
max_score: its verdict crosses the pass threshold when min < threshold <= max).

- flip_rate: the mean over items of discordant_share, an estimate of P(two runs of
  an item disagree) that does not grow with the number of runs (with two runs it is
  the share of items whose score changed); prompt-clustered Wilson interval at the
  effective size of the CR1 variance, not capped at n (a share of run pairs varies
  less than a 0/1 unit: capped, the interval over-covers, 0.98 measured);
- pass_cross_rate: the share of items whose verdict crosses the pass threshold
  between runs; prompt-clustered Wilson interval;
- within_item_sd: sqrt(sum ss / sum (n_runs - 1)), the pooled within-item sd; its
  interval is a Wald interval for the log of the pooled variance with the
  prompt-clustered (CR1) variance of the ratio estimator, back-transformed and
  square-rooted (no interval when every rerun repeats its score: a note).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.drift.settings import DriftSettings
from judge_bias.stats.level_intervals import Estimate, cluster_codes, clustered_wilson, z_value

STABILITY_COLUMNS: dict[str, str] = (
    {"judge": "str", "dimension": "str"}
    | dict.fromkeys(("n_items", "n_prompts", "n_runs"), "int64")
    | {
        f"{m}{s}": "float64"
        for m in ("flip_rate", "pass_cross_rate", "within_item_sd")
        for s in ("", "_ci_low", "_ci_high")
    }
    | dict.fromkeys(("mean_score", "pass_threshold", "ci_level"), "float64")
    | {"notes": "str"}
)


def pooled_sd(ss: np.ndarray, runs: np.ndarray, prompts: np.ndarray, level: float) -> Estimate:
    """Pooled within-item sd with a log-variance Wald interval (prompt-clustered)."""
    ss, df = np.asarray(ss, dtype=float), np.asarray(runs, dtype=float) - 1
    if df.sum() <= 0:
        return Estimate(None, note="no reruns")
    var = float(ss.sum() / df.sum())
    if var <= 0:
        return Estimate(0.0, note="within_item_sd: every rerun repeats its score, no interval")
    codes, g = cluster_codes(prompts)
    if g < 2:
        return Estimate(float(np.sqrt(var)), note="fewer than 2 prompts: no interval")
    resid = np.bincount(codes, weights=ss - var * df, minlength=g)
    se_log = float(np.sqrt(g / (g - 1) * np.sum(resid**2)) / df.sum()) / var
    half = z_value(level) * se_log
    return Estimate(
        float(np.sqrt(var)), float(np.sqrt(var * np.exp(-half))), float(np.sqrt(var * np.exp(half)))
    )


def stability_statistics(items: pd.DataFrame, settings: DriftSettings) -> dict[str, object]:
    """The judge_stability statistics of one group of items."""
    prompts = items["prompt_id"].to_numpy(dtype=object)
    runs = items["n_runs"].to_numpy(dtype=float)
    est = {
        "flip_rate": clustered_wilson(
            items["discordant_share"].to_numpy(dtype=float), prompts, settings.ci_level, cap=False
        ),
        "pass_cross_rate": clustered_wilson(
            (
                (items["min_score"].to_numpy(dtype=float) < settings.pass_threshold)
                & (items["max_score"].to_numpy(dtype=float) >= settings.pass_threshold)
            ).astype(float),
            prompts,
            settings.ci_level,
        ),
        "within_item_sd": pooled_sd(
            items["ss"].to_numpy(dtype=float), runs, prompts, settings.ci_level
        ),
    }
    row: dict[str, object] = {
        "n_items": len(items),
        "n_prompts": cluster_codes(prompts)[1],
        "n_runs": int(runs.sum()),
        "mean_score": float(np.average(items["mean_score"], weights=runs)),
    }
    notes = []
    for name, e in est.items():
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = e.point, e.low, e.high
        if e.note and e.note not in notes:
            notes.append(e.note)
    row["notes"] = "; ".join(notes) or None
    return row


def judge_stability_mart(
    items: pd.DataFrame, settings: DriftSettings | None = None
) -> pd.DataFrame:
    """One row per judge x dimension with reruns (`all` pooled where a judge has
    several dimensions)."""
    s = settings or DriftSettings()
    if items.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in STABILITY_COLUMNS.items()})
    groups = [items]
    multi = items.groupby("judge")["dimension"].transform("nunique") > 1
    if multi.any():
        groups.append(items[multi].assign(dimension="all"))
    out = [
        {"judge": judge, "dimension": dimension} | stability_statistics(g, s)
        for (judge, dimension), g in pd.concat(groups).groupby(["judge", "dimension"], sort=True)
    ]
    frame = pd.DataFrame(out)
    frame["pass_threshold"] = s.pass_threshold
    frame["ci_level"] = s.ci_level
    return frame[list(STABILITY_COLUMNS)].astype(
        {c: t for c, t in STABILITY_COLUMNS.items() if t == "float64"}
    )
