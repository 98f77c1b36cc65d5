"""PSIS-LOO and WAIC from count groups, and the ranking of models per dimension.

Every row of a group has the same log-likelihood under every draw, hence the
same pointwise elpd, Pareto k and WAIC penalty. So the elpd of the data is the
count-weighted sum of each group's one-row elpd, and the standard error uses
the count-weighted variance over rows; the numbers equal ArviZ's ``loo`` and
``waic`` on the row-level log-likelihood matrix (checked in the tests) while
PSIS runs once per group instead of once per row. The relative efficiency
``reff`` is ArviZ's: the mean relative ESS of the posterior's variables (ArviZ's
algorithms in glm.mcmc_stats, without its import).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judge_bias.glm import mcmc_stats
from judge_bias.glm.lazy import module

if TYPE_CHECKING:
    import scipy.special as special
else:
    special = module("scipy.special")

PARETO_K_LIMIT = 0.7


def relative_efficiency(samples: dict[str, np.ndarray]) -> float:
    """ArviZ's reff for ``loo``: mean relative ESS (method mean) over every
    posterior variable; 1 with one chain."""
    first = next(iter(samples.values()))
    chains, draws = first.shape[:2]
    if chains == 1:
        return 1.0
    ess = [
        mcmc_stats.ess_mean(x[:, :, j])
        for value in samples.values()
        for x in [np.asarray(value).reshape(chains, draws, -1)]
        for j in range(x.shape[2])
    ]
    return float(np.hstack(ess).mean() / (chains * draws))


def _weighted_se(values: np.ndarray, n: np.ndarray) -> float:
    """sqrt(N var) of per-row terms weighted by ``n``; NaN, said here rather than by
    numpy's "invalid value" warning, when a term is not finite (a row of zero
    probability: its elpd is -inf and the spread about the mean undefined)."""
    if not np.isfinite(values[n > 0]).all():
        return float("nan")
    total = n.sum()
    mean = np.sum(n * values) / total
    return float(np.sqrt(total * np.sum(n * (values - mean) ** 2) / total))


# the pointwise log-likelihood is computed and PSIS-smoothed this many bytes
# (float64, draws x groups) at a time: the item model on 2,000 prompts has
# 108k groups, 1.7 GB per copy of the whole (draws x groups) matrix
CHUNK_BYTES = 32 * 2**20


def chunk_groups(n_draws: int, num_classes: int = 2) -> int:
    """Groups per chunk: CHUNK_BYTES of log-likelihood, counting the (draws x
    groups x classes) class log-probabilities the ordinal likelihood makes."""
    return max(1, CHUNK_BYTES // (8 * n_draws * (num_classes + 4)))


def pointwise(log_lik_chunks: Iterable[np.ndarray], reff: float) -> dict[str, np.ndarray]:
    """Per group, from (draws, groups) log-likelihood chunks taken in group
    order: one row's PSIS-LOO elpd (loo_i), log pointwise predictive density
    (lppd_i), WAIC penalty (var_i) and Pareto k. PSIS smooths each group's
    importance ratios on their own, so chunking changes nothing."""
    parts: dict[str, list[np.ndarray]] = {
        "loo_i": [], "lppd_i": [], "var_i": [], "k": [], "zero_i": []
    }  # fmt: skip
    for chunk in log_lik_chunks:
        ll = np.asarray(chunk, dtype=np.float64).T  # (groups, draws)
        # the Pareto k are reported, not warned: psislw is numpy only, so its
        # floating-point warnings are silenced for this thread (np.errstate), not by
        # catch_warnings, which swaps the process's filters and drops the warnings of
        # the Python model dbt runs beside this one (review20b, stats/fit_warnings.py)
        with np.errstate(all="ignore"):
            log_w, k = mcmc_stats.psislw(-ll, reff)
        # A draw under which a row's log-likelihood is -inf (underflow, or zero
        # probability): the row's leave-one-out predictive density, 1 / mean_s(1 / p_s),
        # is 0, so its loo_i is -inf, and its WAIC penalty, the variance of log p over
        # the draws, infinite (Vehtari, Gelman & Gabry 2017, the LOO and WAIC
        # definitions); its Pareto k +inf. Set so explicitly here (PSIS and var give NaN
        # there, var with numpy's "invalid value encountered in subtract"); criteria
        # reports the totals undefined (NaN) and the fit's notes say why
        # (zero_probability_note).
        zero = np.asarray(np.isneginf(ll).any(axis=1), dtype=bool)
        loo = special.logsumexp(log_w + ll, axis=1)
        with np.errstate(divide="ignore"):  # a row with every draw -inf: log(0) = -inf
            lppd = special.logsumexp(ll, axis=1) - np.log(ll.shape[1])
        with np.errstate(invalid="ignore"):  # NaN on a -inf row, replaced below
            var = ll.var(axis=1)  # the whole matrix as before: the same bits elsewhere
        k = np.array(np.atleast_1d(k), dtype=np.float64)
        loo[zero], var[zero], k[zero] = -np.inf, np.inf, np.inf
        for name, part in (("loo_i", loo), ("lppd_i", lppd), ("var_i", var), ("k", k)):
            parts[name].append(part)
        parts["zero_i"].append(zero)
    return {name: np.concatenate(v) for name, v in parts.items()}


def zero_probability_note(pw: dict[str, np.ndarray], n: np.ndarray) -> str | None:
    """The fit's note when a row's log-likelihood is -inf under some posterior draw
    (``pointwise``'s zero_i), else None. Not "zero probability" alone: the sampler's
    density includes the row's log-likelihood, so -inf at an accepted draw most likely
    means it underflowed (mend23b)."""
    rows = int(np.sum(np.asarray(n)[pw["zero_i"]]))
    if not rows:
        return None
    return (
        f"{rows} rows have a log-likelihood of -inf under at least one posterior draw "
        "(numerical underflow or zero probability): elpd is undefined"
    )


def criteria(pw: dict[str, np.ndarray], n: np.ndarray, n_draws: int) -> dict[str, float]:
    """elpd_loo, its se, p_loo, Pareto k summary, elpd_waic, its se, p_waic
    from ``pointwise``'s per-group terms and ``n`` rows per group."""
    loo_i, lppd_i, var_i, k = pw["loo_i"], pw["lppd_i"], pw["var_i"], pw["k"]
    waic_i = lppd_i - var_i
    good_k = min(1 - 1 / np.log10(n_draws), PARETO_K_LIMIT)

    # a row of log-likelihood -inf under a draw (pointwise: loo_i -inf, var_i +inf):
    # elpd, p and their se are undefined, NaN (stored NULL, as before session 23;
    # ArviZ gives NaN, R's loo an error), not -inf nor numpy's warning; the fit's notes
    # say why (zero_probability_note)
    def total(terms: np.ndarray) -> float:
        return float(np.sum(n * terms)) if np.isfinite(terms).all() else np.nan

    return {
        "elpd_loo": total(loo_i),
        "se_loo": _weighted_se(loo_i, n),
        "p_loo": total(lppd_i - loo_i) if np.isfinite(loo_i).all() else np.nan,
        "pareto_k_max": float(np.max(k)),
        "pareto_k_bad": int(np.sum(n[k > good_k])),
        "pareto_k_limit": good_k,
        "elpd_waic": total(waic_i),
        "se_waic": _weighted_se(waic_i, n),
        "p_waic": total(var_i),
        "n_obs": int(n.sum()),
    }


def information_criteria(log_lik: np.ndarray, n: np.ndarray, reff: float) -> dict[str, float]:
    """``criteria`` of a whole (draws, groups) matrix: one row's log-likelihood
    per group; ``n``: rows per group."""
    return criteria(pointwise([log_lik], reff), n, np.shape(log_lik)[0])


def pointwise_loo(log_lik: np.ndarray, reff: float) -> np.ndarray:
    """One row's PSIS-LOO elpd per group (the terms ``information_criteria`` sums)."""
    return pointwise([log_lik], reff)["loo_i"]


def d_elpd_se(best: pd.DataFrame, other: pd.DataFrame) -> float:
    """Standard error of elpd_loo(best) - elpd_loo(other) over rows, as ArviZ's
    ``compare`` computes it (sqrt(N var) of the pointwise differences).

    Each table holds one row per count cell: the cell's key columns, ``loo_i``
    (one row's pointwise elpd) and ``n``. Both models saw the same rows; a row
    sits in one cell of each, so joining the tables on their shared key columns
    (the coarser model's key) pairs every row's two terms, weighted by the
    finer table's counts."""
    keys = [c for c in best.columns if c in other.columns and c not in ("loo_i", "n")]
    fine, coarse = (best, other) if len(best.columns) >= len(other.columns) else (other, best)
    merged = fine.merge(coarse.drop(columns="n"), on=keys, suffixes=("_f", "_c"), validate="m:1")
    if merged["n"].sum() != fine["n"].sum():
        return float("nan")
    sign = 1.0 if fine is best else -1.0
    diff = sign * (merged["loo_i_f"].to_numpy() - merged["loo_i_c"].to_numpy())
    return _weighted_se(diff, merged["n"].to_numpy(float))


def rank_models(table: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Rank by elpd_loo within each ``group`` (1 = best), d_elpd = best - this,
    ``preferred`` for rank 1. Models compared share their rows (same outcome).
    A model whose elpd_loo is not finite (its PSIS failed) is not ranked: rank
    and d_elpd null, not preferred; the others are ranked among themselves."""
    out = table.copy()
    elpd = out["elpd_loo"].astype(float)
    elpd = elpd.where(np.isfinite(elpd))
    by = elpd.groupby([out[g] for g in group])
    out["rank"] = by.rank(ascending=False, method="first").astype("Int64")
    out["d_elpd"] = by.transform("max") - elpd
    out["preferred"] = (out["rank"] == 1).fillna(False).astype(bool)
    return out
