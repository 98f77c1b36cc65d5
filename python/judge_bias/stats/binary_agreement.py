"""Binary and graded agreement of a judge with the human reference (agreement_binary).

A rating passes when its normalised score is at least ``pass_threshold`` (0.5 by
default: the upper half of the scale); the human verdict is the mean human score
(normalised) against the same threshold. On the rows with a human score:

- accuracy, sensitivity P(judge pass | human pass), specificity
  P(judge fail | human fail): rates with a prompt-clustered Wilson interval
  (``level_intervals.clustered_wilson``; plain Wilson with one rating per prompt,
  as truescore's ``judge_agreement``);
- Gwet's AC1 on the two pass/fail verdicts (Gwet 2008): (p_o - p_e) / (1 - p_e),
  p_e = 2 pi (1 - pi), pi the mean pass rate of the two raters (two categories are
  fixed, so p_e <= 1/2 and AC1 is always defined); interval: percentile bootstrap
  over prompts;
- quadratic-weighted kappa on the normalised scores (Cohen 1968), in its moment
  form 1 - mean((x - y)^2) / (var(x) + var(y) + (mean x - mean y)^2) (population
  moments): on integer scores whose every level occurs it is exactly the
  contingency-table QWK of sklearn / truescore; it also takes the human mean of
  several annotators. Null, with a note, when both sides are one constant (0/0);
  interval: percentile bootstrap over prompts.

The Rogan-Gladen (1978) corrected pass rate uses every judge rating, labelled or
not: (p_obs + spec - 1) / (sens + spec - 1), p_obs the judge's pass rate, with a
delta-method (linearisation) interval clustered by prompt that keeps the covariance
of p_obs with sens and spec (``rogan_gladen``; truescore's ``rogan_gladen_estimate``
treats the three as independent), clipped to [0, 1]; null, with a note, when
sens + spec <= 1 or a human class is empty.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from judge_bias.stats.binary_cells import (
    binary_agreement_from_cells,
    gwet_ac1_binary,
    pooled,
    prompt_cells,
    qwk_moments,
)
from judge_bias.stats.level_intervals import (
    Estimate,
    cluster_bootstrap_counts,
    cluster_bootstrap_weights,
    cluster_codes,
    clustered_wilson,
    effective_n,
    percentile,
    z_value,
)

BINARY_COLUMNS: dict[str, str] = (
    {"judge": "str", "dimension": "str"}
    | dict.fromkeys(("n_judged", "n_labelled", "n_prompts"), "int64")
    | dict.fromkeys(("true_pass", "false_pass", "false_fail", "true_fail"), "int64")
    | dict.fromkeys(("judge_pass_rate", "human_pass_rate"), "float64")
    | {
        f"{m}{s}": "float64"
        for m in ("accuracy", "sensitivity", "specificity", "gwet_ac1", "qwk", "rg_pass_rate")
        for s in ("", "_ci_low", "_ci_high")
    }
    | {"pass_threshold": "float64", "ci_level": "float64", "notes": "str"}
)


def quadratic_weighted_kappa(x: np.ndarray, y: np.ndarray) -> float | None:
    """QWK of two score vectors (None when undefined: both one constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size == 0:
        return None
    k = qwk_moments(
        np.float64(x.size), x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum()
    )
    return None if not np.isfinite(k) else float(k)


def rogan_gladen(
    judge_pass: np.ndarray,
    judge_clusters: np.ndarray,
    labelled_judge_pass: np.ndarray,
    human_pass: np.ndarray,
    labelled_clusters: np.ndarray,
    level: float,
    *,
    independent: bool = False,
) -> Estimate:
    """Rogan-Gladen corrected pass rate with its delta-method interval.

    Default: the variance of the estimator's linearisation, summed per prompt (CR1):
    each rating's influence (jp - p)/N - theta 1[pos] (jp - sens)/n_pos
    + (1 - theta) 1[neg] ((1 - jp) - spec)/n_neg, over J. It keeps the covariance of
    p_obs with sens and spec that arises because the labelled ratings are part of
    p_obs (they move together, so the independent form over-covers: 0.99 measured
    at half the ratings labelled). ``independent``: truescore's form, the three
    variances p (1 - p) / n summed as if independent (n the prompt-clustered
    effective sizes), the reference it is tested against."""
    human_pass = np.asarray(human_pass, dtype=bool)
    pos, neg = human_pass, ~human_pass
    if judge_pass.size == 0 or pos.sum() == 0 or neg.sum() == 0:
        return Estimate(None, note="rg_pass_rate: the human verdicts lack a class")
    lj = np.asarray(labelled_judge_pass, dtype=float)
    sens, spec = float(lj[pos].mean()), float(1 - lj[neg].mean())
    youden = sens + spec - 1
    if youden <= 0:
        return Estimate(None, note="rg_pass_rate: sensitivity + specificity <= 1")
    jp = np.asarray(judge_pass, dtype=float)
    p_obs = float(jp.mean())
    theta = (p_obs + spec - 1) / youden
    if independent:
        n_p = effective_n(jp, judge_clusters)
        n_se = effective_n(lj[pos], labelled_clusters[pos])
        n_sp = effective_n(1 - lj[neg], labelled_clusters[neg])
        var = (
            p_obs * (1 - p_obs) / n_p
            + theta**2 * sens * (1 - sens) / n_se
            + (1 - theta) ** 2 * spec * (1 - spec) / n_sp
        ) / youden**2
    else:
        influence = (
            np.concatenate(
                [
                    (jp - p_obs) / jp.size,
                    -theta * np.where(pos, lj - sens, 0.0) / pos.sum()
                    + (1 - theta) * np.where(neg, (1 - lj) - spec, 0.0) / neg.sum(),
                ]
            )
            / youden
        )
        codes, g = cluster_codes(np.concatenate([judge_clusters, labelled_clusters]))
        if g < 2:
            return Estimate(float(np.clip(theta, 0, 1)), note="fewer than 2 prompts: no interval")
        totals = np.bincount(codes, weights=influence, minlength=g)
        var = g / (g - 1) * float(np.sum(totals**2))
    half = z_value(level) * float(np.sqrt(max(var, 0.0)))
    note = "rg_pass_rate: clipped to [0, 1]" if not 0 <= theta <= 1 else None
    clip = lambda v: float(np.clip(v, 0.0, 1.0))  # noqa: E731
    return Estimate(clip(theta), clip(theta - half), clip(theta + half), note)


def binary_agreement(
    judge_score: np.ndarray,
    human_score: np.ndarray,
    prompts: np.ndarray,
    *,
    pass_threshold: float = 0.5,
    level: float = 0.90,
    n_boot: int = 500,
    seed: int = 0,
    boot_counts: Callable[[int, int, int], np.ndarray] = cluster_bootstrap_counts,
) -> dict[str, object]:
    """Every statistic of one judge x dimension; ``human_score`` NaN where unlabelled.
    ``boot_counts``: cluster_bootstrap_counts, or a memo of it (agreement_binary_mart)."""
    js = np.asarray(judge_score, dtype=float)
    hs = np.asarray(human_score, dtype=float)
    prompts = np.asarray(prompts, dtype=object)
    notes: list[str] = []
    lab = np.isfinite(hs)
    x, y, cl = js[lab], hs[lab], prompts[lab]
    jp_all = js >= pass_threshold
    jp, hp = x >= pass_threshold, y >= pass_threshold
    row: dict[str, object] = {
        "n_judged": int(js.size),
        "n_labelled": int(lab.sum()),
        "n_prompts": int(cluster_codes(cl)[1]),
        "true_pass": int((jp & hp).sum()),
        "false_pass": int((jp & ~hp).sum()),
        "false_fail": int((~jp & hp).sum()),
        "true_fail": int((~jp & ~hp).sum()),
        "judge_pass_rate": float(jp_all.mean()) if js.size else None,
        "human_pass_rate": float(hp.mean()) if hp.size else None,
    }
    rates = {
        "accuracy": clustered_wilson((jp == hp).astype(float), cl, level),
        "sensitivity": clustered_wilson(jp[hp].astype(float), cl[hp], level),
        "specificity": clustered_wilson((~jp[~hp]).astype(float), cl[~hp], level),
    }
    if not hp.any():
        notes.append("sensitivity: no human pass")
    if hp.size and hp.all():
        notes.append("specificity: no human fail")
    ac1 = qwk = Estimate(None)
    if x.size:
        codes, g = cluster_codes(cl)
        sums = np.vstack(
            [
                np.bincount(codes, weights=w, minlength=g)
                for w in (jp & hp, jp & ~hp, ~jp & hp, ~jp & ~hp, np.ones_like(x), x, y)
            ]
            + [np.bincount(codes, weights=w, minlength=g) for w in (x * x, y * y, x * y)]
        )
        tot = sums.sum(axis=1)
        boot = boot_counts(g, n_boot, seed) @ sums.T if g >= 2 else None
        ac1_point = float(gwet_ac1_binary(*tot[:4]))
        qwk_point = qwk_moments(*tot[4:])
        if boot is None:
            notes.append("fewer than 2 prompts: no bootstrap interval")
            ac1 = Estimate(ac1_point)
        else:
            ac1 = Estimate(ac1_point, *percentile(gwet_ac1_binary(*boot.T[:4]), level))
        if not np.isfinite(qwk_point):
            notes.append("qwk: judge and human scores are one constant (0/0)")
        elif boot is None:
            qwk = Estimate(float(qwk_point))
        else:
            qwk = Estimate(float(qwk_point), *percentile(qwk_moments(*boot.T[4:]), level))
    else:
        notes.append("no human labels: agreement is null")
    rg = rogan_gladen(jp_all, prompts, jp, hp, cl, level)
    if x.size and rg.note:
        notes.append(rg.note)
    for name, est in {**rates, "gwet_ac1": ac1, "qwk": qwk, "rg_pass_rate": rg}.items():
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = est.point, est.low, est.high
    row["notes"] = "; ".join(notes) or None
    return row


def agreement_binary_mart(
    ratings: Any,
    *,
    pass_threshold: float = 0.5,
    level: float = 0.90,
    n_boot: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per judge x dimension (and `all` where a judge has several) from
    rows judge, dimension, prompt_id, judge_score_norm, human_score_norm (null when
    unlabelled) and n_rows (the ratings carrying those values): a DuckDB relation
    (summed per prompt in DuckDB, ``binary_cells.prompt_cells``), or a pandas or
    Spark frame. ``binary_agreement`` on each group's ratings, from per-prompt sums."""
    groups, cells = prompt_cells(ratings, pass_threshold)
    if groups.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in BINARY_COLUMNS.items()})
    judges = groups["judge"].to_numpy(dtype=object)
    dimensions = groups["dimension"].to_numpy(dtype=object)
    bounds = np.searchsorted(cells["key"], np.arange(len(groups) + 1))
    rows_of = [np.arange(bounds[k], bounds[k + 1]) for k in range(len(groups))]
    # (judge, dimension, the cells' rows): each group, and `all` (every dimension of
    # a judge with several) summed per prompt; a dimension named `all` joins the
    # pooled group, as it did when the groups were a group-by of the rows
    parts: dict[tuple[str, str], list[np.ndarray]] = {}
    for k in range(len(groups)):
        parts.setdefault((judges[k], dimensions[k]), []).append(rows_of[k])
    for judge in dict.fromkeys(judges):
        mine = [k for k in range(len(groups)) if judges[k] == judge]
        if len({dimensions[k] for k in mine}) > 1:
            parts.setdefault((judge, "all"), []).extend(rows_of[k] for k in mine)
    keys = sorted(parts)
    group_cells = [pooled(cells, np.concatenate(parts[key])) for key in keys]
    # The B x G resample counts depend only on G (and n_boot, seed): judges that rate
    # the same prompts share them. Drawn once per G, not once per judge x dimension
    # (at 10M ratings each draw is 500 x 139k multinomial counts, ~15 s and 0.5 GB):
    # the groups run in order of their labelled prompts' count, one draw kept at a
    # time; the same draws, so the same intervals, and the rows in (judge, dimension)
    # order as before.
    boot_counts = functools.lru_cache(maxsize=1)(cluster_bootstrap_weights)
    labelled_prompts = [int((c["nlab"] > 0).sum()) for c in group_cells]
    out: list[dict[str, object]] = [{} for _ in keys]
    for i in sorted(range(len(keys)), key=labelled_prompts.__getitem__):
        judge, dimension = keys[i]
        stats_row = binary_agreement_from_cells(
            group_cells[i],
            pass_threshold=pass_threshold,
            level=level,
            n_boot=n_boot,
            seed=seed,
            boot_counts=boot_counts,
        )
        out[i] = {"judge": judge, "dimension": dimension, **stats_row}
    frame = pd.DataFrame(out)
    frame["pass_threshold"] = pass_threshold
    frame["ci_level"] = level
    return frame[list(BINARY_COLUMNS)].astype(
        {c: t for c, t in BINARY_COLUMNS.items() if t == "float64"}
    )
