"""Every value the simulator plants (judges, models, families, biases, noise, pairwise and
perturbation effects): the truth the tests and truth.csv compare estimates with.
"""

from __future__ import annotations

from dataclasses import dataclass

SIM_VERSION = "1"


@dataclass(frozen=True)
class Scale:
    dimension: str
    labels: tuple[str, ...]  # in score order, scores 1..k
    na_label: str | None = None


SCALES: tuple[Scale, ...] = (
    Scale("correctness", ("Incorrect", "Partially correct", "Correct")),
    Scale(
        "helpfulness",
        (
            "Not helpful",
            "Slightly helpful",
            "Somewhat helpful",
            "Very helpful",
            "Extremely helpful",
        ),
    ),
    Scale(
        "faithfulness",
        (
            "Definitely no",
            "No",
            "Generally no",
            "Neutral",
            "Generally yes",
            "Yes",
            "Definitely yes",
        ),
        na_label="NA: nothing to verify",
    ),
)


# model -> (family, provider alias used in the logs)
MODELS: dict[str, tuple[str, str]] = {
    "aurora-large": ("Aurora", "aurora/large-2025-01"),
    "aurora-small": ("Aurora", "aurora/small-2025-01"),
    "borealis-pro": ("Borealis", "borealis-pro-v1"),
    "borealis-lite": ("Borealis", "borealis-lite-v1"),
    "cirrus-max": ("Cirrus", "cirrus-max"),
    "cirrus-mini": ("Cirrus", "cirrus-mini"),
    "delta-judge": ("Delta", "delta-judge-1"),
}


GENERATORS = (
    "aurora-large",
    "aurora-small",
    "borealis-pro",
    "borealis-lite",
    "cirrus-max",
    "cirrus-mini",
)  # cirrus-mini never judges


JUDGES = (
    "aurora-large",
    "aurora-small",
    "borealis-pro",
    "borealis-lite",
    "cirrus-max",
    "delta-judge",
)  # delta-judge generates nothing


MODEL_QUALITY = {
    "aurora-large": 0.70,
    "aurora-small": 0.52,
    "borealis-pro": 0.66,
    "borealis-lite": 0.48,
    "cirrus-max": 0.62,
    "cirrus-mini": 0.42,
}


MODEL_VERBOSITY = {  # mean completion length in words
    "aurora-large": 150,
    "aurora-small": 90,
    "borealis-pro": 120,
    "borealis-lite": 70,
    "cirrus-max": 110,
    "cirrus-mini": 60,
}


# Planted judge parameters on the latent normalised scale.
JUDGE_OFFSET = {
    "aurora-large": 0.05,
    "aurora-small": 0.10,
    "borealis-pro": 0.0,
    "borealis-lite": 0.08,
    "cirrus-max": -0.02,
    "delta-judge": 0.12,
}


JUDGE_SLOPE = {
    "aurora-large": 0.85,
    "aurora-small": 0.70,
    "borealis-pro": 0.90,
    "borealis-lite": 0.60,
    "cirrus-max": 0.80,
    "delta-judge": 0.65,
}


SELF_BIAS = {
    "aurora-large": 0.15,
    "aurora-small": 0.10,
    "borealis-pro": 0.0,
    "borealis-lite": 0.0,
    "cirrus-max": -0.12,
    "delta-judge": 0.0,
}


FAMILY_BIAS = {"Aurora": 0.10, "Borealis": 0.0, "Cirrus": 0.0, "Delta": 0.0}


LENGTH_SLOPE = {j: 0.0 for j in JUDGES} | {"delta-judge": 0.15}


DIMENSION_EFFECT = {"correctness": 0.0, "helpfulness": 0.04, "faithfulness": -0.03}


JUDGE_NOISE_SD = 0.08


# Judges that answer in free text ending in "Answer: <label>".
RAW_OUTPUT_JUDGES = ("borealis-pro", "cirrus-max")


# The judge also run under an inverted frame ("1 is best"), answering with numbers.
INVERTED_JUDGE = "aurora-small"


INVERTED_SELF_BIAS_SHIFT = -0.10  # its self-bias under the inverted frame is 0.10 - 0.10 = 0


ANNOTATORS = {  # id -> (leniency, noise sd) on the latent scale
    "ann_1": (-0.05, 0.05),
    "ann_2": (0.00, 0.10),
    "ann_3": (0.08, 0.15),
}


EXPERTS = {"expert_1": 0.03, "expert_2": 0.05}  # id -> noise sd, no leniency


GOLD_PROMPTS = 30  # prompts whose completions the experts label (role = expert)


NA_RATE = 0.03  # share of faithfulness labels that are "NA: ..." (humans and judges)


DATASETS = (("news", "summarization"), ("forum", "qa"))


# Pairwise judgments (pairwise_judgments.csv), from their own random stream (seed + 2).
# Each completion gets a pairwise quality u ~ N(0, 1), independent of model and
# length. For judge j and the ordered pair (A first, B second):
#   with probability PAIRWISE_FIRST_SLOT[j] the verdict is "first" whatever the content;
#   else P(first) = logistic(PAIRWISE_CONTENT[j] * (u_A - u_B)
#                            + PAIRWISE_LENGTH_SLOPE[j] * x
#                            + PAIRWISE_SELF_LOGIT[j] * (1[A = j] - 1[B = j])
#                            + PAIRWISE_PERPLEXITY_SLOPE[j] * (log ppl_B - log ppl_A)),
# x = length_difference_feature(tokens of A, tokens of B). Humans: d = u_A - u_B +
# N(0, PAIRWISE_HUMAN_NOISE_SD); first if d > PAIRWISE_HUMAN_TIE, second if
# d < -PAIRWISE_HUMAN_TIE, else tie.
PAIRWISE_PAIRS_PER_PROMPT = 5  # unordered generator pairs per prompt, asked in both orders


# delta-judge ignores content and follows length only, so that P(first) =
# logistic(slope * x) holds marginally: a regression of the first-slot choice on x
# estimates the planted slope itself. The self-preferring judge writes shorter
# completions than the others' mean (90 vs 102 words), the least length-confounded.
PAIRWISE_CONTENT = {j: 2.0 for j in JUDGES} | {"delta-judge": 0.0}


PAIRWISE_FIRST_SLOT = {j: 0.0 for j in JUDGES} | {"borealis-lite": 0.30}


PAIRWISE_LENGTH_SLOPE = {j: 0.0 for j in JUDGES} | {"delta-judge": 1.5}


PAIRWISE_SELF_LOGIT = {j: 0.0 for j in JUDGES} | {"aurora-small": 1.0}


PAIRWISE_PERPLEXITY_SLOPE = {j: 0.0 for j in JUDGES} | {"aurora-large": 1.0}


PAIRWISE_P_FIRST_JUDGE = "borealis-pro"  # reports p_first = its P(first)


PAIRWISE_PERPLEXITY_JUDGE = "aurora-large"  # reports perplexities


PAIRWISE_LOG_PERPLEXITY = (2.0, 0.3)  # log perplexity ~ N(mean, sd) per completion


PAIRWISE_HUMAN_NOISE_SD = 0.5


PAIRWISE_HUMAN_TIE = 0.2


# Perturbation judgments (perturbation_judgments.csv), own stream (seed + 3).
# Verdict bias types: per item a ground truth "A" or "B"; the original verdict is
# right with probability PERTURBATION_ACCURACY; the repeat flips it with probability
# PERTURBATION_REPEAT_FLIP; the perturbed one flips it with PERTURBATION_FLIP.
# Score bias type (self-enhancement): original score o uniform on 4..8 (a 1-10
# scale), repeat = o * exp(e1), perturbed = o * (1 + PERTURBATION_INFLATION[j]) *
# exp(e2), e ~ N(0, PERTURBATION_SCORE_NOISE_SD).
PERTURBATION_ITEMS = 60  # items per judge x bias type


PERTURBATION_VERDICT_TYPES = ("position", "verbosity", "authority")


PERTURBATION_SCORE_TYPE = "self-enhancement"


PERTURBATION_ACCURACY = 0.80


PERTURBATION_REPEAT_FLIP = 0.05


PERTURBATION_BASE_FLIP = 0.05


PERTURBATION_FLIP = {
    (j, b): PERTURBATION_BASE_FLIP for j in JUDGES for b in PERTURBATION_VERDICT_TYPES
} | {
    ("cirrus-max", "position"): 0.35,
    ("delta-judge", "verbosity"): 0.40,
    ("borealis-lite", "authority"): 0.30,
}


PERTURBATION_INFLATION = {j: 0.0 for j in JUDGES} | {"aurora-large": 0.20}


PERTURBATION_SCORE_NOISE_SD = 0.05


# The GLM planted study (simulate/glm.py, tests/test_glm_planted.py): data drawn from
# the GLMs themselves, so the planted values are the GLMs' own parameters (effect
# coding: main effects sum to zero, interaction rows and columns sum to zero).
# Ordered logistic, P(score <= k) = logistic(GLM_CUTPOINTS[k] - eta) with
# eta = GLM_INTERCEPT + grader + model + grader x model (+ item); the interaction is
# the double-centred matrix of the planted self effects (GLM_SELF on the judge's own
# model, 0 elsewhere); truth.csv also gives each judge's self contrast computed from it
# as the GLM reports it (own-model interaction minus mean over the other models).
GLM_GRADERS = {
    "aurora-large": "llm",
    "borealis-pro": "llm",
    "cirrus-max": "llm",
    "ann_1": "human",
    "ann_2": "human",
}


GLM_MODELS = ("aurora-large", "borealis-pro", "cirrus-max", "cirrus-mini")


GLM_GRADER_EFFECT = {  # sums to zero
    "aurora-large": 0.4,
    "borealis-pro": -0.2,
    "cirrus-max": 0.1,
    "ann_1": -0.5,
    "ann_2": 0.2,
}


GLM_MODEL_EFFECT = {  # sums to zero
    "aurora-large": 0.6,
    "borealis-pro": 0.2,
    "cirrus-max": -0.1,
    "cirrus-mini": -0.7,
}


GLM_SELF = {"aurora-large": 0.8, "borealis-pro": 0.0, "cirrus-max": -0.6}


GLM_INTERCEPT = 0.0


GLM_CUTPOINTS = (-4.0, -2.9, -1.9, -0.8)  # a 5-point scale; the prior's first cutpoint


GLM_ITEM_SD = 0.5  # item effects ~ N(0, sd), drawn per item from the seed


# Pairwise GLM: logit P(first chosen) = GLM_POSITION + sign x pair effect (A's
# advantage over B, names sorted) + grader effect + grader slope x standardised
# length difference (standardised over the rows as the GLM does); every pair is
# shown in both orders, so the pair effects are free (not effect-coded).
GLM_POSITION = 0.3


GLM_PAIR_EFFECT = {  # a transitive order: aurora-large > borealis-pro > cirrus-max > cirrus-mini
    "aurora-large vs borealis-pro": 0.5,
    "aurora-large vs cirrus-max": 0.9,
    "aurora-large vs cirrus-mini": 1.4,
    "borealis-pro vs cirrus-max": 0.4,
    "borealis-pro vs cirrus-mini": 0.9,
    "cirrus-max vs cirrus-mini": 0.5,
}


GLM_PAIR_GRADER_EFFECT = {"aurora-large": 0.2, "borealis-pro": -0.3, "cirrus-max": 0.1}


GLM_LENGTH_SLOPE = {"aurora-large": 0.6, "borealis-pro": 0.1, "cirrus-max": 0.3}


GLM_LENGTH_DIFF_SD = 40.0  # raw length difference (tokens) ~ N(0, sd), rounded
