"""The GLM model comparison's standard error of d_elpd, and glm_fits when the
GLMs are off.

se_d_elpd is computed on count cells joined across models; the reference is
ArviZ's ``compare`` on the row-level pointwise log-likelihoods of the same two
"models" (its dse is sqrt(N var) of the pointwise elpd differences).
"""

from __future__ import annotations

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
