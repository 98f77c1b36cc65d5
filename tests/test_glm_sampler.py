"""The sampler's pieces against independent references: the block mass
matrix's start against jax's exact Hessian (``sampler.FlatModel``), the signed
group scale of the item model against eq. 4's density written with scipy, the
padding rule and the warm-up's step count.

The posterior the sampler reaches is checked elsewhere, against row-level
numpyro models (tests/test_glm_hierarchical.py, test_glm_engine.py).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer.util import log_density
from scipy import stats

from judge_bias.glm import (
    MODELS,
    FitSettings,
    Priors,
    ordinal_counts,
    ordinal_counts_from_rows,
    run,
)
from judge_bias.glm.data import ORDINAL_KEYS
from judge_bias.glm.fit import _padded, padded_size
from judge_bias.glm.models import item_parameterisation
from judge_bias.glm.sampler import DENSE_BLOCK_SITE_MAX, FlatModel
from tests.test_glm_hierarchical import graded_rows


@pytest.fixture(scope="module")
def item_model():
    """The item model on 6 graders x 3 models x 60 items, 54 ratings per item
    (centred item effects), 9 per grader x item cell (non-centred grader x
    item effects, the signed sd)."""
    rows = graded_rows(180, seed=5, items=60)
    data = ordinal_counts(ordinal_counts_from_rows(rows, (*ORDINAL_KEYS, "item")), list(range(5)))
    assert item_parameterisation(data).name == "cn"
    _, codes, y, n = _padded(data)
    codes["num_classes"] = np.int32(5)
    args = (codes, y, n)
    return data, FlatModel(MODELS["items"].numpyro_model(data, Priors()), args), args


def test_dense_block_is_the_small_sites(item_model):
    _, flat, _ = item_model
    block = set(flat.dense_block().tolist())
    sizes = {k: int(np.prod(v.shape)) for k, v in flat._shapes.items()}
    small = {k for k, s in sizes.items() if s <= DENSE_BLOCK_SITE_MAX}
    assert "grader_item_effects_raw" not in small and "item_effects" not in small  # 360, 59
    assert "grader_item_sigma_signed" in small and "cutpoint_gaps" in small
    assert block == set(np.flatnonzero(flat.held(tuple(small))).tolist())
    assert len(block) == sum(sizes[k] for k in small) < flat.size


def test_block_start_is_the_exact_hessian(item_model):
    """The dense block's Hessian equals jax.hessian's block to 1e-8; each
    Hutchinson diagonal entry is within 4 of its own standard errors of jax's
    diagonal (with +-1 probes the error of entry i has variance sum over
    j != i of H_ij^2 / probes, from the exact Hessian)."""
    _, flat, args = item_model
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 0.3, flat.size)
    exact = np.asarray(jax.hessian(lambda v: flat.potential(v, args))(jnp.asarray(x)))
    block = flat.dense_block()
    np.testing.assert_allclose(flat.block_hessian(x, args, block), exact[np.ix_(block, block)],
                               rtol=1e-8, atol=1e-8)  # fmt: skip
    probes = 64
    estimate = flat.curvature_diagonal(x, args, probes, rng)
    off = exact - np.diag(np.diag(exact))
    se = np.sqrt((off**2).sum(axis=1) / probes)
    error = estimate - np.diag(exact)
    assert np.all(np.abs(error) <= 4 * se + 1e-9)
    # unbiased with exactly that variance: the squared standardised errors
    # average about 1 (a bias, or probes that are not +-1, would not)
    assert 0.6 < np.mean((error / se) ** 2) < 1.5


def test_signed_group_scale_has_the_density_of_eq4(item_model):
    """The non-centred grader x item effects are sampled as s x raw with s ~
    Cauchy(0, scale), the sd being |s|. Eq. 4 (sd ~ HalfCauchy(scale), effects
    ~ Normal(0, sd), written with scipy) at sd = |s|, effects = s x raw, times
    the Jacobian |s|^cells of raw -> effects, must give the model's density up
    to a constant: checked as differences between random points, both signs
    of s."""
    data, flat, (codes, y, n) = item_model
    pr = Priors()
    model = MODELS["items"].numpyro_model(data, pr)
    args = (codes, y, np.zeros_like(n))  # the priors alone
    rng = np.random.default_rng(3)
    shape = (data.count("grader"), data.count("item"))
    fixed = {
        "intercept": np.array(0.2),
        "first_cutpoint_offset": np.array(-4.0),
        "cutpoint_gaps": np.full(3, 0.6),
        "grader_effects_free": np.zeros(5),
        "model_effects_free": np.zeros(2),
        "item_sigma": np.array(0.7),
        "item_effects": np.zeros(data.count("item")),
    }
    gaps = []
    for s in [0.05, -0.05, 0.4, -1.3, 2.0]:
        raw = rng.normal(0.0, 1.0, shape)
        params = {**fixed, "grader_item_sigma_signed": np.array(s), "grader_item_effects_raw": raw}
        ours, trace = log_density(model, args, {}, params)
        sd = abs(s)
        effects = np.asarray(trace["grader_item_effects"]["value"])
        np.testing.assert_allclose(effects, s * raw, rtol=1e-12)
        assert float(trace["grader_item_sigma"]["value"]) == pytest.approx(sd, rel=1e-12)
        eq4 = (
            stats.halfcauchy.logpdf(sd, scale=pr.item_sigma_scale)
            + stats.norm.logpdf(effects, 0.0, sd).sum()
            + raw.size * np.log(sd)
        )
        gaps.append(float(ours) - eq4)
    np.testing.assert_allclose(gaps, gaps[0], atol=1e-8)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 270, 1000, 5400, 6480, 8192, 8193, 97_200])
def test_padding_is_at_most_a_sixteenth_of_the_next_power_of_two(n):
    size = padded_size(n)
    power = 1 << max(n - 1, 0).bit_length()
    assert size >= n and size >= 64
    assert size - n < max(64, power // 16)
    assert size % max(64, power // 16) == 0


def test_warmup_steps_are_counted():
    """Each warm-up iteration takes 1 to 2^depth - 1 leapfrog steps: the count
    per chain is within those bounds and sits beside the draws' own."""
    rows = graded_rows(20, seed=7)
    data = ordinal_counts(ordinal_counts_from_rows(rows), list(range(5)))
    settings = FitSettings(draws=100, warmup=150, chains=2, seed=3, max_tree_depth=6)
    fit = run(MODELS["grader_model"], data, Priors(), settings)
    assert fit.warmup_steps is not None and fit.warmup_steps.shape == (2,)
    assert np.all(fit.warmup_steps >= 150) and np.all(fit.warmup_steps <= 150 * 63)
    assert fit.num_steps is not None and np.all(fit.num_steps >= 1)
