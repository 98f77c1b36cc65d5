"""glm.mcmc_stats against ArviZ itself (the reference it re-implements, so the
build need not import it): the summary's every column, the folded and mean
ESS, PSIS's log weights and Pareto k, and the RuntimeWarnings a constant
scalar raises (glm_fits.notes counts them), on simulated draws: AR(1) chains
of several autocorrelations and scales, chains offset from each other (R-hat
well over 1), a skewed and a discrete scalar, a constant one."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

from judge_bias.glm import mcmc_stats
from judge_bias.glm.compare import relative_efficiency
from judge_bias.glm.fit import _scalars

# the same algorithms in the same order of operations: equal to the last bits,
# but a numpy or scipy release may reorder a sum inside one of them
RTOL = 1e-12


@pytest.fixture(autouse=True)
def arviz_without_numba():
    """ArviZ as the install runs it: numba is only in requirements-dev.lock, and
    without it ArviZ's variances are np.var's (with it, a one-pass sum: review19b)."""
    was = az.Numba.numba_flag
    az.Numba.disable_numba()
    yield
    if was:
        az.Numba.enable_numba()


def ar1(rng, chains, draws, k, phi, scale=1.0, loc=0.0):
    x = np.empty((chains, draws, k))
    x[:, 0] = rng.standard_normal((chains, k))
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi**2) * rng.standard_normal((chains, k))
    return loc + scale * x


def draws_of(seed: int, chains: int = 2, draws: int = 500) -> np.ndarray:
    rng = np.random.default_rng(seed)
    parts = [
        ar1(rng, chains, draws, 3, 0.0),
        ar1(rng, chains, draws, 3, 0.9, scale=0.01, loc=-2.0),  # a cutpoint's scale
        ar1(rng, chains, draws, 2, -0.3, scale=5.0, loc=40.0),
        ar1(rng, chains, draws, 1, 0.5) + np.arange(chains)[:, None, None],  # unmixed
        np.exp(ar1(rng, chains, draws, 1, 0.7)),  # skewed
        (ar1(rng, chains, draws, 1, 0.2) > 0.8).astype(float),  # an indicator
    ]
    return np.concatenate(parts, axis=-1)


def arviz_summary(x: np.ndarray, prob: float):
    return az.summary(az.convert_to_dataset({"p": x}), hdi_prob=prob, kind="all", round_to="none")


CASES = [(1, 2, 500, 0.95), (2, 4, 250, 0.9), (3, 2, 101, 0.89), (4, 1, 300, 0.95)]


@pytest.mark.parametrize(("seed", "chains", "draws", "prob"), CASES)
def test_summary_equals_arviz(seed, chains, draws, prob):
    x = draws_of(seed, chains, draws)
    ours = mcmc_stats.summary(x, prob)
    theirs = arviz_summary(x, prob)
    assert list(ours.columns) == list(theirs.columns)
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=RTOL, atol=0)
    if chains > 1:  # the unmixed scalar is flagged by both
        assert theirs["r_hat"].iloc[8] > 1.1


def summaries_and_warnings(x: np.ndarray) -> dict[str, tuple]:
    """Our summary and ArviZ's of ``x`` at 95%, each with the RuntimeWarnings it
    raised (sorted messages: glm_fits.notes counts them)."""
    out = {}
    for name, run in (("ours", lambda: mcmc_stats.summary(x, 0.95)),
                      ("arviz", lambda: arviz_summary(x, 0.95))):  # fmt: skip
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            table = run()
        out[name] = table, sorted(str(w.message) for w in seen if w.category is RuntimeWarning)
    return out


def test_a_constant_scalar_warns_as_arviz_does():
    x = draws_of(5)
    x[:, :, 2] = 0.25  # a pinned level
    got = summaries_and_warnings(x)
    for table, _ in got.values():
        assert np.isnan(table["r_hat"].iloc[2])
    assert got["ours"][1] == got["arviz"][1] and got["ours"][1]
    np.testing.assert_allclose(got["ours"][0].to_numpy(), got["arviz"][0].to_numpy(), rtol=RTOL)


def test_ess_folded_and_mean_equal_arviz():
    x = draws_of(6, chains=3, draws=400)
    posterior = az.convert_to_dataset({"p": x})
    for method, ours in (("folded", mcmc_stats.ess_folded), ("mean", mcmc_stats.ess_mean)):
        theirs = az.ess(posterior, method=method)["p"].values
        mine = [ours(x[:, :, j]) for j in range(x.shape[2])]
        np.testing.assert_allclose(mine, theirs, rtol=RTOL)


def test_relative_efficiency_equals_arviz_over_sites_of_every_shape():
    rng = np.random.default_rng(7)
    samples = {
        "intercept": ar1(rng, 2, 300, 1, 0.6)[..., 0],
        "effects": ar1(rng, 2, 300, 6, 0.3).reshape(2, 300, 2, 3),
    }
    ess = az.ess(az.convert_to_dataset(samples), method="mean")
    reff = np.hstack([ess[v].values.ravel() for v in ess.data_vars]).mean() / 600
    assert relative_efficiency(samples) == pytest.approx(reff, rel=RTOL, abs=0)


def test_scalar_labels_are_arviz_names():
    rng = np.random.default_rng(8)
    posterior = {"a": rng.normal(size=(2, 10)), "b": rng.normal(size=(2, 10, 2, 3))}
    _, labels = _scalars(posterior)
    assert labels == list(az.summary(az.convert_to_dataset(posterior), kind="stats").index)


@pytest.mark.parametrize("reff", [1.0, 0.4])
def test_psislw_equals_arviz(reff):
    rng = np.random.default_rng(9)
    n = 2000
    ll = np.vstack([
        rng.normal(-1.0, 0.1, n),  # light tails: k < 0.5
        rng.normal(-1.0, 2.0, n),  # heavier: k near 0.4, the tail smoothed
        -rng.standard_t(2, n) ** 2,  # heavy tails: the Pareto fit fails (k inf)
        np.full(n, -0.7),  # constant: no tail to fit (k inf)
    ])  # fmt: skip
    ours_w, ours_k = mcmc_stats.psislw(-ll, reff)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs_w, theirs_k = az.psislw(-ll, reff)
    np.testing.assert_allclose(ours_k, np.asarray(theirs_k), rtol=RTOL)
    np.testing.assert_allclose(ours_w, np.asarray(theirs_w), rtol=RTOL, atol=1e-13)
    assert np.isfinite(ours_k[:2]).all() and ours_k[1] > 0.3 and np.isinf(ours_k[2:]).all()


def test_hdi_is_the_narrowest_interval_holding_the_mass():
    # a closed form: draws 0..99, 90% HDI of a flat sample is any 91 consecutive
    # values; numpy's argmin takes the first
    assert mcmc_stats.hdi(np.arange(100.0).reshape(2, 50), 0.9) == (0.0, 90.0)
    assert mcmc_stats.hdi(np.arange(100.0), 0.895) == (0.0, 89.0)  # floor(89.5) + 1 draws
    skewed = np.concatenate([np.zeros(80), np.arange(1.0, 21.0)])
    assert mcmc_stats.hdi(skewed, 0.8) == (0.0, 1.0)


def test_nan_draws_give_what_arviz_gives():
    """ArviZ's summary keeps NaN draws (skipna=False): the scalar's mean, sd and
    diagnostics are NaN and its HDI's upper end too (the lower is a draw unless
    every draw is NaN); the other scalars are untouched. mcmc_stats took
    the mean and sd of the other draws (nanmean) and dropped NaNs from the HDI."""
    x = draws_of(10, chains=2, draws=200)[:, :, :6]
    x[0, 3, 1] = np.nan  # one NaN draw
    x[:, :, 2] = np.nan  # every draw
    x[1, :, 3] = np.nan  # half the draws: more than fall outside the 95% HDI
    x[0, 7, 4] = np.inf  # no NaN draw, an infinite mean and a NaN sd
    got = summaries_and_warnings(x)
    for table, _ in got.values():
        assert np.isnan(table.iloc[1:4].drop(columns="hdi_2.5%").to_numpy()).all()
        assert np.isfinite(table.iloc[[0, 5]].to_numpy()).all()
    (ours, ours_warned), (theirs, theirs_warned) = got["ours"], got["arviz"]
    assert ours_warned == theirs_warned
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=RTOL, atol=0)
    assert np.isfinite(theirs["hdi_2.5%"].iloc[[1, 3]]).all()  # a draw, not NaN
    assert np.isnan(theirs["hdi_2.5%"].iloc[2]) and np.isinf(theirs["mean"].iloc[4])


def test_autocov_leaves_the_process_warning_filters_alone(monkeypatch):
    """_autocov silences the FFT's floating-point warnings for its own thread
    (np.errstate), not by swapping the process's warning filters: dbt runs two Python
    models in threads of one process, and catch_warnings + simplefilter('ignore')
    dropped the other model's warnings while a GLM summary ran (review20b)."""
    seen = []
    rfft = np.fft.rfft

    def spy(*args, **kwargs):
        seen.append(list(warnings.filters))
        return rfft(*args, **kwargs)

    monkeypatch.setattr(np.fft, "rfft", spy)
    x = draws_of(1, chains=2, draws=100)[:, :, 0]
    x[0, 5] = np.inf
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mcmc_stats._autocov(x)
    # inside the transform the filters are still the caller's ("always" first)
    assert seen and all(f[0][0] == "always" for f in seen)
    # the transform's warnings still silent, as ArviZ's (the centring's 'invalid value
    # in subtract' is ArviZ's too)
    assert not [w for w in caught if "fft" in str(w.message)]
