"""Simulation-based calibration of the GLM engine (bench/glm_sbc.py).

The prior draw is written in numpy from the Priors fields, not from the numpyro
model, so the fast tests check it against the prior's closed-form moments; the
slow study (100 replications of grader_model, 19 scalars each; about 3 minutes,
JUDGE_BIAS_SLOW=1) checks the calibration: 90% interval coverage over
replications x scalars in [0.85, 0.95], and each scalar's ranks uniform by a
chi-square test (10 bins) at 0.01 after a Bonferroni correction over 19.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judge_bias.bench.glm_sbc import NUM_CLASSES, prior_draw, run_sbc
from judge_bias.glm.priors import Priors


def test_prior_draw_has_the_priors_moments():
    rng = np.random.default_rng(0)
    draws = [prior_draw(rng) for _ in range(20_000)]
    pr = Priors()
    grader = np.stack([d["grader_effects"] for d in draws])  # 3 levels: 2 free
    np.testing.assert_allclose(grader[:, :2].std(axis=0), pr.effect_scale, rtol=0.03)
    np.testing.assert_allclose(grader[:, 2].std(), pr.effect_scale * np.sqrt(2), rtol=0.03)
    np.testing.assert_allclose(grader.sum(axis=1), 0, atol=1e-9)
    gm = np.stack([d["grader_model_effects"] for d in draws])
    np.testing.assert_allclose(gm.sum(axis=1), 0, atol=1e-9)
    np.testing.assert_allclose(gm.sum(axis=2), 0, atol=1e-9)
    # a corner cell is the sum of the 4 free cells: sd 2 x interaction_scale
    np.testing.assert_allclose(gm[:, 2, 2].std(), 2 * pr.interaction_scale, rtol=0.03)
    cuts = np.stack([d["cutpoints"] for d in draws])
    assert cuts.shape[1] == NUM_CLASSES - 1
    np.testing.assert_allclose(cuts[:, 0].mean(), pr.first_cutpoint_loc, atol=0.01)
    gaps = np.diff(cuts, axis=1) - pr.min_cutpoint_spacing
    # LogNormal(loc, scale): log of the gaps is normal with those moments
    assert (
        stats.kstest(
            np.log(gaps[:, 0]), "norm", (pr.cutpoint_gap_loc, pr.cutpoint_gap_scale)
        ).pvalue
        > 0.01
    )


@pytest.mark.slow
def test_sbc_coverage_and_rank_uniformity():
    result = run_sbc(replications=100)
    assert result.divergences == 0
    assert 0.85 <= result.coverage <= 0.95, result.lines()
    assert result.chi2_p.min() * result.scalars > 0.01, result.lines()
