"""Simulated pairwise judgments (position, self-preference, length and perplexity effects)
and their planted values for truth.csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judge_bias.inputs.writer import write_rows as _write_csv
from judge_bias.pairwise.features import length_difference_feature
from judge_bias.simulate import planted as P
from judge_bias.simulate.draws import inverse_logit
from judge_bias.simulate.perturbation import expected_logistic


def write_pairwise(
    path: Path, seed: int, prompt_ids: list[str], tokens: dict[tuple[str, str], int]
) -> None:
    """Both orders of P.PAIRWISE_PAIRS_PER_PROMPT generator pairs per prompt, for every
    judge, with human verdicts; p_first for one judge, perplexities for another."""
    rng = np.random.default_rng(seed + 2)
    pairs = [(a, b) for i, a in enumerate(P.GENERATORS) for b in P.GENERATORS[i + 1 :]]
    mean, sd = P.PAIRWISE_LOG_PERPLEXITY
    rows: list[list[object]] = []
    for prompt_id in prompt_ids:
        u = {m: rng.normal() for m in P.GENERATORS}
        log_ppl = {m: rng.normal(mean, sd) for m in P.GENERATORS}
        chosen = rng.choice(len(pairs), size=P.PAIRWISE_PAIRS_PER_PROMPT, replace=False)
        for k in sorted(chosen):
            a, b = pairs[k]
            # one human judgment per pair, read in both orders (humans have no slot bias)
            d_ab = u[a] - u[b] + rng.normal(0, P.PAIRWISE_HUMAN_NOISE_SD)
            for first, second in ((a, b), (b, a)):
                d = d_ab if first == a else -d_ab
                human = (
                    "first"
                    if d > P.PAIRWISE_HUMAN_TIE
                    else "second"
                    if d < -P.PAIRWISE_HUMAN_TIE
                    else "tie"
                )
                x = float(
                    length_difference_feature(
                        tokens[(prompt_id, first)], tokens[(prompt_id, second)]
                    )
                )
                for j in P.JUDGES:
                    p = float(
                        inverse_logit(
                            P.PAIRWISE_CONTENT[j] * (u[first] - u[second])
                            + P.PAIRWISE_LENGTH_SLOPE[j] * x
                            + P.PAIRWISE_SELF_LOGIT[j] * ((first == j) - (second == j))
                            + P.PAIRWISE_PERPLEXITY_SLOPE[j] * (log_ppl[second] - log_ppl[first])
                        )
                    )
                    by_slot = rng.random() < P.PAIRWISE_FIRST_SLOT[j]
                    verdict = "first" if by_slot or rng.random() < p else "second"
                    rows.append(
                        [
                            P.MODELS[j][1],
                            prompt_id,
                            P.MODELS[first][1],
                            P.MODELS[second][1],
                            verdict,
                            human,
                            f"{p:.6f}" if j == P.PAIRWISE_P_FIRST_JUDGE else "",
                            f"{np.exp(log_ppl[first]):.4f}"
                            if j == P.PAIRWISE_PERPLEXITY_JUDGE
                            else "",
                            f"{np.exp(log_ppl[second]):.4f}"
                            if j == P.PAIRWISE_PERPLEXITY_JUDGE
                            else "",
                            "1",
                        ]
                    )
    _write_csv(
        path,
        [
            "judge",
            "prompt_id",
            "model_first",
            "model_second",
            "verdict",
            "human_verdict",
            "p_first",
            "perplexity_first",
            "perplexity_second",
            "run_id",
        ],
        rows,
    )


def pairwise_truth() -> list[list[object]]:
    content = "logit of choosing the first slot, when not answering by slot"
    rows: list[list[object]] = [
        ["pairwise", "", "", "", "pairs_per_prompt", P.PAIRWISE_PAIRS_PER_PROMPT, "both orders"],
        ["pairwise", "", "", "", "human_noise_sd", P.PAIRWISE_HUMAN_NOISE_SD, "on u_A - u_B"],
        ["pairwise", "", "", "", "human_tie_threshold", P.PAIRWISE_HUMAN_TIE, "|d| <= it: tie"],
        ["pairwise", "", "", "", "log_perplexity_mean", P.PAIRWISE_LOG_PERPLEXITY[0], ""],
        ["pairwise", "", "", "", "log_perplexity_sd", P.PAIRWISE_LOG_PERPLEXITY[1], ""],
    ]
    for j in P.JUDGES:
        fam, pi = P.MODELS[j][0], P.PAIRWISE_FIRST_SLOT[j]
        rows += [
            [
                "pairwise_content",
                j,
                fam,
                "",
                "content_slope",
                P.PAIRWISE_CONTENT[j],
                f"{content}, on u_A - u_B (pairwise quality, N(0, 1) per completion)",
            ],
            [
                "pairwise_position",
                j,
                fam,
                "",
                "first_slot_probability",
                pi,
                "answers first regardless of content with this probability",
            ],
            [
                "pairwise_position",
                j,
                fam,
                "",
                "expected_first_slot_rate",
                round(pi + (1 - pi) / 2, 6),
                "p + (1 - p) / 2: both orders asked, content is symmetric",
            ],
            [
                "pairwise_length",
                j,
                fam,
                "",
                "length_slope",
                P.PAIRWISE_LENGTH_SLOPE[j],
                f"{content}, on length_difference_feature of the token counts",
            ],
            [
                "pairwise_self",
                j,
                fam,
                "",
                "self_logit",
                P.PAIRWISE_SELF_LOGIT[j],
                f"{content}, added for the judge's own completion",
            ],
            [
                "pairwise_perplexity",
                j,
                fam,
                "",
                "perplexity_slope",
                P.PAIRWISE_PERPLEXITY_SLOPE[j],
                f"{content}, on log perplexity_second - log perplexity_first",
            ],
            [
                "pairwise_reports",
                j,
                fam,
                "",
                "p_first",
                int(j == P.PAIRWISE_P_FIRST_JUDGE),
                "p_first = its P(first) (no slot answering)",
            ],
            [
                "pairwise_reports",
                j,
                fam,
                "",
                "perplexity",
                int(j == P.PAIRWISE_PERPLEXITY_JUDGE),
                "perplexity_first and perplexity_second given",
            ],
        ]
        if j in P.GENERATORS:  # a judge that generates nothing has no self-preference
            rate = expected_logistic(P.PAIRWISE_SELF_LOGIT[j], P.PAIRWISE_CONTENT[j] * np.sqrt(2))
            rows.append(
                [
                    "pairwise_self",
                    j,
                    fam,
                    "",
                    "expected_self_preference_rate",
                    round(rate, 6),
                    "E[logistic(self_logit + content_slope * sqrt(2) Z)]: pairs with its own"
                    " model, both orders",
                ]
            )
    return rows
