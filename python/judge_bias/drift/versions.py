"""judge_drift: two versions of a judge on the items both rated (an anchor set).

An item is prompt x model x framing of one dimension; each version's rating of it is
its first run (run_id order; reruns are judge_stability's). On those items, with x
the previous version's normalised score and y the new one's:

- mean shift = mean(y - x), a paired mean with a prompt-clustered (CR1) t interval
  and p-value (items of one prompt are not independent);
- agreement of the two versions: quadratic-weighted kappa (moment form,
  ``stats.binary_agreement``) and Krippendorff's alpha (interval metric, two
  coders, no missing values: 1 - (2N - 1) sum (x - y)^2 / (2N SS), SS the squared
  deviations of the 2N values from their mean), each with a percentile bootstrap
  over prompts; Spearman with the Fisher-z interval of Bonett and Wright (2000),
  which assumes independent items;
- flip rate: the share of items whose score differs; pass-flip rate: whose
  pass/fail verdict differs (prompt-clustered Wilson intervals);
- where human scores exist: accuracy of each version's verdict against the human
  verdict and its change, a paired mean of the per-item difference (CR1 t).

Drift flag (docs/drift.md): the shift interval excludes 0 and |shift| >=
drift_min_shift, or the pass-flip rate's lower bound exceeds drift_max_flip_rate,
or the accuracy-change interval excludes 0 and |change| >= drift_min_shift.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.drift.settings import DriftSettings
from judge_bias.stats.binary_cells import Moment, qwk_moments
from judge_bias.stats.level_intervals import (
    Estimate,
    cluster_bootstrap_counts,
    cluster_codes,
    clustered_mean,
    clustered_mean_p_value,
    clustered_wilson,
    percentile,
    z_value,
)

ITEM = ["dimension", "prompt_id", "model", "framing"]
INTERVALS = (
    "mean_shift",
    "qwk",
    "alpha_interval",
    "spearman",
    "flip_rate",
    "pass_flip_rate",
    "accuracy_change",
)
DRIFT_COLUMNS: dict[str, str] = (
    {"judge_before": "str", "judge_after": "str", "dimension": "str"}
    | dict.fromkeys(("n_items", "n_prompts"), "int64")
    | dict.fromkeys(("mean_before", "mean_after"), "float64")
    | {f"{m}{s}": "float64" for m in INTERVALS for s in ("", "_ci_low", "_ci_high")}
    | {"mean_shift_p_value": "float64", "n_labelled": "int64"}
    | dict.fromkeys(("accuracy_before", "accuracy_after"), "float64")
    | {"drift_flag": "bool", "drift_reasons": "str", "ci_level": "float64", "notes": "str"}
)


def alpha_interval_two(
    n: Moment, sx: Moment, sy: Moment, sxx: Moment, syy: Moment, sxy: Moment
) -> np.ndarray:
    """Krippendorff's interval alpha of two coders who both rated every one of n
    units, from the sums of x, y, x^2, y^2, xy; NaN where the values do not vary."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ss = sxx + syy - (sx + sy) ** 2 / (2 * n)
        d2 = sxx + syy - 2 * sxy
        return np.where(ss > 1e-12, 1 - (2 * n - 1) * d2 / (2 * n * ss), np.nan)


def spearman_interval(x: np.ndarray, y: np.ndarray, level: float) -> Estimate:
    """Spearman's rho (ties averaged) with the Bonett-Wright Fisher-z interval."""
    n = x.size
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Estimate(None, note="spearman: fewer than 3 items or a constant version")
    rho = float(stats.spearmanr(x, y).statistic)
    if n < 4 or abs(rho) >= 1:
        return Estimate(rho, rho if abs(rho) >= 1 else None, rho if abs(rho) >= 1 else None)
    se = np.sqrt((1 + rho**2 / 2) / (n - 3))
    z = np.arctanh(rho)
    half = z_value(level) * se
    return Estimate(rho, float(np.tanh(z - half)), float(np.tanh(z + half)))


def drift_statistics(
    before: np.ndarray,
    after: np.ndarray,
    prompts: np.ndarray,
    human: np.ndarray | None = None,
    settings: DriftSettings | None = None,
) -> dict[str, object]:
    """Every judge_drift statistic of one version pair x dimension from the paired
    normalised scores (``human`` NaN where unlabelled)."""
    s = settings or DriftSettings()
    x, y = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    prompts = np.asarray(prompts, dtype=object)
    n = x.size
    notes: list[str] = []
    row: dict[str, object] = {"n_items": n, "n_prompts": cluster_codes(prompts)[1]}
    if n == 0:
        row.update({"n_labelled": 0, "drift_flag": False, "notes": "no items both versions rated"})
        return row
    row["mean_before"], row["mean_after"] = float(x.mean()), float(y.mean())
    est: dict[str, Estimate] = {
        "mean_shift": clustered_mean(y - x, prompts, s.ci_level),
        "flip_rate": clustered_wilson((np.abs(y - x) > 1e-9).astype(float), prompts, s.ci_level),
        "pass_flip_rate": clustered_wilson(
            ((x >= s.pass_threshold) != (y >= s.pass_threshold)).astype(float), prompts, s.ci_level
        ),
        "spearman": spearman_interval(x, y, s.ci_level),
    }
    row["mean_shift_p_value"] = clustered_mean_p_value(y - x, prompts)
    codes, g = cluster_codes(prompts)
    sums = np.vstack(
        [
            np.bincount(codes, weights=w, minlength=g)
            for w in (np.ones(n), x, y, x * x, y * y, x * y)
        ]
    )
    tot = sums.sum(axis=1)
    boot = cluster_bootstrap_counts(g, s.n_boot, s.seed) @ sums.T if g >= 2 else None
    for name, fn in (("qwk", qwk_moments), ("alpha_interval", alpha_interval_two)):
        point = fn(*tot)
        if not np.isfinite(point):
            est[name] = Estimate(None, note=f"{name}: both versions one constant (0/0)")
        elif boot is None:
            est[name] = Estimate(float(point), note="fewer than 2 prompts: no bootstrap interval")
        else:
            est[name] = Estimate(float(point), *percentile(fn(*boot.T), s.ci_level))
    h = np.full(n, np.nan) if human is None else np.asarray(human, dtype=float)
    lab = np.isfinite(h)
    row["n_labelled"] = int(lab.sum())
    if lab.any():
        hp = h[lab] >= s.pass_threshold
        right_x = ((x[lab] >= s.pass_threshold) == hp).astype(float)
        right_y = ((y[lab] >= s.pass_threshold) == hp).astype(float)
        row["accuracy_before"], row["accuracy_after"] = right_x.mean(), right_y.mean()
        est["accuracy_change"] = clustered_mean(right_y - right_x, prompts[lab], s.ci_level)
    for name, e in est.items():
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = e.point, e.low, e.high
        if e.note and e.note not in notes:
            notes.append(e.note)
    reasons = flag_reasons(row, s)
    row["drift_flag"] = bool(reasons)
    row["drift_reasons"] = ", ".join(reasons) or None
    row["notes"] = "; ".join(notes) or None
    return row


def _excludes_zero_and_large(row: dict[str, object], name: str, threshold: float) -> bool:
    point, low, high = row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if point is None or low is None or high is None:
        return False
    return (float(low) > 0 or float(high) < 0) and abs(float(point)) >= threshold  # type: ignore[arg-type]


def flag_reasons(row: dict[str, object], s: DriftSettings) -> list[str]:
    """Which parts of the drift rule fire: shift, flips, accuracy."""
    reasons = []
    if _excludes_zero_and_large(row, "mean_shift", s.drift_min_shift):
        reasons.append("shift")
    low = row.get("pass_flip_rate_ci_low")
    if low is not None and float(low) > s.drift_max_flip_rate:  # type: ignore[arg-type]
        reasons.append("flips")
    if _excludes_zero_and_large(row, "accuracy_change", s.drift_min_shift):
        reasons.append("accuracy")
    return reasons


def judge_drift_mart(
    items: pd.DataFrame, pairs: pd.DataFrame, settings: DriftSettings | None = None
) -> pd.DataFrame:
    """One row per declared version pair x dimension (`all` pooled where the pair
    shares several dimensions; a pair without shared items gets one `all` row with a
    note). ``items``: judge, dimension, prompt_id, model, framing, judge_score_norm,
    human_score_norm, one row per judge x item; ``pairs``: judge_before, judge_after."""
    s = settings or DriftSettings()
    out: list[dict[str, object]] = []
    cols = [*ITEM, "judge_score_norm"]
    for before_name, after_name in (
        pairs[["judge_before", "judge_after"]].drop_duplicates().itertuples(index=False)
    ):
        b = items.loc[items["judge"] == before_name, [*cols, "human_score_norm"]]
        a = items.loc[items["judge"] == after_name, cols]
        both = b.merge(a, on=ITEM, suffixes=("_before", "_after"))
        slices = [(d, g) for d, g in both.groupby("dimension", sort=True)]
        if both["dimension"].nunique() != 1:
            slices.append(("all", both))
        for dimension, g in slices:
            stats_row = drift_statistics(
                g["judge_score_norm_before"].to_numpy(),
                g["judge_score_norm_after"].to_numpy(),
                g["prompt_id"].to_numpy(dtype=object),
                g["human_score_norm"].to_numpy(dtype=float),
                s,
            )
            out.append(
                {"judge_before": before_name, "judge_after": after_name, "dimension": dimension}
                | stats_row
            )
    frame = pd.DataFrame(out, columns=list(DRIFT_COLUMNS))
    frame["ci_level"] = s.ci_level
    frame["drift_flag"] = frame["drift_flag"].fillna(False).astype(bool)
    floats = {c: "float64" for c, t in DRIFT_COLUMNS.items() if t == "float64"}
    return frame.astype(floats | {"n_items": "int64", "n_prompts": "int64", "n_labelled": "int64"})
