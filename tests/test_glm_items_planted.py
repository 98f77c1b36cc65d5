"""The items GLM (eq. 4) recovers planted item and grader effects: a fast
check that runs in ``make test`` (the row-level comparison in
test_glm_hierarchical is marked slow).

4 LLM judges x 3 models x 10 items, 30 ratings per (judge, model, item) cell
(3,600 ratings), scores 0-4 drawn with numpy from an ordered logit with
planted grader, model, item and grader x item effects (sd 0.3). The model's
item effects are effect-coded (sum to zero over items) and its grader x item
effects are not constrained over graders, so the effects it identifies are the
planted ones plus the mean planted grader x item effect over the other factor,
centred: item i: item_i + mean over graders of gi[g, i]; grader g: grader_g +
mean over items of gi[g, i]. Each posterior mean must lie within 4 posterior
sds of that value and the squared z-scores of each term must sum below the
chi-square 0.999 quantile for their count (the posterior is near normal with
360 ratings per item, 900 per judge). Dropping the item term from the linear
predictor, indexing it by grader, or flipping its sign puts the item z-scores
near 8 (planted item sd 0.8, posterior sd about 0.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import chi2

from judge_bias.glm import (
    MODELS,
    FitSettings,
    Priors,
    ordinal_counts,
    ordinal_counts_from_rows,
    run,
)
from judge_bias.glm.data import ORDINAL_KEYS
from judge_bias.glm.fit import diagnostics, summary
from judge_bias.glm.models import item_parameterisation
from judge_bias.simulate.glm import draw_scores

SETTINGS = FitSettings(draws=500, chains=2, seed=5)
CUTS = np.array([-2.0, -0.7, 0.6, 1.9])
GRADERS = {"judge-a": 0.5, "judge-b": -0.2, "judge-c": 0.1, "judge-d": -0.4}
MODEL_EFFECTS = {"m-1": 0.3, "m-2": 0.0, "m-3": -0.3}
N_ITEMS, PER_CELL, ITEM_SD, GRADER_ITEM_SD = 10, 30, 0.8, 0.3


def planted() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Rows (grader, grader_type, model, item, score 0-4) and the identified
    item and grader effects (see the module's docstring)."""
    rng = np.random.default_rng(41)
    items = rng.normal(0.0, ITEM_SD, N_ITEMS)
    gi = rng.normal(0.0, GRADER_ITEM_SD, (len(GRADERS), N_ITEMS))
    graders = np.array(list(GRADERS.values()))
    g, m, i, _ = (
        a.ravel()
        for a in np.meshgrid(
            np.arange(len(GRADERS)),
            np.arange(len(MODEL_EFFECTS)),
            np.arange(N_ITEMS),
            np.arange(PER_CELL),
            indexing="ij",
        )
    )
    eta = graders[g] + np.array(list(MODEL_EFFECTS.values()))[m] + items[i] + gi[g, i]
    rows = pd.DataFrame(
        {
            "grader": np.array(list(GRADERS))[g],
            "grader_type": "llm",
            "model": np.array(list(MODEL_EFFECTS))[m],
            "item": [f"item-{k:02d}" for k in i],
            "score": draw_scores(rng, eta, CUTS) - 1,
        }
    )
    item_truth = items + gi.mean(axis=0)
    grader_truth = graders + gi.mean(axis=1)
    return rows, item_truth - item_truth.mean(), grader_truth - grader_truth.mean()


def test_items_glm_recovers_planted_item_and_grader_effects():
    rows, item_truth, grader_truth = planted()
    counts = ordinal_counts_from_rows(rows, (*ORDINAL_KEYS, "item"))
    data = ordinal_counts(counts, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert data.n_obs == len(rows) == 3600 and data.count("item") == N_ITEMS
    assert item_parameterisation(data).name == "cc"  # 360 per item, 30 per grader x item
    fit = run(MODELS["items"], data, Priors(), SETTINGS)
    diag = diagnostics(fit, summary(fit))
    assert diag["divergences"] <= 5 and diag["r_hat_max"] <= 1.02, diag
    n = SETTINGS.draws * SETTINGS.chains
    for name, truth in (("item_effects", item_truth), ("grader_effects", grader_truth)):
        draws = fit.samples[name].reshape(n, -1)
        assert draws.shape[1] == truth.size, name
        z = (draws.mean(axis=0) - truth) / draws.std(axis=0)
        print(name, np.round(z, 2))
        assert np.all(np.abs(z) <= 4), (name, z)
        assert np.sum(z**2) < chi2.ppf(0.999, truth.size), (name, z)
