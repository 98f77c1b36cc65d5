"""CALM perturbation rates per judge x bias type (calm_justice_or_prejudice.txt,
Section 2.3).

Input: the accepted rows of ``int_perturbation_checked`` (judge, item_id,
bias_type, condition in original / repeat / perturbed, run_id, verdict
(normalised text), score, ground_truth). A unit is one item of one run
(judge, bias_type, item_id, run_id): its original judgment is compared with
its repeat and its perturbed judgment of the same run.

- robustness_rate (CALM's RR): share of units with an original and a
  perturbed judgment where the judgment is unchanged.
- consistency_rate (CR): the same for original vs repeat.
- accuracy_original / accuracy_perturbed: share of original (perturbed)
  judgments equal to ground_truth, among those with a ground truth.
- relative_change: (b - a) / a with a = mean original score and b = mean
  perturbed score over units scored in both conditions: the signed measure of
  a score-based bias (0 when the perturbation does not move the scores).
- error_rate (CALM's Err. for score-based biases): |b - a| / a, as DESIGN.md
  writes CALM's |self - other| / other (self-enhancement: other = the score
  without the self cue = original) and |refined - refined with history| /
  refined (refinement-aware: refined = original); can exceed 1.

The verdict rates (robustness, consistency, accuracy) compare verdicts only:
continuous scores almost never compare equal, so a rate over scores would
read "never robust" whatever the judge does. A bias type measured by scores
alone gets null verdict rates and a note; relative_change and error_rate are
its measures. A ground truth is compared with the verdict as text.

Intervals (95%): the rates get Wilson intervals with a design-effect sample
size, clusters = items (``intervals.clustered_rates``; exactly Wilson when
each item has one run); relative_change gets a percentile bootstrap over
items (``n_boot`` replicates, from per-item sums), and error_rate the image
of that interval under |.|: [0, max |end|] when it contains 0, else
[min |end|, max |end|] (it covers whenever the signed interval does; a
percentile interval of |.| itself can never contain 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.limits import Budget
from judge_bias.stats.intervals import clustered_rates
from judge_bias.stats.numeric import to_float

RATES = ("robustness_rate", "consistency_rate", "accuracy_original", "accuracy_perturbed")
RATE_CI = "Wilson, design-effect n (clusters = items)"
CI_METHOD = (
    f"rates: {RATE_CI}; relative_change: percentile bootstrap over items; "
    "error_rate: |relative_change interval|"
)
SCORE_ONLY_NOTE = (
    "measured by scores only: robustness, consistency and accuracy need verdicts "
    "(continuous scores never compare equal); see relative_change and error_rate"
)
PERTURBATION_BIAS_COLUMNS: dict[str, str] = {
    "judge": "string",
    "bias_type": "string",
    "n_items": "Int64",
    **{
        col: dtype
        for rate in RATES
        for col, dtype in (
            (f"n_{rate}", "Int64"),
            (rate, "float64"),
            (f"{rate}_ci_low", "float64"),
            (f"{rate}_ci_high", "float64"),
        )
    },
    "n_error_rate": "Int64",
    "mean_score_original": "float64",
    "mean_score_perturbed": "float64",
    "relative_change": "float64",
    "relative_change_ci_low": "float64",
    "relative_change_ci_high": "float64",
    "error_rate": "float64",
    "error_rate_ci_low": "float64",
    "error_rate_ci_high": "float64",
    "ci_method": "string",
    "notes": "string",
}
KEY = ["judge", "bias_type", "item_id", "run_id"]
# the item sums' prefix of each rate (int_perturbation_item_sums: <prefix>_d, <prefix>_y)
RATE_SUMS = {
    "robustness": "robustness_rate",
    "consistency": "consistency_rate",
    "accuracy_original": "accuracy_original",
    "accuracy_perturbed": "accuracy_perturbed",
}
PERTURBATION_ROW_BYTES = 8 * 80  # an accepted row pulled into pandas (8 columns as objects)
PERTURBATION_SUM_BYTES = 16 * 80  # a row of int_perturbation_item_sums in pandas (16 columns)


def _same(a_verdict: pd.Series, b_verdict: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(comparable, equal) per unit: both sides have a verdict, and they agree."""
    usable = (a_verdict.notna() & b_verdict.notna()).to_numpy(dtype=bool)
    return usable, (a_verdict == b_verdict).fillna(False).to_numpy(dtype=bool) & usable


def _correct(verdict: pd.Series, truth: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(has a verdict and a ground truth, the verdict is the ground truth) per unit."""
    usable = (verdict.notna() & truth.notna()).to_numpy(dtype=bool)
    return usable, (verdict == truth).fillna(False).to_numpy(dtype=bool) & usable


def _wide(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per unit with verdict/score/ground_truth of each condition."""
    cols = ["verdict", "score", "ground_truth"]
    rows = rows.assign(score=to_float(rows["score"], "score", len(rows)))
    for col in ("verdict", "ground_truth"):
        rows[col] = rows[col].astype(object).where(rows[col].notna(), None)
    wide = rows.pivot(index=KEY, columns="condition", values=cols)
    wide.columns = [f"{value}_{condition}" for value, condition in wide.columns]
    for condition in ("original", "repeat", "perturbed"):
        for value in cols:
            name = f"{value}_{condition}"
            if name not in wide.columns:
                wide[name] = np.nan
    wide = wide.reset_index()
    for name in wide.columns:
        if name.startswith("score_"):
            wide[name] = to_float(wide[name], name, len(wide))
        elif name.startswith(("verdict_", "ground_truth_")):
            wide[name] = wide[name].astype(object).where(wide[name].notna(), None)
    return wide


def _rate(sums: pd.DataFrame, name: str, rate: str) -> pd.DataFrame:
    """``name``'s n, rate and clustered interval per judge x bias type from the item
    sums: ``<rate>_y`` agreeing of ``<rate>_d`` comparable units per item."""
    table = pd.DataFrame(
        {
            "judge": sums["judge"],
            "bias_type": sums["bias_type"],
            "item": sums["item_id"],
            "y": sums[f"{rate}_y"].to_numpy(dtype=float),
            "d": sums[f"{rate}_d"].to_numpy(dtype=float),
        }
    )
    table = table[table["d"] > 0]
    if table.empty:
        return pd.DataFrame(columns=[f"n_{name}", name, f"{name}_ci_low", f"{name}_ci_high"])
    rates = clustered_rates(table, ["judge", "bias_type"], "item").drop(columns="n_eff")
    return rates.rename(
        columns={
            "n": f"n_{name}",
            "rate": name,
            "ci_low": f"{name}_ci_low",
            "ci_high": f"{name}_ci_high",
        }
    )


ERROR_COLUMNS = [
    "judge", "bias_type", "n_error_rate", "mean_score_original", "mean_score_perturbed",
    "relative_change", "relative_change_ci_low", "relative_change_ci_high",
    "error_rate", "error_rate_ci_low", "error_rate_ci_high",
]  # fmt: skip


def abs_interval(low: float, high: float) -> tuple[float, float]:
    """The image of the interval [low, high] under |.|."""
    if low <= 0 <= high:
        return 0.0, max(-low, high)
    return min(abs(low), abs(high)), max(abs(low), abs(high))


def _error_rates(sums: pd.DataFrame, n_boot: int, seed: int, budget: Budget) -> pd.DataFrame:
    """relative_change and error_rate per judge x bias type from the item sums (items
    in item_id order: the bootstrap's draws are then the same on every engine)."""
    both = sums[sums["n_scored"] > 0]
    rng = np.random.default_rng(seed)
    rows = []
    for (judge, bias_type), part in both.groupby(["judge", "bias_type"], sort=True):
        n = part["n_scored"].to_numpy(dtype=float)
        a = part["sum_score_original"].to_numpy(dtype=float)
        b = part["sum_score_perturbed"].to_numpy(dtype=float)
        n_items = len(part)
        mean_a, mean_b = a.sum() / n.sum(), b.sum() / n.sum()
        change = (mean_b - mean_a) / mean_a if mean_a != 0 else np.nan
        boot = np.empty(n_boot)
        step = budget.batch(n_items)  # replicates at once: the same draws as one call
        for done in range(0, n_boot, step):
            size = min(step, n_boot - done)
            weights = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=size)
            with np.errstate(divide="ignore", invalid="ignore"):
                boot[done : done + size] = (weights @ b - weights @ a) / (weights @ a)
        low, high = (np.nan, np.nan)
        if np.isfinite(change) and np.isfinite(boot).all():
            low, high = np.percentile(boot, [2.5, 97.5])
        abs_low, abs_high = abs_interval(low, high) if np.isfinite(low) else (np.nan, np.nan)
        rows.append(
            [judge, bias_type, int(n.sum()), mean_a, mean_b, change, low, high,
             abs(change), abs_low, abs_high]
        )  # fmt: skip
    return pd.DataFrame(rows, columns=ERROR_COLUMNS).set_index(["judge", "bias_type"])


SUM_COLUMNS = [
    "judge", "bias_type", "item_id", "n_units", "n_verdicts",
    *(f"{rate}_{part}" for rate in RATE_SUMS for part in ("d", "y")),
    "n_scored", "sum_score_original", "sum_score_perturbed",
]  # fmt: skip


def item_sums(rows: pd.DataFrame) -> pd.DataFrame:
    """From the accepted int_perturbation_checked rows, what the SQL model
    int_perturbation_item_sums computes: per judge x bias type x item, the units
    comparable and agreeing for each rate, the units scored in both conditions
    and their score sums, the verdicts given."""
    if rows.empty:
        return pd.DataFrame(columns=SUM_COLUMNS)
    rows = rows.copy()
    rows["run_id"] = rows["run_id"].fillna("1") if "run_id" in rows else "1"
    wide = _wide(rows)
    truth_o = wide["ground_truth_original"]
    truth_p = wide["ground_truth_perturbed"].where(wide["ground_truth_perturbed"].notna(), truth_o)
    flags = {
        "robustness": _same(wide["verdict_original"], wide["verdict_perturbed"]),
        "consistency": _same(wide["verdict_original"], wide["verdict_repeat"]),
        "accuracy_original": _correct(wide["verdict_original"], truth_o),
        "accuracy_perturbed": _correct(wide["verdict_perturbed"], truth_p),
    }
    scored = (wide["score_original"].notna() & wide["score_perturbed"].notna()).to_numpy()
    units = pd.DataFrame(
        {
            "judge": wide["judge"],
            "bias_type": wide["bias_type"],
            "item_id": wide["item_id"],
            "n_units": 1,
            **{f"{rate}_{k}": v.astype(int) for rate, (d, y) in flags.items()
               for k, v in (("d", d), ("y", y))},
            "n_scored": scored.astype(int),
            "sum_score_original": wide["score_original"].where(scored),
            "sum_score_perturbed": wide["score_perturbed"].where(scored),
        }
    )  # fmt: skip
    keys = ["judge", "bias_type", "item_id"]
    sums = units.groupby(keys, sort=False).sum(min_count=1)
    verdicts = rows.groupby(keys, sort=False)["verdict"].count().rename("n_verdicts")
    return sums.join(verdicts).reset_index().reindex(columns=SUM_COLUMNS)


def perturbation_bias(
    rows: pd.DataFrame, n_boot: int = 1000, seed: int = 20250101, budget: Budget | None = None
) -> pd.DataFrame:
    """The perturbation_bias table (judge x bias_type) from the accepted
    int_perturbation_checked rows (``perturbation_bias_from_sums`` on their
    ``item_sums``); see the module docstring."""
    return perturbation_bias_from_sums(item_sums(rows), n_boot, seed, budget)


def perturbation_bias_from_sums(
    sums: pd.DataFrame, n_boot: int = 1000, seed: int = 20250101, budget: Budget | None = None
) -> pd.DataFrame:
    """The perturbation_bias table (judge x bias_type) from the per-item sums of
    int_perturbation_item_sums; see the module docstring. The bootstrap draws its
    replicates in batches within the memory ``budget``."""
    schema = PERTURBATION_BIAS_COLUMNS
    if sums.empty:
        return pd.DataFrame(columns=list(schema)).astype(schema)
    # item_id order within each judge x bias type, whatever order SQL gave
    sums = sums.sort_values(["judge", "bias_type", "item_id"], kind="stable")
    n_items = sums.groupby(["judge", "bias_type"]).size().rename("n_items")
    table = pd.concat(
        [
            n_items,
            *(_rate(sums, name, rate) for rate, name in RATE_SUMS.items()),
            _error_rates(sums, n_boot, seed, budget or Budget()),
        ],
        axis=1,
    )
    for rate in RATES:
        table[f"n_{rate}"] = table[f"n_{rate}"].fillna(0)
    table["n_error_rate"] = table["n_error_rate"].fillna(0)
    table.index.names = ["judge", "bias_type"]
    has_verdict = sums.groupby(["judge", "bias_type"])["n_verdicts"].sum() > 0
    # numpy's stubs leave None out of ArrayLike; at runtime it is an object scalar (a null note).
    table["notes"] = np.where(  # type: ignore[call-overload]
        has_verdict.reindex(table.index).fillna(False), None, SCORE_ONLY_NOTE
    )
    table = table.reset_index()
    table["ci_method"] = CI_METHOD
    return table.reindex(columns=list(schema)).astype(schema)
