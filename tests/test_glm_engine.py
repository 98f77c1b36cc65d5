"""The GLM engine against independent references.

The key proof: a posterior fitted on (cell x outcome) counts equals the one a
row-level numpyro model gives, written here independently (numpyro's own
OrderedLogistic and Bernoulli on every row). Means and sds must agree within
Monte Carlo error: |a - b| <= Z * sqrt(mcse_a^2 + mcse_b^2), with each
parameter's MCSE of the mean (of the sd for the sds). Z = 4 keeps the chance
of a false alarm over a few dozen parameters below 1%.
"""

from __future__ import annotations

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd
import pytest
from numpyro.infer import MCMC, NUTS

from judge_bias.glm import (
    MODELS,
    FitSettings,
    Priors,
    information_criteria,
    ordinal_counts,
    ordinal_counts_from_rows,
    pairwise_counts,
    pairwise_counts_from_rows,
    relative_efficiency,
    run,
)
from judge_bias.glm import models as glm_models
from judge_bias.glm.likelihood import ordinal_log_probs

Z = 4.0
SETTINGS = FitSettings(draws=1000, warmup=400, chains=2, seed=7)


def simulated_ratings(seed: int = 3) -> pd.DataFrame:
    """3 graders (one human) x 3 models, 5-point scale, a planted self-bias."""
    rng = np.random.default_rng(seed)
    graders = {"human-1": "human", "judge-a": "llm", "judge-b": "llm"}
    models = ["judge-a", "judge-b", "model-c"]
    rows = []
    for g, kind in graders.items():
        for m in models:
            eta = {"human-1": 0.5, "judge-a": 0.0, "judge-b": -0.4}[g]
            eta += {"judge-a": 0.6, "judge-b": 0.0, "model-c": -0.6}[m]
            eta += 0.8 if g == m else 0.0
            cut = np.array([-2.0, -0.7, 0.6, 1.9])
            p = 1 / (1 + np.exp(-(cut - eta)))
            probs = np.diff(np.concatenate([[0.0], p, [1.0]]))
            for score in rng.choice(5, size=60, p=probs):
                rows.append({"grader": g, "grader_type": kind, "model": m, "score": int(score)})
    return pd.DataFrame(rows)


def row_level_ordinal(
    rows: pd.DataFrame, priors: Priors, num_classes: int, interaction: bool = True
):
    """HiBayes' ordered_logistic_model on rows (main effects grader and model,
    optionally their interaction), with numpyro's OrderedLogistic."""
    g_idx, g_names = pd.factorize(rows["grader"], sort=True)
    m_idx, m_names = pd.factorize(rows["model"], sort=True)
    ng, nm = len(g_names), len(m_names)
    y = jnp.asarray(rows["score"].to_numpy())

    def sum_zero(name, n):
        free = numpyro.sample(
            name, dist.Normal(priors.effect_loc, priors.effect_scale).expand([n - 1])
        )
        return jnp.append(free, -free.sum())

    def model():
        b0 = numpyro.sample("intercept", dist.Normal(priors.intercept_loc, priors.intercept_scale))
        g = numpyro.deterministic("grader_effects", sum_zero("g", ng))
        m = numpyro.deterministic("model_effects", sum_zero("m", nm))
        gm = jnp.zeros((ng, nm))
        if interaction:
            free = numpyro.sample(
                "gm", dist.Normal(0.0, priors.interaction_scale).expand([(ng - 1) * (nm - 1)])
            )
            inner = free.reshape(ng - 1, nm - 1)
            rows_ = jnp.hstack([inner, -inner.sum(1, keepdims=True)])
            gm = numpyro.deterministic(
                "grader_model_effects", jnp.vstack([rows_, -rows_.sum(0, keepdims=True)])
            )
        c1 = numpyro.sample(
            "c1", dist.Normal(priors.first_cutpoint_loc, priors.first_cutpoint_scale)
        )
        gaps = numpyro.sample(
            "gaps",
            dist.LogNormal(priors.cutpoint_gap_loc, priors.cutpoint_gap_scale).expand(
                [num_classes - 2]
            ),
        )
        cut = numpyro.deterministic(
            "cutpoints",
            jnp.concatenate([c1[None], c1 + jnp.cumsum(gaps + priors.min_cutpoint_spacing)]),
        )
        eta = b0 + g[g_idx] + m[m_idx] + gm[g_idx, m_idx]
        numpyro.sample("y", dist.OrderedLogistic(eta, cut), obs=y)

    return model


def sample_rows(model, settings: FitSettings) -> dict[str, np.ndarray]:
    mcmc = MCMC(
        NUTS(model, target_accept_prob=settings.target_accept, dense_mass=True),
        num_warmup=settings.warmup,
        num_samples=settings.draws,
        num_chains=settings.chains,
        chain_method="vectorized",
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(settings.seed + 1))
    return {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}


def assert_same_posterior(a: dict, b: dict, names: list[str]) -> int:
    """Every scalar of ``names``: means and sds equal within Z combined MCSEs."""
    checked = 0
    for name in names:
        sa = az.summary(az.convert_to_dataset({name: a[name]}), kind="all", round_to="none")
        sb = az.summary(az.convert_to_dataset({name: b[name]}), kind="all", round_to="none")
        for (label, ra), (_, rb) in zip(sa.iterrows(), sb.iterrows(), strict=True):
            if ra["sd"] == 0:  # a structural zero (a one-level factor)
                continue
            tol_mean = Z * np.hypot(ra["mcse_mean"], rb["mcse_mean"])
            tol_sd = Z * np.hypot(ra["mcse_sd"], rb["mcse_sd"])
            assert abs(ra["mean"] - rb["mean"]) <= tol_mean, (
                label,
                ra["mean"],
                rb["mean"],
                tol_mean,
            )
            assert abs(ra["sd"] - rb["sd"]) <= tol_sd, (label, ra["sd"], rb["sd"], tol_sd)
            checked += 1
    return checked


@pytest.fixture(scope="module")
def ordinal_fits():
    rows = simulated_ratings()
    data = ordinal_counts(ordinal_counts_from_rows(rows), list(range(5)))
    counted = run(MODELS["grader_model"], data, Priors(), SETTINGS)
    by_row = sample_rows(row_level_ordinal(rows, Priors(), 5), SETTINGS)
    return rows, data, counted, by_row


def test_counts_compress_rows(ordinal_fits):
    """Each count cell is a (grader, model, score) of the rows with as many
    ratings as the rows have: a cell dropped, split, miscounted or given
    another's grader, model or class fails."""
    rows, data, _, _ = ordinal_fits
    assert data.n_obs == len(rows) == 540
    assert data.n_groups <= 9 * 5 < len(rows)
    grader = np.asarray(data.levels["grader"])[data.codes["grader"]]
    model = np.asarray(data.levels["model"])[data.codes["model"]]
    score = data.y.astype(int)
    cells = pd.DataFrame({"grader": grader, "model": model, "score": score, "n": data.n})
    expected = rows.astype({"score": int}).groupby(["grader", "model", "score"]).size()
    got = cells.groupby(["grader", "model", "score"])["n"].sum()
    pd.testing.assert_series_equal(got, expected, check_names=False, check_dtype=False)


def test_the_same_counts_in_another_row_order_give_the_same_draws(ordinal_fits):
    """SQL returns the count table in no fixed order: a seed must give the same
    posterior draws whatever the order (the spark route's comparison found two
    builds of the same data differing)."""
    rows, _, counted, _ = ordinal_fits
    table = ordinal_counts_from_rows(rows)
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)
    assert not shuffled.equals(table)
    again = run(MODELS["grader_model"], ordinal_counts(shuffled, list(range(5))), Priors(),
                SETTINGS)  # fmt: skip
    for name, draws in counted.samples.items():
        np.testing.assert_array_equal(again.samples[name], draws, err_msg=name)


def test_ordinal_count_posterior_equals_row_level(ordinal_fits):
    _, _, counted, by_row = ordinal_fits
    names = ["grader_effects", "model_effects", "grader_model_effects", "cutpoints", "intercept"]
    assert assert_same_posterior(counted.samples, by_row, names) >= 20


def test_count_elpd_equals_row_level_elpd(ordinal_fits):
    rows, data, counted, by_row = ordinal_fits
    spec = MODELS["grader_model"]
    ic = information_criteria(
        np.asarray(spec.group_log_lik(counted.flat(), data)),
        data.n,
        relative_efficiency(counted.samples),
    )
    # 1. the same draws, expanded to one log-likelihood column per row: ArviZ's
    # loo and waic on the row matrix equal the count-weighted ones (to float32
    # rounding of the log-likelihoods: 1e-3 on an elpd of -800, MC error ~0.2)
    group = {
        (g, m, s): i
        for i, (g, m, s) in enumerate(
            zip(
                np.array(data.levels["grader"])[data.codes["grader"]],
                np.array(data.levels["model"])[data.codes["model"]],
                data.y,
                strict=True,
            )
        )
    }
    cols = [group[(r.grader, r.model, r.score)] for r in rows.itertuples()]
    ll = np.asarray(spec.group_log_lik(counted.flat(), data))[:, cols]
    c, d = SETTINGS.chains, SETTINGS.draws
    idata = az.from_dict(
        posterior={k: v for k, v in counted.samples.items()},
        log_likelihood={"y": ll.reshape(c, d, -1)},
    )
    loo, waic = az.loo(idata), az.waic(idata)
    assert ic["elpd_loo"] == pytest.approx(loo["elpd_loo"], abs=1e-3)
    assert ic["se_loo"] == pytest.approx(loo["se"], rel=1e-6)
    assert ic["p_loo"] == pytest.approx(loo["p_loo"], rel=1e-6)
    assert ic["elpd_waic"] == pytest.approx(waic["elpd_waic"], abs=1e-3)
    assert ic["p_waic"] == pytest.approx(waic["p_waic"], rel=1e-6)
    # 2. the independent row-level fit: its own log-likelihood (numpyro's
    # OrderedLogistic on every row) gives the same elpd within Monte Carlo error
    y = jnp.asarray(rows["score"].to_numpy())
    g_idx = pd.factorize(rows["grader"], sort=True)[0]
    m_idx = pd.factorize(rows["model"], sort=True)[0]
    flat = {k: v.reshape(c * d, *v.shape[2:]) for k, v in by_row.items()}
    eta = (
        flat["intercept"][:, None]
        + flat["grader_effects"][:, g_idx]
        + flat["model_effects"][:, m_idx]
        + flat["grader_model_effects"][:, g_idx, m_idx]
    )
    row_ll = np.asarray(dist.OrderedLogistic(eta, flat["cutpoints"][:, None, :]).log_prob(y))
    row_loo = az.loo(az.from_dict(posterior=by_row, log_likelihood={"y": row_ll.reshape(c, d, -1)}))
    assert abs(ic["elpd_loo"] - row_loo["elpd_loo"]) < 1.0  # MC error of elpd here is ~0.1-0.3


def test_effects_are_published_unrounded(ordinal_fits):
    """glm_effects' mean, sd and MCSE are the draws' own (ArviZ's summary
    rounds to 3 decimals unless told not to: an MCSE under 0.0005 became 0)."""
    from judge_bias.glm.summarise import effect_draws, summarise

    _, _, counted, _ = ordinal_fits
    draws, labels = effect_draws(counted)
    table = summarise(counted, draws, labels)
    flat = np.concatenate([v.reshape(-1, int(np.prod(v.shape[2:]))) for v in draws.values()], 1)
    np.testing.assert_allclose(table["mean"], flat.mean(0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(table["sd"], flat.std(0, ddof=1), rtol=1e-10)
    varying = table["sd"] > 0  # not a structural zero
    assert (table.loc[varying, "mcse"] > 0).all()


def test_log_space_ordinal_probabilities_match_numpyro():
    eta = jnp.array([-30.0, -2.0, 0.0, 1.5, 30.0])
    cut = jnp.array([-1.0, 0.0, 0.5, 3.0])
    ours = np.exp(np.asarray(ordinal_log_probs(eta, cut)))
    ref = np.exp(np.asarray(dist.OrderedLogistic(eta[:, None], cut).log_prob(jnp.arange(5))))
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(ours.sum(axis=1), 1.0, rtol=1e-5)


def simulated_pairs(seed: int = 5) -> pd.DataFrame:
    """Two judges and a human, three models, both slot orders, lengths per prompt."""
    rng = np.random.default_rng(seed)
    models = ["m-a", "m-b", "m-c"]
    strength = {"m-a": 0.8, "m-b": 0.0, "m-c": -0.8}
    slope = {"judge-x": 0.9, "judge-y": 0.3, "human": 0.0}
    rows = []
    for prompt in range(40):
        length = {m: rng.integers(50, 400) for m in models}
        for first in models:
            for second in models:
                if first == second:
                    continue
                x = float(length[first] - length[second])
                for g in slope:
                    eta = 0.3 + strength[first] - strength[second] + slope[g] * x / 150
                    chosen = int(rng.random() < 1 / (1 + np.exp(-eta)))
                    kind = "human" if g == "human" else "llm"
                    rows.append({"grader": g, "grader_type": kind, "model_first": first,
                                 "model_second": second, "length_diff": x,
                                 "first_chosen": chosen, "prompt": prompt})  # fmt: skip
    return pd.DataFrame(rows)


def row_level_pairwise(rows: pd.DataFrame, priors: Priors, effect_coded_pairs: bool = False):
    """The pairwise model on rows: signed free pair effects, sum-to-zero grader
    effects, grader slopes from a common normal, standardised length."""
    a = np.minimum(rows["model_first"], rows["model_second"])
    b = np.maximum(rows["model_first"], rows["model_second"])
    p_idx = pd.factorize(a + " vs " + b, sort=True)[0]
    sign = np.where(rows["model_first"] == a, 1.0, -1.0)
    g_idx, g_names = pd.factorize(rows["grader"], sort=True)
    x = rows["length_diff"].to_numpy(float)
    x = (x - x.mean()) / x.std(ddof=1)
    y = rows["first_chosen"].to_numpy()
    ng, npairs = len(g_names), p_idx.max() + 1

    def model():
        b0 = numpyro.sample("intercept", dist.Normal(0.0, priors.intercept_scale))
        if effect_coded_pairs:  # HiBayes: one slot order per pair
            pfree = numpyro.sample("p", dist.Normal(0.0, priors.effect_scale).expand([npairs - 1]))
            pair = numpyro.deterministic("pair_effects", jnp.append(pfree, -pfree.sum()))
        else:
            pair = numpyro.sample(
                "pair_effects", dist.Normal(0.0, priors.effect_scale).expand([npairs])
            )
        free = numpyro.sample("g", dist.Normal(0.0, priors.effect_scale).expand([ng - 1]))
        g = numpyro.deterministic("grader_effects", jnp.append(free, -free.sum()))
        mu = numpyro.sample("length_slope_mean", dist.Normal(0.0, priors.length_slope_mean_scale))
        sd = numpyro.sample("length_slope_sigma", dist.HalfNormal(priors.length_slope_sigma_scale))
        slopes = numpyro.sample("grader_length_slopes", dist.Normal(mu, sd).expand([ng]))
        eta = b0 + sign * pair[p_idx] + g[g_idx] + slopes[g_idx] * x
        numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)

    return model


def test_pairwise_counts_compress_rows():
    """Each pairwise group's verdicts and first-slot wins are the rows' own, per
    grader, unordered pair and slot order, and its x is the row's length
    difference standardised over the rows (sample sd): a group dropped or
    miscounted, a pair's sign flipped or x left raw fails."""
    rows = simulated_pairs()
    data = pairwise_counts(pairwise_counts_from_rows(rows))
    pair = pd.Series(np.asarray(data.levels["pair"])[data.codes["pair"]]).str.split(" vs ")
    forward = data.codes["sign"] > 0  # the pair's first-named model sat first
    groups = pd.DataFrame(
        {
            "grader": np.asarray(data.levels["grader"])[data.codes["grader"]],
            "model_first": np.where(forward, pair.str[0], pair.str[1]),
            "model_second": np.where(forward, pair.str[1], pair.str[0]),
            "n": data.n,
            "wins": data.n * data.y,
        }
    )
    keys = ["grader", "model_first", "model_second"]
    got = groups.groupby(keys)[["n", "wins"]].sum()
    expected = rows.groupby(keys).agg(n=("first_chosen", "size"), wins=("first_chosen", "sum"))
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    x = rows["length_diff"].to_numpy(float)
    standardised = np.sort((x - x.mean()) / x.std(ddof=1))
    per_row = np.sort(np.repeat(data.codes["x"], data.n.astype(int)))
    np.testing.assert_allclose(per_row, standardised, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("branch", ["centred", "non-centred"])
def test_pairwise_count_posterior_equals_row_level(branch, monkeypatch):
    """Three graders with 240 verdicts each: the count model's slopes are
    centred (``slope_parameterisation``); non-centred when the threshold is
    raised over 240. Either way its posterior equals the row-level model's,
    whose slopes are centred."""
    rows = simulated_pairs()
    counts = pairwise_counts_from_rows(rows)
    data = pairwise_counts(counts)
    assert data.pair_coding == "free" and data.n_obs == len(rows)
    assert data.n_groups < len(rows)  # the three graders of a prompt share x
    if branch == "non-centred":
        monkeypatch.setattr(glm_models, "SLOPES_CENTRED_MIN_VERDICTS", 1000)
    assert glm_models.slope_parameterisation(data).name == branch
    counted = run(MODELS["pairwise"], data, Priors(), SETTINGS)
    assert counted.notes and f"sampled {branch}" in counted.notes[0]
    assert counted.divergences <= 2, counted.divergences
    by_row = sample_rows(row_level_pairwise(rows, Priors()), SETTINGS)
    names = ["intercept", "pair_effects", "grader_effects", "length_slope_mean",
             "grader_length_slopes"]  # fmt: skip
    assert assert_same_posterior(counted.samples, by_row, names) >= 9
