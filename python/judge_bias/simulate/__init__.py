"""Deterministic synthetic evaluation logs with planted biases.

The generator follows the Play Favorites model on a latent [0, 1] scale:

    latent judge score = delta_j + beta_j * q + gamma_j * 1[j = m]
                         + lambda_F(j) * 1[F(j) = F(m), j != m] + eta_d
                         + length_slope_j * length_feature + noise

where q is the completion's true quality. Humans see q plus their own
leniency and noise. Both are rounded to the nearest point of the dimension's
scale, so estimates on the discrete scale are attenuated versions of the
planted values: signs and significance come back, magnitudes only roughly.
Every planted parameter is written to ``truth.csv`` beside the data.

- ``planted``: every planted value (the truth the tests and truth.csv compare with).
- ``ratings``: the entry point (``ratings.simulate``): writes the input files.
- ``draws``: the random helpers the generators share.
- ``pairwise``: the optional pairwise judgments and their planted values.
- ``perturbation``: the optional perturbation judgments and their planted values.
- ``versions``: optional judge reruns and a drifted judge version.
- ``truth``: writes truth.csv.
- ``label_share``: hides human labels (``--label-share``) for the PPI checks.
- ``glm``: data drawn from the autograder GLMs themselves (planted ``GLM_*`` values)
  for their coverage study.
"""

from judge_bias.simulate.planted import (
    ANNOTATORS,
    DATASETS,
    DIMENSION_EFFECT,
    EXPERTS,
    FAMILY_BIAS,
    GENERATORS,
    GOLD_PROMPTS,
    INVERTED_JUDGE,
    INVERTED_SELF_BIAS_SHIFT,
    JUDGE_NOISE_SD,
    JUDGE_OFFSET,
    JUDGE_SLOPE,
    JUDGES,
    LENGTH_SLOPE,
    MODEL_QUALITY,
    MODEL_VERBOSITY,
    MODELS,
    NA_RATE,
    PAIRWISE_CONTENT,
    PAIRWISE_FIRST_SLOT,
    PAIRWISE_HUMAN_NOISE_SD,
    PAIRWISE_HUMAN_TIE,
    PAIRWISE_LENGTH_SLOPE,
    PAIRWISE_LOG_PERPLEXITY,
    PAIRWISE_P_FIRST_JUDGE,
    PAIRWISE_PAIRS_PER_PROMPT,
    PAIRWISE_PERPLEXITY_JUDGE,
    PAIRWISE_PERPLEXITY_SLOPE,
    PAIRWISE_SELF_LOGIT,
    PERTURBATION_ACCURACY,
    PERTURBATION_BASE_FLIP,
    PERTURBATION_FLIP,
    PERTURBATION_INFLATION,
    PERTURBATION_ITEMS,
    PERTURBATION_REPEAT_FLIP,
    PERTURBATION_SCORE_NOISE_SD,
    PERTURBATION_SCORE_TYPE,
    PERTURBATION_VERDICT_TYPES,
    RAW_OUTPUT_JUDGES,
    SCALES,
    SELF_BIAS,
    SIM_VERSION,
    Scale,
)
from judge_bias.simulate.ratings import simulate

__all__ = [
    "simulate",
    "ANNOTATORS",
    "DATASETS",
    "DIMENSION_EFFECT",
    "EXPERTS",
    "FAMILY_BIAS",
    "GENERATORS",
    "GOLD_PROMPTS",
    "INVERTED_JUDGE",
    "INVERTED_SELF_BIAS_SHIFT",
    "JUDGES",
    "JUDGE_NOISE_SD",
    "JUDGE_OFFSET",
    "JUDGE_SLOPE",
    "LENGTH_SLOPE",
    "MODELS",
    "MODEL_QUALITY",
    "MODEL_VERBOSITY",
    "NA_RATE",
    "PAIRWISE_CONTENT",
    "PAIRWISE_FIRST_SLOT",
    "PAIRWISE_HUMAN_NOISE_SD",
    "PAIRWISE_HUMAN_TIE",
    "PAIRWISE_LENGTH_SLOPE",
    "PAIRWISE_LOG_PERPLEXITY",
    "PAIRWISE_PAIRS_PER_PROMPT",
    "PAIRWISE_PERPLEXITY_JUDGE",
    "PAIRWISE_PERPLEXITY_SLOPE",
    "PAIRWISE_P_FIRST_JUDGE",
    "PAIRWISE_SELF_LOGIT",
    "PERTURBATION_ACCURACY",
    "PERTURBATION_BASE_FLIP",
    "PERTURBATION_FLIP",
    "PERTURBATION_INFLATION",
    "PERTURBATION_ITEMS",
    "PERTURBATION_REPEAT_FLIP",
    "PERTURBATION_SCORE_NOISE_SD",
    "PERTURBATION_SCORE_TYPE",
    "PERTURBATION_VERDICT_TYPES",
    "RAW_OUTPUT_JUDGES",
    "SCALES",
    "SELF_BIAS",
    "SIM_VERSION",
    "Scale",
]
