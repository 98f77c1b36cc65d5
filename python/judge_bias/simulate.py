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
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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

_WORDS: tuple[str, ...] = tuple(
    (
        "the model answer explains data result figure claim source summary article "
        "evidence report number quality method value reason example context detail "
        "point issue view because however therefore while although clearly likely "
        "often rarely mostly"
    ).split()
)


def _text(rng: np.random.Generator, n_words: int) -> str:
    words = rng.choice(_WORDS, size=n_words)
    out, sentence = [], []
    for i, w in enumerate(words):
        sentence.append(str(w))
        if len(sentence) >= 12 or i == n_words - 1:
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    text = " ".join(out)
    # a few completions carry quotes, commas and line breaks, as real ones do
    if n_words % 7 == 0:
        text = f'He said "{words[0]}, {words[-1]}".\n' + text
    return text


def _to_scale(latent: np.ndarray, k: int) -> np.ndarray:
    """Round a latent [0, 1] value to the nearest of k points, scores 1..k."""
    return np.clip(np.rint(latent * (k - 1)), 0, k - 1).astype(int) + 1


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def simulate(out_dir: str | Path, seed: int = 20250101, n_prompts: int = 120) -> Path:
    """Write a complete input directory with planted biases and ``truth.csv``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)

    prompts = []
    for i in range(n_prompts):
        dataset, task = DATASETS[i % len(DATASETS)]
        prompts.append([f"{dataset}_{i:04d}", dataset, task, f"Prompt {i}: " + _text(rng, 12)])
    _write_csv(out / "prompts.csv", ["prompt_id", "dataset", "task_type", "prompt_text"], prompts)

    completions, quality, length = [], {}, {}
    prompt_difficulty = rng.normal(0.0, 0.08, size=n_prompts)
    for p, (prompt_id, *_rest) in enumerate(prompts):
        for m in GENERATORS:
            n_words = max(8, int(rng.lognormal(np.log(MODEL_VERBOSITY[m]), 0.35)))
            text = _text(rng, n_words)
            quality[(prompt_id, m)] = float(
                np.clip(MODEL_QUALITY[m] + prompt_difficulty[p] + rng.normal(0, 0.08), 0, 1)
            )
            length[(prompt_id, m)] = n_words
            completions.append([prompt_id, MODELS[m][1], text])
    _write_csv(out / "completions.csv", ["prompt_id", "model", "completion_text"], completions)

    # Length feature as the warehouse defines it, from word counts (planted on this).
    length_feature = {}
    for prompt_id, *_ in prompts:
        lens = np.array([length[(prompt_id, m)] for m in GENERATORS], dtype=float)
        mu, sd = lens.mean(), lens.std(ddof=1)
        for m, n in zip(GENERATORS, lens, strict=True):
            length_feature[(prompt_id, m)] = float(np.tanh((n - mu) / sd)) if sd > 0 else 0.0

    humans = []
    for prompt_id, *_ in prompts:
        for m in GENERATORS:
            q = quality[(prompt_id, m)]
            for scale in SCALES:
                k = len(scale.labels)
                for ann, (leniency, sd) in ANNOTATORS.items():
                    if scale.na_label and rng.random() < NA_RATE:
                        label = scale.na_label
                    else:
                        latent = q + leniency + rng.normal(0, sd)
                        label = scale.labels[_to_scale(np.array([latent]), k)[0] - 1]
                    humans.append(
                        [prompt_id, MODELS[m][1], scale.dimension, ann, label, "annotator"]
                    )
    # Gold labels: experts on the first GOLD_PROMPTS prompts, from their own stream so
    # that adding them changed nothing else in the demo.
    gold_rng = np.random.default_rng(seed + 1)
    for prompt_id, *_ in prompts[:GOLD_PROMPTS]:
        for m in GENERATORS:
            for scale in SCALES:
                k = len(scale.labels)
                for expert, sd in EXPERTS.items():
                    latent = quality[(prompt_id, m)] + gold_rng.normal(0, sd)
                    label = scale.labels[_to_scale(np.array([latent]), k)[0] - 1]
                    humans.append(
                        [prompt_id, MODELS[m][1], scale.dimension, expert, label, "expert"]
                    )
    _write_csv(
        out / "human_annotations.csv",
        ["prompt_id", "model", "dimension", "annotator_id", "label", "role"],
        humans,
    )

    ratings = []
    for j in JUDGES:
        fam_j = MODELS[j][0]
        frames = ("positive", "inverted") if j == INVERTED_JUDGE else ("positive",)
        for framing in frames:
            for prompt_id, *_ in prompts:
                for m in GENERATORS:
                    same = j == m
                    same_fam = (not same) and MODELS[m][0] == fam_j
                    self_bias = SELF_BIAS[j] + (
                        INVERTED_SELF_BIAS_SHIFT if framing == "inverted" else 0.0
                    )
                    for scale in SCALES:
                        k = len(scale.labels)
                        latent = (
                            JUDGE_OFFSET[j]
                            + JUDGE_SLOPE[j] * quality[(prompt_id, m)]
                            + self_bias * same
                            + FAMILY_BIAS[fam_j] * same_fam
                            + DIMENSION_EFFECT[scale.dimension]
                            + LENGTH_SLOPE[j] * length_feature[(prompt_id, m)]
                            + rng.normal(0, JUDGE_NOISE_SD)
                        )
                        score = int(_to_scale(np.array([latent]), k)[0])
                        is_na = scale.na_label is not None and rng.random() < NA_RATE
                        label_text = scale.na_label if is_na else scale.labels[score - 1]
                        label, raw = label_text, ""
                        if framing == "inverted":
                            label = label_text if is_na else str(k + 1 - score)
                        elif j in RAW_OUTPUT_JUDGES:
                            label = ""
                            raw = (
                                f"Explanation: the response to {prompt_id} was checked for "
                                f"{scale.dimension}; it is judged on a {k}-point scale.\n"
                                f"Answer: {label_text}"
                            )
                        ratings.append(
                            [
                                MODELS[j][1],
                                prompt_id,
                                MODELS[m][1],
                                scale.dimension,
                                label,
                                raw,
                                framing,
                                "1",
                            ]
                        )
    _write_csv(
        out / "judge_ratings.csv",
        ["judge", "prompt_id", "model", "dimension", "label", "raw_output", "framing", "run_id"],
        ratings,
    )

    _write_csv(
        out / "models.csv",
        ["alias", "model", "family"],
        [[alias, m, fam] for m, (fam, alias) in MODELS.items()],
    )
    scale_rows: list[list[object]] = []
    for scale in SCALES:
        for score, label in enumerate(scale.labels, start=1):
            scale_rows.append([scale.dimension, label, score, "false"])
        if scale.na_label:
            scale_rows.append([scale.dimension, scale.na_label, "", "true"])
    _write_csv(out / "rating_scales.csv", ["dimension", "label", "score", "is_na"], scale_rows)

    _write_truth(out / "truth.csv", seed, n_prompts)
    return out


def _write_truth(path: Path, seed: int, n_prompts: int) -> None:
    rows: list[list[object]] = [
        ["meta", "", "", "", "sim_version", SIM_VERSION, ""],
        ["meta", "", "", "", "seed", seed, ""],
        ["meta", "", "", "", "n_prompts", n_prompts, ""],
        ["noise", "", "", "", "judge_noise_sd", JUDGE_NOISE_SD, "latent scale"],
        ["noise", "", "", "", "na_rate", NA_RATE, "faithfulness labels only"],
    ]
    for j in JUDGES:
        fam = MODELS[j][0]
        rows += [
            ["judge_offset", j, fam, "", "delta", JUDGE_OFFSET[j], "latent scale"],
            ["judge_slope", j, fam, "", "beta", JUDGE_SLOPE[j], "on true quality"],
            [
                "self",
                j,
                fam,
                "",
                "gamma",
                SELF_BIAS[j],
                "not identifiable: never rates its own model" if j not in GENERATORS else "",
            ],
            ["length", j, fam, "", "length_slope", LENGTH_SLOPE[j], "on length_feature"],
            ["answer_format", j, fam, "", "raw_output", int(j in RAW_OUTPUT_JUDGES), ""],
        ]
    rows.append(
        [
            "self_inverted_shift",
            INVERTED_JUDGE,
            MODELS[INVERTED_JUDGE][0],
            "",
            "gamma_shift",
            INVERTED_SELF_BIAS_SHIFT,
            "added to gamma under framing=inverted",
        ]
    )
    for fam, value in FAMILY_BIAS.items():
        rows.append(["family", "", fam, "", "lambda", value, ""])
    for dim, value in DIMENSION_EFFECT.items():
        rows.append(["dimension", "", "", dim, "eta", value, ""])
    for m in GENERATORS:
        rows += [
            ["model_quality", m, MODELS[m][0], "", "mean_quality", MODEL_QUALITY[m], ""],
            ["model_verbosity", m, MODELS[m][0], "", "mean_words", MODEL_VERBOSITY[m], ""],
        ]
    for expert, sd in EXPERTS.items():
        rows.append(["expert", expert, "", "", "noise_sd", sd, f"first {GOLD_PROMPTS} prompts"])
    for ann, (leniency, sd) in ANNOTATORS.items():
        rows += [
            ["annotator", ann, "", "", "leniency", leniency, "latent scale"],
            ["annotator", ann, "", "", "noise_sd", sd, "latent scale"],
        ]
    _write_csv(
        path, ["term_type", "subject", "family", "dimension", "parameter", "value", "note"], rows
    )
