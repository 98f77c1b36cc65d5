"""The hierarchical (eq. 3) and item (eq. 4) models on counts against
row-level numpyro models written here independently (numpyro's own
OrderedLogistic on every row, its own MCMC with windowed adaptation).

The count fit picks its sampler by the data (``models.grader_parameterisation``:
centred grader effects when every grader has >= 100 ratings, else
non-centred, with the mass matrix adapted from the Laplace one), so both
branches are checked, each on data that selects it. The posterior is the same
either way: means and sds must agree within Z combined MCSEs
(``assert_same_posterior``) and the count fit must pass its own diagnostics.
"""

from __future__ import annotations

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
    ordinal_counts,
    ordinal_counts_from_rows,
    run,
)
from judge_bias.glm.fit import diagnostics, summary
from judge_bias.glm.models import CENTRED_MIN_RATINGS, grader_parameterisation
from tests.test_glm_engine import assert_same_posterior

SETTINGS = FitSettings(draws=1000, warmup=400, chains=2, seed=11)
CUTS = np.array([-2.0, -0.7, 0.6, 1.9])


def graded_rows(per_cell: int, seed: int, items: int = 0) -> pd.DataFrame:
    """3 human annotators and 3 LLM judges rate 3 models on a 5-point scale;
    grader effects drawn per type, ``per_cell`` ratings per (grader, model)
    (one per item when ``items``, with item and grader x item effects)."""
    rng = np.random.default_rng(seed)
    graders = {"ann-1": "human", "ann-2": "human", "ann-3": "human",
               "judge-a": "llm", "judge-b": "llm", "judge-c": "llm"}  # fmt: skip
    type_mean = {"human": 0.4, "llm": -0.3}
    effect = {g: rng.normal(type_mean[t], 0.5) for g, t in graders.items()}
    model = {"m-a": 0.5, "m-b": 0.0, "m-c": -0.5}
    item_effect = rng.normal(0, 0.6, max(items, 1))
    grader_item = rng.normal(0, 0.3, (len(graders), max(items, 1)))
    rows = []
    for gi, (g, kind) in enumerate(graders.items()):
        for m, me in model.items():
            for r in range(per_cell):
                i = r % items if items else 0
                eta = effect[g] + me + (item_effect[i] + grader_item[gi, i] if items else 0.0)
                score = int(np.searchsorted(CUTS, eta + rng.logistic()))
                row = {"grader": g, "grader_type": kind, "model": m, "score": score}
                if items:
                    row["item"] = f"p{i:03d}"
                rows.append(row)
    return pd.DataFrame(rows)


def row_level_hierarchical(rows: pd.DataFrame, priors: Priors, centred: bool):
    """Eq. 3 on rows: grader effects ~ Normal(type mean, type sd) (centred or
    non-centred, as asked), sum-to-zero model effects, HiBayes cutpoints."""
    g_idx, g_names = pd.factorize(rows["grader"], sort=True)
    m_idx, m_names = pd.factorize(rows["model"], sort=True)
    t_of_g = pd.factorize(
        rows.drop_duplicates("grader").set_index("grader").loc[list(g_names), "grader_type"],
        sort=True,
    )[0]
    y = jnp.asarray(rows["score"].to_numpy())

    def model():
        b0 = numpyro.sample("intercept", dist.Normal(priors.intercept_loc, priors.intercept_scale))
        mu = numpyro.sample(
            "grader_type_means", dist.Normal(0.0, priors.type_mean_scale).expand([2])
        )
        sd = numpyro.sample(
            "grader_type_sigmas", dist.HalfCauchy(priors.type_sigma_scale).expand([2])
        )
        if centred:
            g = numpyro.sample("grader_effects", dist.Normal(mu[t_of_g], sd[t_of_g]))
        else:
            z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([len(g_names)]))
            g = numpyro.deterministic("grader_effects", mu[t_of_g] + sd[t_of_g] * z)
        free = numpyro.sample("m", dist.Normal(0.0, priors.effect_scale).expand([len(m_names) - 1]))
        m = numpyro.deterministic("model_effects", jnp.append(free, -free.sum()))
        c1 = numpyro.sample(
            "c1", dist.Normal(priors.first_cutpoint_loc, priors.first_cutpoint_scale)
        )
        gaps = numpyro.sample(
            "gaps", dist.LogNormal(priors.cutpoint_gap_loc, priors.cutpoint_gap_scale).expand([3])
        )
        cut = numpyro.deterministic(
            "cutpoints",
            jnp.concatenate([c1[None], c1 + jnp.cumsum(gaps + priors.min_cutpoint_spacing)]),
        )
        numpyro.sample("y", dist.OrderedLogistic(b0 + g[g_idx] + m[m_idx], cut), obs=y)

    return model


def sample_reference(model, seed: int) -> dict[str, np.ndarray]:
    mcmc = MCMC(
        NUTS(model, target_accept_prob=0.95, dense_mass=True),
        num_warmup=800,
        num_samples=1000,
        num_chains=2,
        chain_method="vectorized",
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(seed))
    diverging = int(mcmc.get_extra_fields()["diverging"].sum())
    assert diverging <= 5, f"the reference itself diverged {diverging} times"
    return {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}


HIERARCHICAL = ["intercept", "grader_type_means", "grader_type_sigmas", "grader_effects",
                "model_effects", "cutpoints"]  # fmt: skip


@pytest.mark.parametrize(("per_cell", "branch"), [(60, "centred"), (8, "non-centred")])
def test_hierarchical_count_posterior_equals_row_level(per_cell, branch):
    rows = graded_rows(per_cell, seed=21)
    data = ordinal_counts(ordinal_counts_from_rows(rows), list(range(5)))
    assert (3 * per_cell >= CENTRED_MIN_RATINGS) == (branch == "centred")
    assert grader_parameterisation(data).name == branch
    counted = run(MODELS["hierarchical"], data, Priors(), SETTINGS)
    assert branch in counted.notes[0] and "adapted" in counted.notes[0]
    diag = diagnostics(counted, summary(counted))
    assert diag["divergences"] <= 5 and diag["r_hat_max"] <= 1.01, diag
    reference = sample_reference(row_level_hierarchical(rows, Priors(), branch == "centred"), 5)
    assert assert_same_posterior(counted.samples, reference, HIERARCHICAL) == 18  # every scalar
