"""truth.csv: every planted value beside the data, with its unit."""

from __future__ import annotations

from pathlib import Path

from judge_bias.inputs.writer import write_rows as _write_csv
from judge_bias.simulate import planted as P
from judge_bias.simulate.label_share import (
    TRUTH_PARAMETER,
    TRUTH_TERM,
)
from judge_bias.simulate.pairwise import pairwise_truth
from judge_bias.simulate.perturbation import perturbation_truth


def write_truth(
    path: Path,
    seed: int,
    n_prompts: int,
    label_share: float = 1.0,
    label_means: dict[tuple[str, str], float] | None = None,
) -> None:
    rows: list[list[object]] = [
        ["meta", "", "", "", "sim_version", P.SIM_VERSION, ""],
        ["meta", "", "", "", "seed", seed, ""],
        ["meta", "", "", "", "n_prompts", n_prompts, ""],
        ["meta", "", "", "", "label_share", label_share, "share of completions labelled"],
        ["noise", "", "", "", "judge_noise_sd", P.JUDGE_NOISE_SD, "latent scale"],
        ["noise", "", "", "", "na_rate", P.NA_RATE, "faithfulness labels only"],
    ]
    for j in P.JUDGES:
        fam = P.MODELS[j][0]
        rows += [
            ["judge_offset", j, fam, "", "delta", P.JUDGE_OFFSET[j], "latent scale"],
            ["judge_slope", j, fam, "", "beta", P.JUDGE_SLOPE[j], "on true quality"],
            [
                "self",
                j,
                fam,
                "",
                "gamma",
                P.SELF_BIAS[j],
                "not identifiable: never rates its own model" if j not in P.GENERATORS else "",
            ],
            ["length", j, fam, "", "length_slope", P.LENGTH_SLOPE[j], "on length_feature"],
            ["answer_format", j, fam, "", "raw_output", int(j in P.RAW_OUTPUT_JUDGES), ""],
        ]
    rows.append(
        [
            "self_inverted_shift",
            P.INVERTED_JUDGE,
            P.MODELS[P.INVERTED_JUDGE][0],
            "",
            "gamma_shift",
            P.INVERTED_SELF_BIAS_SHIFT,
            "added to gamma under framing=inverted",
        ]
    )
    for fam, value in P.FAMILY_BIAS.items():
        rows.append(["family", "", fam, "", "lambda", value, ""])
    for dim, value in P.DIMENSION_EFFECT.items():
        rows.append(["dimension", "", "", dim, "eta", value, ""])
    for m in P.GENERATORS:
        rows += [
            ["model_quality", m, P.MODELS[m][0], "", "mean_quality", P.MODEL_QUALITY[m], ""],
            ["model_verbosity", m, P.MODELS[m][0], "", "mean_words", P.MODEL_VERBOSITY[m], ""],
        ]
    for (m, dim), value in (label_means or {}).items():
        note = "all the annotators' labels, before --label-share hid some; NA left out"
        rows.append([TRUTH_TERM, m, P.MODELS[m][0], dim, TRUTH_PARAMETER, round(value, 12), note])
    rows += pairwise_truth() + perturbation_truth()
    for expert, sd in P.EXPERTS.items():
        rows.append(["expert", expert, "", "", "noise_sd", sd, f"first {P.GOLD_PROMPTS} prompts"])
    for ann, (leniency, sd) in P.ANNOTATORS.items():
        rows += [
            ["annotator", ann, "", "", "leniency", leniency, "latent scale"],
            ["annotator", ann, "", "", "noise_sd", sd, "latent scale"],
        ]
    _write_csv(
        path, ["term_type", "subject", "family", "dimension", "parameter", "value", "note"], rows
    )
