"""ArviZ's posterior statistics without importing ArviZ (issue 34).

``import arviz`` cost about 3.4 CPU s in every build that fits a GLM (it
imports xarray, matplotlib and its plots, and numba, and compiles numba
functions at import), and the GLMs use five of its functions: the summary's
mean, sd, HDI, MCSE, bulk and tail ESS and rank-normalised split R-hat
(``summary``), the folded and mean ESS (``ess``) and PSIS (``psislw``). They
are ArviZ 0.23's algorithms, written again here on numpy and scipy, in
ArviZ's order of operations as it runs without numba (the install's:
numba is only in requirements-dev.lock), a variance by ``np.var``; with numba
ArviZ takes ``E[x^2] - E[x]^2`` in one pass, which differs in the last bits
(1e-12 relative in an MCSE, more when the mean is large beside the sd:
review19b). tests/test_glm_mcmc_stats.py checks every statistic against
ArviZ itself with its numba route off on fitted and on simulated draws (constant ones too: the same
RuntimeWarnings, which glm_fits.notes counts; NaN and infinite draws: the same NaNs).

Draws come as (chains, draws) arrays per scalar, as ArviZ's ``(chain, draw,
...)`` variables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judge_bias.glm.lazy import module

if TYPE_CHECKING:
    import scipy.fft as fft
    import scipy.stats as stats
    import scipy.stats.mstats as mstats
else:
    fft = module("scipy.fft")
    stats = module("scipy.stats")
    mstats = module("scipy.stats.mstats")

# ArviZ's default tail quantiles of the tail ESS
TAIL_PROBS = (0.05, 0.95)


def _var(x: np.ndarray, ddof: int = 0) -> float:
    """ArviZ's variance without numba (``np.var``, two passes): the install's
    (numba is not in requirements.lock), and more accurate than numba's one-pass
    ``E[x^2] - E[x]^2`` when the mean is large beside the sd (review19b)."""
    return float(np.var(x, ddof=ddof))


def _row_vars(x: np.ndarray, ddof: int) -> np.ndarray:
    return np.var(x, axis=1, ddof=ddof)


def _invalid(x: np.ndarray, min_chains: int = 1, min_draws: int = 4) -> bool:
    """ArviZ's not_valid of a (chains, draws) array: a NaN, or too few chains or draws."""
    return bool(np.isnan(x).any() or x.shape[0] < min_chains or x.shape[1] < min_draws)


def _split_chains(x: np.ndarray) -> np.ndarray:
    half = x.shape[1] // 2
    return np.vstack((x[:, :half], x[:, -half:]))


def _z_scale(x: np.ndarray) -> np.ndarray:
    rank = stats.rankdata(x, method="average", nan_policy="omit")
    rank = (rank - 3 / 8) / (rank.size - 2 * (3 / 8) + 1)
    return stats.norm.ppf(rank).reshape(x.shape)


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance of every row at every lag (ArviZ's autocov, axis 1)."""
    n = x.shape[1]
    m = fft.next_fast_len(2 * n)
    x = x - x.mean(1, keepdims=True)
    # ArviZ silences the transforms' warnings (an infinite draw: 'invalid value
    # encountered in rfft_n_even'), and glm_fits.notes counts the warnings; errstate is
    # this thread's (catch_warnings swaps the process's filters: a Python model in dbt's
    # other thread lost its warnings, review20b)
    with np.errstate(all="ignore"):
        transform = np.fft.rfft(x, n=m, axis=1)
        transform *= np.conjugate(transform)
        cov = np.fft.irfft(transform, n=m, axis=1)[:, :n]
        cov /= n
    return cov


def _ess(x: np.ndarray) -> float:
    """ArviZ's _ess of a (chains, draws) array: Geyer's initial monotone sequence."""
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        return np.nan
    if (np.max(x) - np.min(x)) < np.finfo(float).resolution:
        return x.size
    n_chain, n_draw = x.shape
    acov = _autocov(x)
    chain_mean = x.mean(axis=1)
    mean_var = np.mean(acov[:, 0]) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus += _var(chain_mean, ddof=1)
    rho_hat_t = np.zeros(n_draw)
    rho_hat_even = 1.0
    rho_hat_t[0] = rho_hat_even
    rho_hat_odd = 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho_hat_t[1] = rho_hat_odd
    t = 1
    while t < (n_draw - 3) and (rho_hat_even + rho_hat_odd) > 0.0:
        rho_hat_even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        rho_hat_odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if (rho_hat_even + rho_hat_odd) >= 0:
            rho_hat_t[t + 1] = rho_hat_even
            rho_hat_t[t + 2] = rho_hat_odd
        t += 2
    max_t = t - 2
    if rho_hat_even > 0:
        rho_hat_t[max_t + 1] = rho_hat_even
    t = 1
    while t <= max_t - 2:
        if (rho_hat_t[t + 1] + rho_hat_t[t + 2]) > (rho_hat_t[t - 1] + rho_hat_t[t]):
            rho_hat_t[t + 1] = (rho_hat_t[t - 1] + rho_hat_t[t]) / 2.0
            rho_hat_t[t + 2] = rho_hat_t[t + 1]
        t += 2
    ess = n_chain * n_draw
    tau_hat = -1.0 + 2.0 * np.sum(rho_hat_t[: max_t + 1]) + np.sum(rho_hat_t[max_t + 1 : max_t + 2])
    tau_hat = max(tau_hat, 1 / np.log10(ess))
    ess = ess / tau_hat
    if np.isnan(rho_hat_t).any():
        ess = np.nan
    return ess


def _rhat(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        return np.nan
    _, num_samples = x.shape
    chain_mean = np.mean(x, axis=1)
    chain_var = _row_vars(x, ddof=1)
    between_chain_variance = num_samples * _var(chain_mean, ddof=1)
    within_chain_variance = np.mean(chain_var)
    return np.sqrt(
        (between_chain_variance / within_chain_variance + num_samples - 1) / (num_samples)
    )


def _ess_mean(x: np.ndarray) -> float:
    if _invalid(x):
        return np.nan
    return _ess(_split_chains(x))


def ess_folded(x: np.ndarray) -> float:
    """ArviZ's ``ess(method="folded")`` of one scalar's (chains, draws) draws."""
    if _invalid(x):
        return np.nan
    x = _split_chains(np.asarray(x))
    return _ess(_z_scale(abs(x - np.median(x))))


def ess_mean(x: np.ndarray) -> float:
    """ArviZ's ``ess(method="mean")`` of one scalar's (chains, draws) draws."""
    return _ess_mean(np.asarray(x))


def chain_statistics(x: np.ndarray) -> tuple[float, float, float, float, float]:
    """ArviZ's _multichain_statistics (focus mean) of one scalar's (chains,
    draws) draws: mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat."""
    x = np.atleast_2d(x)
    if _invalid(x):
        return np.nan, np.nan, np.nan, np.nan, np.nan
    z_split = _z_scale(_split_chains(x))
    quantile05, quantile95 = mstats.mquantiles(x, list(TAIL_PROBS), alphap=1, betap=1)
    ess_tail = min(_ess(_split_chains(x <= quantile05)), _ess(_split_chains(x <= quantile95)))
    if _invalid(x, min_chains=2):
        r_hat = np.nan
    else:
        rhat_bulk = _rhat(z_split)
        folded = np.abs(x - np.median(x))
        rhat_tail = _rhat(_z_scale(_split_chains(folded)))
        r_hat = max(rhat_bulk, rhat_tail)
    ess_mean_value = _ess_mean(x)
    sims_c2 = (x - x.mean()) ** 2
    sims_c2_sum = sims_c2.sum()
    var = sims_c2_sum / (sims_c2.size - 1)
    mcse_mean = np.sqrt(var / ess_mean_value)
    ess_bulk = _ess(z_split)
    evar = sims_c2_sum / sims_c2.size
    ess_mean_sims = _ess_mean(sims_c2)
    varvar = ((sims_c2**2).mean() - evar**2) / ess_mean_sims
    varsd = varvar / evar / 4
    mcse_sd = np.sqrt(varsd)
    return mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat


def hdi(x: np.ndarray, prob: float) -> tuple[float, float]:
    """ArviZ's unimodal HDI of all the draws: the narrowest interval holding
    floor(prob x n) + 1 of the sorted draws. NaN draws are kept, as the summary's
    ``skipna=False`` keeps them: sorted last, their widths are NaN and numpy's argmin
    takes the first NaN, so the upper end is NaN (the lower a draw, or NaN too)."""
    x = np.ravel(x)
    n = len(x)
    x = np.sort(x)
    inc = int(np.floor(prob * n))
    width = np.subtract(x[inc:], x[: n - inc], dtype=np.float64)
    if len(width) == 0:
        raise ValueError("Too few elements for interval calculation. ")
    low = int(np.argmin(width))
    return x[low], x[low + inc]


def summary(draws: np.ndarray, hdi_prob: float) -> pd.DataFrame:
    """ArviZ's ``summary(kind="all", round_to="none")`` of the scalars of one
    (chains, draws, k) array, in its columns: mean, sd (ddof 1), the HDI at
    ``hdi_prob``, mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat; one row per
    scalar."""
    x = np.asarray(draws, dtype=float)
    x = x.reshape(x.shape[0], x.shape[1], -1)
    k = x.shape[2]
    flat = x.reshape(-1, k)
    # ArviZ's summary does not skip NaN (skipna=False): a scalar with a NaN draw has
    # a NaN mean and sd (nanmean gave the mean of the others); its columns are
    # zeroed first so that nanmean raises no warning of its own on them
    nan = np.isnan(flat).any(axis=0)
    if nan.any():
        flat = np.where(nan, 0.0, flat)
    alpha = 1 - hdi_prob
    rows = {
        "mean": np.where(nan, np.nan, np.nanmean(flat, axis=0)),
        "sd": np.where(nan, np.nan, np.nanstd(flat, axis=0, ddof=1)),
        f"hdi_{100 * alpha / 2:g}%": np.empty(k),
        f"hdi_{100 * (1 - alpha / 2):g}%": np.empty(k),
    }
    names = ["mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"]
    chain = np.empty((5, k))
    low, high = list(rows)[2:]
    for j in range(k):
        rows[low][j], rows[high][j] = hdi(x[:, :, j], hdi_prob)
        chain[:, j] = chain_statistics(x[:, :, j])
    rows.update(zip(names, chain, strict=True))
    return pd.DataFrame(rows)


def _logsumexp(x: np.ndarray) -> float:
    top = x.max()
    return float(np.log(np.exp(x - top).sum()) + top)


def _gpdfit(x: np.ndarray) -> tuple[float, float]:
    """ArviZ's empirical-Bayes fit of a generalised Pareto to sorted ``x``."""
    prior_bs, prior_k = 3, 10
    n = len(x)
    m_est = 30 + int(n**0.5)
    b_ary = 1 - np.sqrt(m_est / (np.arange(1, m_est + 1, dtype=float) - 0.5))
    b_ary /= prior_bs * x[int(n / 4 + 0.5) - 1]
    b_ary += 1 / x[-1]
    k_ary = np.log1p(-b_ary[:, None] * x).mean(axis=1)
    len_scale = n * (np.log(-(b_ary / k_ary)) - k_ary - 1)
    weights = 1 / np.exp(len_scale - len_scale[:, None]).sum(axis=1)
    real = weights >= 10 * np.finfo(float).eps
    if not np.all(real):
        weights, b_ary = weights[real], b_ary[real]
    weights /= weights.sum()
    b_post = np.sum(b_ary * weights)
    k_post = np.log1p(-b_post * x).mean()
    sigma = -k_post / b_post
    k_post = (n * k_post + prior_k * 0.5) / (n + prior_k)
    return k_post, sigma


def _gpinv(probs: np.ndarray, kappa: float, sigma: float) -> np.ndarray:
    """ArviZ's inverse generalised Pareto CDF, at probabilities strictly in (0, 1)."""
    if sigma <= 0:
        return np.full_like(probs, np.nan)
    if np.abs(kappa) < np.finfo(float).eps:
        x = -np.log1p(-probs)
    else:
        x = np.expm1(-kappa * np.log1p(-probs)) / kappa
    return x * sigma


def _psis_row(log_weights: np.ndarray, cutoff_ind: int, cutoffmin: float) -> tuple:
    x = np.array(log_weights, dtype=float)
    x -= np.max(x)
    order = np.argsort(x)
    xcutoff = max(x[order[cutoff_ind]], cutoffmin)
    expxcutoff = np.exp(xcutoff)
    (tailinds,) = np.where(x > xcutoff)
    x_tail = x[tailinds]
    tail_len = len(x_tail)
    if tail_len <= 4:
        k = np.inf
    else:
        tail_order = np.argsort(x_tail)
        x_tail = np.exp(x_tail) - expxcutoff
        k, sigma = _gpdfit(x_tail[tail_order])
        if np.isfinite(k):
            sti = np.arange(0.5, tail_len) / tail_len
            x[tailinds[tail_order]] = np.log(_gpinv(sti, k, sigma) + expxcutoff)
            x[x > 0] = 0
    x -= _logsumexp(x)
    return x, k


def psislw(log_weights: np.ndarray, reff: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """ArviZ's ``psislw`` of a (groups, draws) array: the normalised Pareto
    smoothed log weights and the Pareto k of each row."""
    log_weights = np.atleast_2d(np.asarray(log_weights, dtype=float))
    n_samples = log_weights.shape[-1]
    cutoff_ind = -int(np.ceil(min(n_samples / 5.0, 3 * (n_samples / reff) ** 0.5))) - 1
    cutoffmin = np.log(np.finfo(float).tiny)
    out = np.empty_like(log_weights)
    k = np.empty(log_weights.shape[0])
    for i, row in enumerate(log_weights):
        out[i], k[i] = _psis_row(row, cutoff_ind, cutoffmin)
    return out, k
