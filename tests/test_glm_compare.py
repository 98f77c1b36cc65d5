"""The GLM model comparison's standard error of d_elpd, and glm_fits when the
GLMs are off.

se_d_elpd is computed on count cells joined across models; the reference is
ArviZ's ``compare`` on the row-level pointwise log-likelihoods of the same two
"models" (its dse is sqrt(N var) of the pointwise elpd differences).
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest

from judge_bias.glm import GlmConfig, Inputs, run_glms
from judge_bias.glm.compare import criteria, d_elpd_se, pointwise, pointwise_loo


def test_d_elpd_se_equals_arviz_compare_on_rows():
    rng = np.random.default_rng(11)
    # rows: 2 graders x 2 models x 3 scores x 4 items, random counts
    keys = pd.MultiIndex.from_product(
        [["g1", "g2"], ["m1", "m2"], [0, 1, 2], ["i1", "i2", "i3", "i4"]],
        names=["grader", "model", "y", "item"],
    ).to_frame(index=False)
    keys["n"] = rng.integers(1, 6, len(keys))
    coarse = keys.groupby(["grader", "model", "y"], as_index=False)["n"].sum()
    draws = 400
    ll_fine = rng.normal(-1.0, 0.3, (draws, len(keys))) + rng.normal(0, 0.5, len(keys))
    ll_coarse = rng.normal(-1.1, 0.2, (draws, len(coarse))) + rng.normal(0, 0.5, len(coarse))
    fine_t = keys.assign(loo_i=pointwise_loo(ll_fine, 1.0))
    coarse_t = coarse.assign(loo_i=pointwise_loo(ll_coarse, 1.0))
    # the same as one column per row
    rows = keys.loc[keys.index.repeat(keys["n"])].reset_index(drop=True)
    fine_idx = np.repeat(np.arange(len(keys)), keys["n"])
    lookup = {k: i for i, k in enumerate(zip(coarse.grader, coarse.model, coarse.y, strict=True))}
    coarse_idx = np.array([lookup[k] for k in zip(rows.grader, rows.model, rows.y, strict=True)])
    assert len(rows) == len(fine_idx) == keys["n"].sum()
    idata = {
        name: az.from_dict(
            posterior={"mu": np.zeros((1, draws))},
            log_likelihood={"y": ll[None, :, idx]},
        )
        for name, ll, idx in (("fine", ll_fine, fine_idx), ("coarse", ll_coarse, coarse_idx))
    }
    ref = az.compare(idata, ic="loo")
    best = ref.index[0]
    tables = {"fine": fine_t, "coarse": coarse_t}
    other = "coarse" if best == "fine" else "fine"
    ours = d_elpd_se(tables[best], tables[other])
    assert ours == pytest.approx(ref.loc[other, "dse"], rel=1e-6)
    assert ours > 0


def test_glm_fits_says_not_requested_when_off(tmp_path, monkeypatch):
    cache = tmp_path / "jax-cache"
    monkeypatch.setenv("JUDGE_BIAS_JAX_CACHE", str(cache))
    empty = pd.DataFrame(columns=["dimension", "grader", "grader_type", "model", "score", "n"])
    inputs = Inputs(
        rating_counts=pd.DataFrame(
            {
                "dimension": ["a"],
                "grader": ["g"],
                "grader_type": ["llm"],
                "model": ["m"],
                "score": [1.0],
                "n": [1],
            }
        ),  # fmt: skip
        item_counts=empty.assign(item=[]),
        pairwise_counts=pd.DataFrame(),
        scales=pd.DataFrame({"dimension": ["a"], "score": [1.0]}),
        families={},
        agreement_rows=pd.DataFrame(),
        excluded=pd.DataFrame(columns=["dimension", "reason", "n"]),
    )
    out = run_glms(inputs, GlmConfig(models=()))
    fits = out[out["output"] == "fits"]
    assert set(fits["status"]) == {"not requested"}
    assert {"grader_model", "items", "pairwise"} <= set(fits["model"])
    assert fits["notes"].str.contains("glm_models").all()
    assert not cache.exists()  # no GLM asked for: no compilation cache made


def test_chunked_pointwise_terms_equal_arviz_loo_and_waic_on_the_whole_matrix():
    """PSIS in chunks of groups (as runner does for the item model): the
    per-group terms and the totals equal ArviZ's loo / waic on the whole
    (draws x groups) matrix, whatever the chunk size."""
    rng = np.random.default_rng(3)
    ll = rng.normal(-1.2, 0.4, (2, 500, 37)) - rng.gamma(1.0, 0.3, (1, 1, 37))
    flat = ll.reshape(1000, 37)
    ref = az.loo(az.from_dict(log_likelihood={"y": ll}), pointwise=True, reff=1.0)
    ref_waic = az.waic(az.from_dict(log_likelihood={"y": ll}))
    for size in (1, 5, 37):
        chunks = (flat[:, a : a + size] for a in range(0, 37, size))
        terms = pointwise(chunks, 1.0)
        np.testing.assert_allclose(terms["loo_i"], ref.loo_i.values, rtol=1e-6)
        np.testing.assert_allclose(terms["k"], ref.pareto_k.values, rtol=1e-6, atol=1e-9)
        ic = criteria(terms, np.ones(37), 1000)
        assert abs(ic["elpd_loo"] - ref.elpd_loo) < 1e-6
        assert abs(ic["elpd_waic"] - ref_waic.elpd_waic) < 1e-6


def test_a_model_without_a_finite_elpd_is_not_ranked_and_the_others_are():
    """Found by `bench --engine spark` at 10M ratings: one fit's elpd_loo was NaN and
    ranking cast NaN to int, failing int_glm_results for every model. Now that
    model has no rank, no d_elpd and is not preferred; the others rank among
    themselves, and se_d_elpd pairs them with the finite best."""
    from judge_bias.glm.compare import rank_models
    from judge_bias.glm.runner import _with_d_elpd_se

    cells = pd.DataFrame({"y": [0, 1], "grader": ["a", "b"], "n": [3, 5]})
    table = pd.DataFrame(
        {
            "model": ["m1", "m2", "m3", "p1"],
            "dimension": ["d", "d", "d", "pairwise"],
            "family_of_models": ["ordinal", "ordinal", "ordinal", "binary"],
            "elpd_loo": [-10.0, np.nan, -12.5, -np.inf],
            "_pointwise": [
                cells.assign(loo_i=[-1.0, -1.4]),
                cells.assign(loo_i=[np.nan, -1.0]),
                cells.assign(loo_i=[-1.5, -1.6]),
                cells.assign(loo_i=[-np.inf, -1.0]),
            ],
        }
    )
    ranked = _with_d_elpd_se(rank_models(table, ["dimension", "family_of_models"]))
    by = ranked.set_index("model")
    assert by.loc["m1", "rank"] == 1 and by.loc["m3", "rank"] == 2
    assert pd.isna(by.loc["m2", "rank"]) and pd.isna(by.loc["p1", "rank"])
    assert list(by["preferred"]) == [True, False, False, False]
    assert by.loc["m3", "d_elpd"] == 2.5 and np.isnan(by.loc["m2", "d_elpd"])
    assert by.loc["m1", "se_d_elpd"] == 0.0
    # m3 vs m1, 8 rows: differences -0.5 (x3) and -0.2 (x5), sqrt(N var) by hand
    diff = np.repeat([-0.5, -0.2], [3, 5])
    assert np.isclose(by.loc["m3", "se_d_elpd"], np.sqrt(8 * diff.var()), rtol=1e-12)
    assert np.isnan(by.loc["m2", "se_d_elpd"]) and np.isnan(by.loc["p1", "se_d_elpd"])


def test_another_threads_warnings_survive_the_psis_smoothing(monkeypatch):
    """pointwise silences psislw's floating-point warnings for its own thread
    (np.errstate), not with catch_warnings (process-wide: it dropped every warning
    the Python model dbt runs beside it raised meanwhile, 0 of N_OTHER): all the
    other thread's warnings reach the log; the terms equal those of a plain call."""
    from judge_bias.glm import compare
    from tests.test_fit_warnings import N_OTHER, _another_model_warns_inside

    ll = np.random.default_rng(4).normal(-1.0, 0.5, (400, 9))
    expected = pointwise([ll], 1.0)
    _another_model_warns_inside(monkeypatch, compare.mcmc_stats, "psislw")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        terms = pointwise([ll], 1.0)
    other = [w for w in caught if str(w.message).startswith("other model")]
    assert len(other) == N_OTHER
    for name, values in expected.items():
        np.testing.assert_array_equal(terms[name], values)


def test_a_row_of_log_likelihood_minus_infinity_makes_elpd_undefined_and_said():
    """A group whose log-likelihood is -inf under some draws (underflow, or the model
    gives the row zero probability there): its leave-one-out density 1 / mean(1 / p)
    is 0 (loo_i -inf, closed form), its WAIC penalty var(log p) and Pareto k infinite;
    elpd_loo, elpd_waic, the p's and the se's are undefined: NaN, stored NULL as before
    session 23 (ArviZ gives NaN; -inf reached glm_model_comparison, mend23b R1), and the
    note counts the rows; no numpy warning ("invalid value encountered in subtract"
    before). The other groups equal ArviZ's loo on them alone. Fails without the
    explicit handling (loo_i NaN, the warning), when elpd is -inf, and when k of the
    -inf rows is set to anything but +inf."""
    from judge_bias.glm.compare import zero_probability_note

    rng = np.random.default_rng(5)
    ll = rng.normal(-1.2, 0.4, (1000, 6))
    ll[::7, 2] = -np.inf  # group 2: -inf under 143 of 1000 draws
    ll[:, 4] = -np.inf  # group 4: under every draw
    n = np.array([1, 2, 3, 1, 4, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terms = pointwise([ll], 1.0)
        ic = criteria(terms, n, 1000)
    finite = [0, 1, 3, 5]
    ref = az.loo(az.from_dict(log_likelihood={"y": ll[None, :, finite]}), pointwise=True, reff=1.0)
    np.testing.assert_allclose(terms["loo_i"][finite], ref.loo_i.values, rtol=1e-6)
    np.testing.assert_allclose(terms["k"][finite], ref.pareto_k.values, rtol=1e-6)
    np.testing.assert_allclose(terms["var_i"][finite], ll[:, finite].var(axis=0), rtol=1e-12)
    assert list(terms["zero_i"]) == [False, False, True, False, True, False]
    assert np.isneginf(terms["loo_i"][[2, 4]]).all() and np.isposinf(terms["var_i"][[2, 4]]).all()
    assert np.isposinf(terms["k"][[2, 4]]).all()
    # lppd is finite where some draws are: log(mean(p)) over the draws, by hand
    assert np.isclose(terms["lppd_i"][2], np.log(np.exp(ll[:, 2]).mean()), rtol=1e-12)
    assert np.isneginf(terms["lppd_i"][4])
    for name in ("elpd_loo", "se_loo", "p_loo", "elpd_waic", "se_waic", "p_waic"):
        assert np.isnan(ic[name]), name
    # the 7 rows of groups 2 and 4 beyond the limit, the rest as ArviZ counts them
    limit = ic["pareto_k_limit"]
    assert np.isposinf(ic["pareto_k_max"])
    assert ic["pareto_k_bad"] == 7 + int(np.sum(n[finite][ref.pareto_k.values > limit]))
    note = zero_probability_note(terms, n)
    assert note == (
        "7 rows have a log-likelihood of -inf under at least one posterior draw "
        "(numerical underflow or zero probability): elpd is undefined"
    )
    assert zero_probability_note(pointwise([ll[:, finite]], 1.0), n[finite]) is None
