"""Simulated perturbation judgments (CALM-style flips and score inflation) and their planted
values and expected rates for truth.csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judge_bias.inputs.writer import write_rows as _write_csv
from judge_bias.simulate import planted as P
from judge_bias.simulate.draws import inverse_logit


def write_perturbation(path: Path, seed: int) -> None:
    """Original, repeat and perturbed verdicts (or scores) per judge x bias type x item."""
    rng = np.random.default_rng(seed + 3)
    rows: list[list[object]] = []
    for j in P.JUDGES:
        for bias in P.PERTURBATION_VERDICT_TYPES:
            for i in range(P.PERTURBATION_ITEMS):
                item = f"{bias}_{i:03d}"
                truth = "A" if rng.random() < 0.5 else "B"
                other = "B" if truth == "A" else "A"
                original = truth if rng.random() < P.PERTURBATION_ACCURACY else other
                flip = {"A": "B", "B": "A"}
                repeat = flip[original] if rng.random() < P.PERTURBATION_REPEAT_FLIP else original
                perturbed = (
                    flip[original] if rng.random() < P.PERTURBATION_FLIP[(j, bias)] else original
                )
                for condition, verdict in (
                    ("original", original),
                    ("repeat", repeat),
                    ("perturbed", perturbed),
                ):
                    rows.append([P.MODELS[j][1], item, bias, condition, verdict, "", truth, "1"])
        for i in range(P.PERTURBATION_ITEMS):
            item = f"{P.PERTURBATION_SCORE_TYPE}_{i:03d}"
            o = int(rng.integers(4, 9))
            e1, e2 = rng.normal(0, P.PERTURBATION_SCORE_NOISE_SD, size=2)
            scores = (
                ("original", float(o)),
                ("repeat", o * float(np.exp(e1))),
                ("perturbed", o * (1 + P.PERTURBATION_INFLATION[j]) * float(np.exp(e2))),
            )
            for condition, score in scores:
                rows.append(
                    [
                        P.MODELS[j][1],
                        item,
                        P.PERTURBATION_SCORE_TYPE,
                        condition,
                        "",
                        f"{score:.4f}",
                        "",
                        "1",
                    ]
                )
    _write_csv(
        path,
        [
            "judge",
            "item_id",
            "bias_type",
            "condition",
            "verdict",
            "score",
            "ground_truth",
            "run_id",
        ],
        rows,
    )


def expected_logistic(shift: float, scale: float) -> float:
    """E[logistic(shift + scale * Z)], Z standard normal (Gauss-Hermite, 80 nodes)."""
    z, w = np.polynomial.hermite_e.hermegauss(80)
    return float(np.sum(w * inverse_logit(shift + scale * z)) / np.sqrt(2 * np.pi))


def _expected_abs_error(inflation: float, sd: float) -> float:
    """E|c exp(sd Z) - 1| with c = 1 + inflation, Z standard normal, in closed form:
    c exp(sd^2 / 2) - 1 + 2 [Phi(k) - c exp(sd^2 / 2) Phi(k - sd)], k = -log(c) / sd."""
    from scipy.stats import norm

    c, k = 1.0 + inflation, -np.log(1.0 + inflation) / sd
    mean = c * np.exp(sd**2 / 2)
    return float(mean - 1 + 2 * (norm.cdf(k) - mean * norm.cdf(k - sd)))


def perturbation_truth() -> list[list[object]]:
    acc, rep = P.PERTURBATION_ACCURACY, P.PERTURBATION_REPEAT_FLIP
    rows: list[list[object]] = [
        ["perturbation", "", "", "", "items", P.PERTURBATION_ITEMS, "per judge x bias_type"],
        ["perturbation", "", "", "", "accuracy_original", acc, "verdict bias types"],
        [
            "perturbation",
            "",
            "",
            "",
            "repeat_flip_probability",
            rep,
            f"every judge and verdict bias type: expected consistency_rate {1 - rep}",
        ],
        ["perturbation", "", "", "", "score_noise_sd", P.PERTURBATION_SCORE_NOISE_SD, "log scale"],
    ]
    for j in P.JUDGES:
        fam = P.MODELS[j][0]
        for bias in P.PERTURBATION_VERDICT_TYPES:
            f = P.PERTURBATION_FLIP[(j, bias)]
            rows += [
                ["perturbation_flip", j, fam, bias, "flip_probability", f, "dimension = bias_type"],
                [
                    "perturbation_flip",
                    j,
                    fam,
                    bias,
                    "expected_robustness_rate",
                    round(1 - f, 6),
                    "1 - flip_probability",
                ],
                [
                    "perturbation_flip",
                    j,
                    fam,
                    bias,
                    "expected_accuracy_perturbed",
                    round(acc * (1 - f) + (1 - acc) * f, 6),
                    "a (1 - f) + (1 - a) f",
                ],
            ]
        e = P.PERTURBATION_INFLATION[j]
        rows += [
            [
                "perturbation_score",
                j,
                fam,
                P.PERTURBATION_SCORE_TYPE,
                "score_inflation",
                e,
                "perturbed = original * (1 + it) * exp(noise)",
            ],
            [
                "perturbation_score",
                j,
                fam,
                P.PERTURBATION_SCORE_TYPE,
                "expected_error_rate",
                round(_expected_abs_error(e, P.PERTURBATION_SCORE_NOISE_SD), 6),
                "E|perturbed - original| / original",
            ],
        ]
    return rows
