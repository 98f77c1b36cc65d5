"""The rating-level reference of ``judge_bias.stats.binary_agreement``: every
statistic of one judge x dimension computed from its ratings one by one (the mart
computes them from per-prompt sums). Tests compare the mart with it, and it with
truescore, sklearn and simulations."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from judge_bias.stats.binary_cells import estimates_from_sums, qwk_moments, rg_interval
from judge_bias.stats.level_intervals import (
    Estimate,
    cluster_bootstrap_counts,
    cluster_codes,
    clustered_wilson,
    effective_n,
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
    return rg_interval(theta, var, level)


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
    codes, g = cluster_codes(cl)
    sums = np.vstack(
        [
            np.bincount(codes, weights=w, minlength=g)
            for w in (jp & hp, jp & ~hp, ~jp & hp, ~jp & ~hp, np.ones_like(x), x, y)
        ]
        + [np.bincount(codes, weights=w, minlength=g) for w in (x * x, y * y, x * y)]
    )
    ac1, qwk = estimates_from_sums(
        sums, level=level, n_boot=n_boot, seed=seed, boot_counts=boot_counts, notes=notes
    )
    rg = rogan_gladen(jp_all, prompts, jp, hp, cl, level)
    if x.size and rg.note:
        notes.append(rg.note)
    for name, est in {**rates, "gwet_ac1": ac1, "qwk": qwk, "rg_pass_rate": rg}.items():
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = est.point, est.low, est.high
    row["notes"] = "; ".join(notes) or None
    return row
