"""Counterfactual agreement: the interval alpha between a judge and the human reference,
raw and after an offset/scale calibration refitted on every prompt-bootstrap replicate
(from per prompt x dimension moments). The calibrated alpha is in-sample.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from judge_bias.agreement.judge_human import frame, segments
from judge_bias.limits import Budget

# a spread (sum of squared deviations) at most this share of the sum of squares is
# rounding error of the moment formula: every value equal, alpha undefined (null)
NO_SPREAD = 1e-12
# bytes per row of int_agreement_prompt_sums at the mart's peak (the fetched codes and
# sums, the coded frame, its sorted copy, the per-judge columns and the bootstrap:
# at 10M the process grew by 745 MB over 1.67M rows): agreement_counterfactual reads
# whole judges in parts of a quarter of the budget by it
PROMPT_SUM_BYTES = 450


COUNTERFACTUAL_COLUMNS: dict[str, str] = {
    "judge": "str",
    "n_items": "int64",
    "n_prompts": "int64",
    "alpha_observed": "float64",
    "alpha_observed_ci_low": "float64",
    "alpha_observed_ci_high": "float64",
    "alpha_calibrated": "float64",
    "alpha_calibrated_ci_low": "float64",
    "alpha_calibrated_ci_high": "float64",
    "correctable_share": "float64",
    "n_boot": "int64",
    "notes": "string",
}


def interval_alpha_two_coders(a: np.ndarray, b: np.ndarray) -> float:
    """Krippendorff's interval alpha between two coders who both coded every item.

    Closed form of the coincidence-matrix definition for that case (tested
    against the krippendorff package): with n = 2N pairable values v,
    alpha = 1 - (n - 1) * sum((a - b)^2) / (n * sum((v - mean(v))^2)).
    Used because the bootstrap calls it hundreds of times. Every value equal (no
    variance) leaves alpha undefined: a ValueError.
    """
    values = np.concatenate([a, b])
    n = values.size
    spread = float(((values - values.mean()) ** 2).sum())
    if spread <= NO_SPREAD * float((values**2).sum()):
        raise ValueError("interval alpha is undefined: every score is equal (no variance)")
    return 1.0 - (n - 1) * float(((a - b) ** 2).sum()) / (n * spread)


def calibrate(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    """The judge's scores with its systematic offset and scale removed: shifted and
    scaled to the human reference's mean and standard deviation."""
    sd = judge.std(ddof=1)
    if not sd > 0:
        return np.full_like(judge, human.mean())
    return human.mean() + (judge - judge.mean()) * human.std(ddof=1) / sd


def _alpha_from_prompt_sums(w: np.ndarray, sums: dict[str, np.ndarray]) -> np.ndarray:
    """interval_alpha_two_coders on the rows of prompts weighted by w (one row of
    w per bootstrap replicate), from per-prompt sums: the bootstrap without copies."""
    return _alpha_from_totals(_weighted_totals(w, _alpha_columns(sums)))


def _alpha_columns(sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The per-prompt columns whose weighted totals _alpha_from_totals takes."""
    return {"n": sums["n"], "ab": sums["a"] + sums["b"], "sq": sums["aa"] + sums["bb"],
            "d2": sums["d2"]}  # fmt: skip


def _alpha_from_totals(t: dict[str, np.ndarray]) -> np.ndarray:
    """_alpha_from_prompt_sums from the weighted totals (B) of _alpha_columns."""
    n = 2 * t["n"]
    mean = t["ab"] / n
    squares = t["sq"]
    spread = squares - n * mean**2
    with np.errstate(invalid="ignore", divide="ignore"):  # no spread: NaN, kept apart
        alpha = 1.0 - (n - 1) * t["d2"] / (n * spread)
    return np.where(spread > NO_SPREAD * squares, alpha, np.nan)


def _weighted_totals(w: np.ndarray, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``w @ v`` for each per-prompt array v (P, or P x D) of ``columns``, from one
    matrix product: one pass over the B x P weights instead of one per array (at
    1M ratings the twelve products were a third of agreement_counterfactual's time)."""
    return _split(w @ _stacked(columns), columns)


def _stacked(columns: dict[str, np.ndarray]) -> np.ndarray:
    """The per-prompt arrays of ``columns`` side by side (P x k): the right operand of
    _weighted_totals' product, stacked once per judge, not once per batch."""
    return np.hstack([v.reshape(v.shape[0], -1) for v in columns.values()])


def _split(stacked: np.ndarray, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A product with _stacked(columns) cut back into one B-row total per column."""
    out, start = {}, 0
    for key, v in columns.items():
        width = v.shape[1] if v.ndim > 1 else 1
        part = stacked[:, start : start + width]
        out[key] = part if v.ndim > 1 else part[:, 0]
        start += width
    return out


def _calibrated_alpha(w: np.ndarray, m: dict[str, np.ndarray]) -> np.ndarray:
    """Interval alpha between calibrated judge scores and the human reference for
    each row of prompt weights ``w`` (B x P), the calibration (offset and scale
    per dimension, as calibrate() does) refitted on each weighted sample.
    ``m``: per prompt x dimension sums (P x D) of n, a, b, aa, bb, ab. NaN where
    the calibrated and human scores have no spread (alpha undefined)."""
    return _calibrated_alpha_from_totals(_weighted_totals(w, m))


def _calibrated_alpha_from_totals(t: dict[str, np.ndarray]) -> np.ndarray:
    """_calibrated_alpha from the B x D weighted totals of n, a, b, aa, bb, ab."""
    n, a, b, aa, bb, ab = (t[key] for key in ("n", "a", "b", "aa", "bb", "ab"))
    # cells without rows or spread divide by 0: np.where below keeps only the defined
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a, mean_b = a / n, b / n
        sd_a = np.sqrt((aa - n * mean_a**2) / (n - 1))
        sd_b = np.sqrt((bb - n * mean_b**2) / (n - 1))
        k = np.where((n > 1) & (sd_a > 0), sd_b / sd_a, 0.0)  # calibrate(): constant if sd_a = 0
    c0 = np.where(n > 0, mean_b - k * np.nan_to_num(mean_a), 0.0)
    c = (c0 * n + k * a).sum(axis=1)
    cc = (c0**2 * n + 2 * c0 * k * a + k**2 * aa).sum(axis=1)
    cb = (c0 * b + k * ab).sum(axis=1)
    b_sum, bb_sum = b.sum(axis=1), bb.sum(axis=1)
    total = 2 * n.sum(axis=1)
    spread = cc + bb_sum - (c + b_sum) ** 2 / total
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (total - 1) * (cc - 2 * cb + bb_sum) / (total * spread)
    return np.where(spread > NO_SPREAD * (cc + bb_sum), alpha, np.nan)


NAMES = (
    ("alpha_observed", "judge and human scores"),
    ("alpha_calibrated", "calibrated judge and human scores"),
)


def _resample_counts(
    rng: np.random.Generator, out: np.ndarray, rows_per_draw: int = 16
) -> np.ndarray:
    """``out`` (replicates x prompts, float) filled with the prompt bootstrap's counts:
    the rows of ``rng.multinomial(n_prompts, uniform, size=len(out))``, drawn
    ``rows_per_draw`` at a time (the same generator gives the same rows in the same
    order) into a buffer reused across batches and judges. At 10M ratings (139k
    prompts, batches of 112) the int64 draw and its float copy were two fresh
    125 MB arrays per batch, their page faults ~0.5 CPU s per judge."""
    n_prompts = out.shape[1]
    p = np.full(n_prompts, 1.0 / n_prompts)
    for start in range(0, len(out), rows_per_draw):
        stop = min(start + rows_per_draw, len(out))
        out[start:stop] = rng.multinomial(n_prompts, p, size=stop - start)
    return out


def _point_and_interval(
    point: float, boot: np.ndarray, name: tuple[str, str], n_boot: int, notes: list[str]
) -> tuple[float | None, float | None, float | None]:
    """The estimate and its percentile interval; null where alpha is undefined (no
    variance), and replicates without variance left out of the interval, each with a
    note."""
    column, scores = name
    if not np.isfinite(point):
        notes.append(f"{column} null: every one of the {scores} is equal (no variance)")
        return None, None, None
    finite = boot[np.isfinite(boot)]
    if finite.size < boot.size:
        notes.append(
            f"{column}: {boot.size - finite.size} of {boot.size} bootstrap replicates "
            "have no variance (alpha undefined) and are left out of its interval"
        )
    low, high = np.percentile(finite, [2.5, 97.5])
    return point, float(low), float(high)


def _correctable_share(observed: float | None, after: float | None) -> float | None:
    if observed is None or after is None:
        return None
    return (after - observed) / (1 - observed) if observed < 1 else 0.0


def counterfactual_from_prompt_sums(
    sums: pd.DataFrame, n_boot: int = 200, seed: int = 20250101, budget: Budget | None = None
) -> pd.DataFrame:
    """Interval alpha between each judge and the human reference, observed and after
    calibration (offset and scale removed per dimension, as calibrate() does), with
    percentile bootstrap 95% intervals over prompts: how much disagreement
    calibration could remove. From per judge x dimension x prompt sums
    (int_agreement_prompt_sums: n, sum_a, sum_b, sum_aa, sum_bb, sum_ab over the
    completions; a = judge, b = human score). The calibrated score
    c = mean_b + (a - mean_a) * sd_b / sd_a of each judge x dimension is linear in
    a, so its sums follow from the same moments. The calibrated alpha is
    in-sample (offset and scale are fitted on the ratings it is computed on); the
    bootstrap refits them on every replicate, so its interval carries the
    fitting's variability too. Where every score is equal alpha is undefined: the
    estimate is null and ``notes`` says why."""
    return counterfactual_from_parts([sums], n_boot, seed, budget)


def counterfactual_from_parts(
    parts: Iterable[pd.DataFrame],
    n_boot: int = 200,
    seed: int = 20250101,
    budget: Budget | None = None,
) -> pd.DataFrame:
    """counterfactual_from_prompt_sums of the sums read in parts: each part holds
    whole judges, the parts come in the judges' sorted order, so one generator gives
    every judge the draws it gets from the whole table (the same rows, bit for bit),
    and only one part is in memory at a time (agreement_counterfactual sizes them to
    a quarter of the memory budget)."""
    rng = np.random.default_rng(seed)
    budget = budget or Budget()
    rows: list[dict] = []
    buffer = [np.empty((0, 0))]  # the replicates' prompt counts, reused across judges
    for sums in parts:
        rows += _judge_rows(sums, n_boot, rng, budget, buffer)
        del sums  # not held while the next part is read (review18d)
    # typed columns: an undefined alpha is a null float (DuckDB reads NaN from pandas
    # as NULL), not an object column of None
    return frame(rows, COUNTERFACTUAL_COLUMNS).astype(COUNTERFACTUAL_COLUMNS)


def _judge_rows(
    sums: pd.DataFrame,
    n_boot: int,
    rng: np.random.Generator,
    budget: Budget,
    buffer: list[np.ndarray],
) -> list[dict]:
    """The mart's rows of the judges of ``sums`` (whole judges), in their sorted
    order, drawing from ``rng``; ``buffer[0]`` holds the reused prompt counts."""
    rows = []
    keys = [c for c in ("judge", "prompt_id", "dimension") if c in sums.columns]
    sums = sums.sort_values(keys, kind="stable").reset_index(drop=True)
    judge_code, judges = pd.factorize(sums["judge"], sort=True)
    judges = np.asarray(judges, dtype=object)
    order, runs = segments(judge_code)
    columns = {c: sums[c].to_numpy(dtype=float)[order] for c in
               ("n", "sum_a", "sum_b", "sum_aa", "sum_bb", "sum_ab")}  # fmt: skip
    # integer codes (in order of appearance, as the per-judge factorize below numbers
    # them): no Python object per row
    weights = buffer[0]
    dimensions = pd.factorize(sums["dimension"])[0][order]
    prompts = pd.factorize(sums["prompt_id"])[0][order]
    for start, end in runs:  # each judge's rows in input order, judges sorted
        judge = judges[judge_code[order[start]]]
        m = {c: v[start:end] for c, v in columns.items()}
        raw = {"n": m["n"], "a": m["sum_a"], "b": m["sum_b"], "aa": m["sum_aa"],
               "bb": m["sum_bb"], "d2": m["sum_aa"] - 2 * m["sum_ab"] + m["sum_bb"]}  # fmt: skip
        dim = pd.factorize(dimensions[start:end])[0]
        prompt = pd.factorize(prompts[start:end])[0]
        n_prompts = int(prompt.max()) + 1
        per_prompt = {
            key: np.bincount(prompt, weights=v, minlength=n_prompts) for key, v in raw.items()
        }
        # per prompt x dimension moments: the calibration is refitted on each replicate
        # (bincount adds in input order, as np.add.at did: the same sums, ~10x faster)
        n_dims = int(dim.max()) + 1
        cell = prompt * n_dims + dim
        per_cell = {
            key: np.bincount(cell, weights=m[col], minlength=n_prompts * n_dims).reshape(
                n_prompts, n_dims
            )
            for key, col in (("n", "n"), ("a", "sum_a"), ("b", "sum_b"), ("aa", "sum_aa"),
                             ("bb", "sum_bb"), ("ab", "sum_ab"))
        }  # fmt: skip
        ones = np.ones((1, n_prompts))
        points = [
            _alpha_from_prompt_sums(ones, per_prompt)[0],
            _calibrated_alpha(ones, per_cell)[0],
        ]
        if n_prompts == 1:  # every replicate is the sample (and draws no random number)
            boots = [np.full(1, point) for point in points]
        else:  # replicates in batches within the budget: the same draws as one call
            parts: list[list[np.ndarray]] = [[], []]
            # both alphas' per-prompt columns, weighted in one product per batch
            alpha_columns = _alpha_columns(per_prompt)
            alpha_keys = list(alpha_columns)
            columns_of_w = {f"p_{k}": v for k, v in alpha_columns.items()} | per_cell
            right = _stacked(columns_of_w)
            step = min(budget.batch(n_prompts), n_boot)
            if weights.shape != (step, n_prompts):  # judges rating the same prompts share it
                weights = buffer[0] = np.empty((step, n_prompts))
            for done in range(0, n_boot, step):
                size = min(step, n_boot - done)
                w = _resample_counts(rng, weights[:size])
                t = _split(w @ right, columns_of_w)
                parts[0].append(_alpha_from_totals({k: t[f"p_{k}"] for k in alpha_keys}))
                parts[1].append(_calibrated_alpha_from_totals({k: t[k] for k in per_cell}))
            boots = [np.concatenate(part) for part in parts]
        notes: list[str] = []
        (observed, o_lo, o_hi), (after, a_lo, a_hi) = [
            _point_and_interval(point, boot, name, n_boot, notes)
            for point, boot, name in zip(points, boots, NAMES, strict=True)
        ]
        rows.append(
            {
                "judge": judge,
                "n_items": int(m["n"].sum()),
                "n_prompts": n_prompts,
                "alpha_observed": observed,
                "alpha_observed_ci_low": o_lo,
                "alpha_observed_ci_high": o_hi,
                "alpha_calibrated": after,
                "alpha_calibrated_ci_low": a_lo,
                "alpha_calibrated_ci_high": a_hi,
                "correctable_share": _correctable_share(observed, after),
                "n_boot": n_boot,
                "notes": "; ".join(notes) or None,
            }
        )
    return rows
