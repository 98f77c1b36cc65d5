"""Autograder GLMs (HiBayes paper): Bayesian ordered-logistic and pairwise
logistic models of judge and annotator scores, fitted with numpyro NUTS on
count cells instead of rows.

The warehouse aggregates ratings to (design cell x score) counts in SQL; the
likelihood of a cell is its count times one row's log-likelihood, so the
posterior equals the row-level one at a fraction of the cost. Models live in
a registry (``MODELS``, one function each in ``models.py``); ``run_glms``
fits every requested model per dimension and returns the rows of the marts
glm_effects, glm_fits, glm_model_comparison, glm_agreement (and its per-draw
alphas, glm_agreement_draws) and glm_pairwise_effects. The sampler runs in
double precision (glm.sampler).

- ``spec``: what a registered GLM is (``ModelSpec``), the registry and the building
  blocks of the models.
- ``models``: the registered GLMs, one function per model.
- ``priors``: the prior settings (HiBayes 1.0's defaults), each one a dbt var.
- ``centring``: how far ``hierarchical`` centres each grader's effect.
- ``data``: the (design cell x outcome) count groups a GLM is fitted on.
- ``likelihood``: the log-probabilities of the two likelihoods, for count cells.
- ``sampler``: NUTS for a batch of dimensions, started at the posterior mode.
- ``fit``: one model on every dimension's count data, with its diagnostics.
- ``mcmc_stats``: ArviZ's posterior statistics without importing ArviZ.
- ``summarise``: posterior summaries with names (effects, contrasts, pairs, triples).
- ``compare``: PSIS-LOO and WAIC from count groups, and the ranking of models.
- ``agreement``: counterfactual agreement on posterior-predictive scores.
- ``runner``: every requested GLM on every dimension, as one long table.
- ``dbt``: the dbt side: read the count tables, run every fit, return the long table.
- ``progress``: progress lines of the fits on stderr.
- ``lazy``: the modules imported on first use (JAX, numpyro, SciPy, krippendorff).
"""

from judge_bias.glm.agreement import agreement
from judge_bias.glm.compare import information_criteria, rank_models, relative_efficiency
from judge_bias.glm.data import (
    CountData,
    ordinal_counts,
    ordinal_counts_from_rows,
    pairwise_counts,
    pairwise_counts_from_rows,
)
from judge_bias.glm.fit import Fit, FitSettings, diagnostics, run, summary
from judge_bias.glm.models import MODELS, ModelSpec
from judge_bias.glm.priors import Priors
from judge_bias.glm.runner import GlmConfig, Inputs, run_glms

__all__ = [
    "MODELS",
    "CountData",
    "Fit",
    "FitSettings",
    "GlmConfig",
    "Inputs",
    "ModelSpec",
    "Priors",
    "agreement",
    "diagnostics",
    "information_criteria",
    "ordinal_counts",
    "ordinal_counts_from_rows",
    "pairwise_counts",
    "pairwise_counts_from_rows",
    "rank_models",
    "relative_efficiency",
    "run",
    "run_glms",
    "summary",
]
