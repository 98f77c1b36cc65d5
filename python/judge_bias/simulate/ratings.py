"""The simulator's entry point: prompts, completions, human labels, judge ratings, models
and scales, then the pairwise and perturbation files and truth.csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judge_bias.inputs.writer import write_rows as _write_csv
from judge_bias.simulate import planted as P
from judge_bias.simulate.draws import random_text, to_scale, token_count
from judge_bias.simulate.label_share import (
    full_label_means,
    keep_labels,
)
from judge_bias.simulate.pairwise import write_pairwise
from judge_bias.simulate.perturbation import write_perturbation
from judge_bias.simulate.truth import write_truth
from judge_bias.simulate.versions import Latent, extra_ratings, models_rows


def simulate(
    out_dir: str | Path,
    seed: int = 20250101,
    n_prompts: int = 120,
    label_share: float = 1.0,
    rerun_share: float = 0.0,
    drift_shift: float | None = None,
) -> Path:
    """Write a complete input directory with planted biases and ``truth.csv``.

    ``label_share`` < 1 keeps the annotators' labels of that share of the completions
    only (judge_bias.simulate.label_share, stream seed + 4); truth.csv records every model's
    mean normalised human score from all the labels (term_type ppi_truth).
    ``rerun_share`` > 0 adds second runs and ``drift_shift`` a drifted judge version
    (judge_bias.simulate.versions; both off by default)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)

    prompts = []
    for i in range(n_prompts):
        dataset, task = P.DATASETS[i % len(P.DATASETS)]
        prompts.append(
            [f"{dataset}_{i:04d}", dataset, task, f"Prompt {i}: " + random_text(rng, 12)]
        )
    _write_csv(out / "prompts.csv", ["prompt_id", "dataset", "task_type", "prompt_text"], prompts)

    completions, quality, length, tokens = [], {}, {}, {}
    prompt_difficulty = rng.normal(0.0, 0.08, size=n_prompts)
    for p, (prompt_id, *_rest) in enumerate(prompts):
        for m in P.GENERATORS:
            n_words = max(8, int(rng.lognormal(np.log(P.MODEL_VERBOSITY[m]), 0.35)))
            text = random_text(rng, n_words)
            quality[(prompt_id, m)] = float(
                np.clip(P.MODEL_QUALITY[m] + prompt_difficulty[p] + rng.normal(0, 0.08), 0, 1)
            )
            length[(prompt_id, m)] = n_words
            tokens[(prompt_id, m)] = token_count(text)
            completions.append([prompt_id, P.MODELS[m][1], text])
    _write_csv(out / "completions.csv", ["prompt_id", "model", "completion_text"], completions)

    # Length feature as the warehouse defines it, from word counts (planted on this).
    length_feature = {}
    for prompt_id, *_ in prompts:
        lens = np.array([length[(prompt_id, m)] for m in P.GENERATORS], dtype=float)
        mu, sd = lens.mean(), lens.std(ddof=1)
        for m, n in zip(P.GENERATORS, lens, strict=True):
            length_feature[(prompt_id, m)] = float(np.tanh((n - mu) / sd)) if sd > 0 else 0.0

    humans = []
    for prompt_id, *_ in prompts:
        for m in P.GENERATORS:
            q = quality[(prompt_id, m)]
            for scale in P.SCALES:
                k = len(scale.labels)
                for ann, (leniency, sd) in P.ANNOTATORS.items():
                    if scale.na_label and rng.random() < P.NA_RATE:
                        label = scale.na_label
                    else:
                        latent = q + leniency + rng.normal(0, sd)
                        label = scale.labels[to_scale(np.array([latent]), k)[0] - 1]
                    humans.append(
                        [prompt_id, P.MODELS[m][1], scale.dimension, ann, label, "annotator"]
                    )
    # Gold labels: experts on the first P.GOLD_PROMPTS prompts, from their own stream so
    # that adding them changed nothing else in the demo.
    gold_rng = np.random.default_rng(seed + 1)
    for prompt_id, *_ in prompts[: P.GOLD_PROMPTS]:
        for m in P.GENERATORS:
            for scale in P.SCALES:
                k = len(scale.labels)
                for expert, sd in P.EXPERTS.items():
                    latent = quality[(prompt_id, m)] + gold_rng.normal(0, sd)
                    label = scale.labels[to_scale(np.array([latent]), k)[0] - 1]
                    humans.append(
                        [prompt_id, P.MODELS[m][1], scale.dimension, expert, label, "expert"]
                    )
    header = ["prompt_id", "model", "dimension", "annotator_id", "label", "role"]
    label_means = full_label_means(
        humans, {s.dimension: s.labels for s in P.SCALES}, {a: m for m, (_, a) in P.MODELS.items()}
    )
    if label_share < 1:
        kept = keep_labels(pd.DataFrame(humans, columns=header), label_share, seed + 4)
        humans = kept.to_numpy().tolist()
    _write_csv(out / "human_annotations.csv", header, humans)

    ratings = []
    latents: list[Latent] = []
    for j in P.JUDGES:
        fam_j = P.MODELS[j][0]
        frames = ("positive", "inverted") if j == P.INVERTED_JUDGE else ("positive",)
        for framing in frames:
            for p_index, (prompt_id, *_) in enumerate(prompts):
                for m in P.GENERATORS:
                    same = j == m
                    same_fam = (not same) and P.MODELS[m][0] == fam_j
                    self_bias = P.SELF_BIAS[j] + (
                        P.INVERTED_SELF_BIAS_SHIFT if framing == "inverted" else 0.0
                    )
                    for scale in P.SCALES:
                        k = len(scale.labels)
                        mean = (
                            P.JUDGE_OFFSET[j]
                            + P.JUDGE_SLOPE[j] * quality[(prompt_id, m)]
                            + self_bias * same
                            + P.FAMILY_BIAS[fam_j] * same_fam
                            + P.DIMENSION_EFFECT[scale.dimension]
                            + P.LENGTH_SLOPE[j] * length_feature[(prompt_id, m)]
                        )
                        latent = mean + rng.normal(0, P.JUDGE_NOISE_SD)
                        if framing == "positive":
                            latents.append(
                                Latent(j, p_index, prompt_id, P.MODELS[m][1], scale.dimension,
                                       scale.labels, mean)
                            )  # fmt: skip
                        score = int(to_scale(np.array([latent]), k)[0])
                        is_na = scale.na_label is not None and rng.random() < P.NA_RATE
                        label_text = (
                            scale.na_label
                            if is_na and scale.na_label is not None
                            else scale.labels[score - 1]
                        )
                        label, raw = label_text, ""
                        if framing == "inverted":
                            label = label_text if is_na else str(k + 1 - score)
                        elif j in P.RAW_OUTPUT_JUDGES:
                            label = ""
                            raw = (
                                f"Explanation: the response to {prompt_id} was checked for "
                                f"{scale.dimension}; it is judged on a {k}-point scale.\n"
                                f"Answer: {label_text}"
                            )
                        ratings.append(
                            [
                                P.MODELS[j][1],
                                prompt_id,
                                P.MODELS[m][1],
                                scale.dimension,
                                label,
                                raw,
                                framing,
                                "1",
                            ]
                        )
    ratings += extra_ratings(latents, seed, rerun_share, drift_shift)
    _write_csv(
        out / "judge_ratings.csv",
        ["judge", "prompt_id", "model", "dimension", "label", "raw_output", "framing", "run_id"],
        ratings,
    )

    _write_csv(out / "models.csv", *models_rows(drift_shift))
    scale_rows: list[list[object]] = []
    for scale in P.SCALES:
        for score, label in enumerate(scale.labels, start=1):
            scale_rows.append([scale.dimension, label, score, "false"])
        if scale.na_label:
            scale_rows.append([scale.dimension, scale.na_label, "", "true"])
    _write_csv(out / "rating_scales.csv", ["dimension", "label", "score", "is_na"], scale_rows)

    write_pairwise(out / "pairwise_judgments.csv", seed, [p[0] for p in prompts], tokens)
    write_perturbation(out / "perturbation_judgments.csv", seed)
    write_truth(out / "truth.csv", seed, n_prompts, label_share, label_means)
    return out
