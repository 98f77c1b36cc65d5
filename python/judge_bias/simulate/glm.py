"""Data drawn from the GLMs themselves, with planted values in the GLMs' own
parameterisation (``planted.GLM_*``): the planted-coverage study and the
simulation-based calibration (``bench/glm_sbc.py``) fit them back.

The draws use numpy only (not the package's likelihood code), so a fit that
recovers the planted values also checks the likelihood's conventions:
P(score <= k) = logistic(c_k - eta) and P(first chosen) = logistic(eta).

``glm_truth_rows`` lists every planted value as a truth.csv row (term_type
``glm_*``); ``write_glm_planted`` writes the ratings, the verdicts and their
truth.csv into a directory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judge_bias.inputs.writer import write_rows
from judge_bias.simulate import planted as P

TRUTH_HEADER = ["term_type", "subject", "family", "dimension", "parameter", "value", "note"]


def interaction_matrix() -> np.ndarray:
    """The planted grader x model interaction (graders x models, sorted names as
    the GLM codes them): the self effects double-centred, so rows and columns
    sum to zero as in the GLM."""
    graders, models = sorted(P.GLM_GRADERS), sorted(P.GLM_MODELS)
    raw = np.zeros((len(graders), len(models)))
    for judge, value in P.GLM_SELF.items():
        raw[graders.index(judge), models.index(judge)] = value
    return raw - raw.mean(axis=1, keepdims=True) - raw.mean(axis=0, keepdims=True) + raw.mean()


def self_contrasts() -> dict[str, float]:
    """Each judge's self contrast of the planted interaction, as the GLM
    reports it: own-model cell minus the mean of its other cells."""
    graders, models = sorted(P.GLM_GRADERS), sorted(P.GLM_MODELS)
    gm = interaction_matrix()
    out = {}
    for judge in P.GLM_SELF:
        row, own = gm[graders.index(judge)], models.index(judge)
        out[judge] = float(row[own] - np.delete(row, own).mean())
    return out


def item_effects(n_items: int, seed: int, sd: float = P.GLM_ITEM_SD) -> dict[str, float]:
    rng = np.random.default_rng([seed, 1])
    return {f"item_{i:04d}": float(v) for i, v in enumerate(rng.normal(0.0, sd, n_items))}


def ordinal_probabilities(eta: np.ndarray, cutpoints: np.ndarray) -> np.ndarray:
    """P(score = k), shape eta.shape + (K,), from P(score <= k) = logistic(c_k - eta)."""
    below = 1.0 / (1.0 + np.exp(-(np.asarray(cutpoints) - eta[..., None])))
    ones = np.ones(eta.shape + (1,))
    return np.diff(np.concatenate([0.0 * ones, below, ones], axis=-1), axis=-1)


def draw_scores(rng: np.random.Generator, eta: np.ndarray, cutpoints: np.ndarray) -> np.ndarray:
    """One score (1..K) per element of eta."""
    cum = np.cumsum(ordinal_probabilities(eta, cutpoints), axis=-1)
    return 1 + (rng.random(eta.shape)[..., None] > cum[..., :-1]).sum(axis=-1)


def planted_ratings(seed: int, n_items: int = 80, item_sd: float = P.GLM_ITEM_SD) -> pd.DataFrame:
    """Every grader rates every model's completion of every item once:
    columns grader, grader_type, model, item, score (1..5). ``item_sd=0``
    gives data without item effects (what grader_model assumes)."""
    rng = np.random.default_rng([seed, 0])
    graders, models = sorted(P.GLM_GRADERS), sorted(P.GLM_MODELS)
    gm = interaction_matrix()
    items = item_effects(n_items, seed, item_sd) if item_sd > 0 else {}
    names = sorted(items) or [f"item_{i:04d}" for i in range(n_items)]
    grid = np.meshgrid(
        np.arange(len(graders)), np.arange(len(models)), np.arange(n_items), indexing="ij"
    )
    g, m, i = (axis.ravel() for axis in grid)
    eta = (
        P.GLM_INTERCEPT
        + np.array([P.GLM_GRADER_EFFECT[x] for x in graders])[g]
        + np.array([P.GLM_MODEL_EFFECT[x] for x in models])[m]
        + gm[g, m]
        + (np.array([items[x] for x in names])[i] if items else 0.0)
    )
    return pd.DataFrame(
        {
            "grader": np.array(graders)[g],
            "grader_type": [P.GLM_GRADERS[x] for x in np.array(graders)[g]],
            "model": np.array(models)[m],
            "item": np.array(names)[i],
            "score": draw_scores(rng, eta, np.array(P.GLM_CUTPOINTS)),
        }
    )


def standardised(x: np.ndarray) -> np.ndarray:
    """The length difference as the pairwise GLM codes it: minus the mean, over
    the sample sd (``glm.data.pairwise_counts``)."""
    sd = float(np.std(x, ddof=1))
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


def planted_pairs(seed: int, per_order: int = 60) -> pd.DataFrame:
    """Each judge sees each pair of GLM_MODELS ``per_order`` times in each order:
    columns grader, grader_type, model_first, model_second, length_diff,
    first_chosen (0/1)."""
    rng = np.random.default_rng([seed, 2])
    models = sorted(P.GLM_MODELS)
    rows = []
    for judge in sorted(P.GLM_PAIR_GRADER_EFFECT):
        for a_i, a in enumerate(models):
            for b in models[a_i + 1 :]:
                for first, second, sign in ((a, b, 1.0), (b, a, -1.0)):
                    rows += [(judge, first, second, sign, f"{a} vs {b}")] * per_order
    frame = pd.DataFrame(rows, columns=["grader", "model_first", "model_second", "sign", "pair"])
    frame["length_diff"] = np.round(rng.normal(0.0, P.GLM_LENGTH_DIFF_SD, len(frame)))
    x = standardised(frame["length_diff"].to_numpy())
    eta = (
        P.GLM_POSITION
        + frame["sign"].to_numpy() * frame["pair"].map(P.GLM_PAIR_EFFECT).to_numpy()
        + frame["grader"].map(P.GLM_PAIR_GRADER_EFFECT).to_numpy()
        + frame["grader"].map(P.GLM_LENGTH_SLOPE).to_numpy() * x
    )
    frame["first_chosen"] = (rng.random(len(frame)) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    frame["grader_type"] = "llm"
    return frame[
        ["grader", "grader_type", "model_first", "model_second", "length_diff", "first_chosen"]
    ]


def glm_truth_rows(seed: int, n_items: int = 80) -> list[list[object]]:
    """Every planted GLM value as a truth.csv row, named as in glm_effects and
    glm_pairwise_effects (parameter; subject = grader, model, item or pair)."""
    note = "GLM parameterisation (simulate/glm.py)"
    rows: list[list[object]] = [["glm_intercept", "", "", "", "intercept", P.GLM_INTERCEPT, note]]
    for g, v in P.GLM_GRADER_EFFECT.items():
        rows.append(["glm_grader", g, P.GLM_GRADERS[g], "", "grader_effects", v, note])
    for m, v in P.GLM_MODEL_EFFECT.items():
        rows.append(["glm_model", m, "", "", "model_effects", v, note])
    gm = interaction_matrix()
    for gi, g in enumerate(sorted(P.GLM_GRADERS)):
        for mi, m in enumerate(sorted(P.GLM_MODELS)):
            rows.append(
                ["glm_grader_model", f"{g}|{m}", "", "", "grader_model_effects", gm[gi, mi], note]
            )
    for j, v in self_contrasts().items():
        rows.append(["glm_self", j, "", "", "self_contrast", v, f"planted self {P.GLM_SELF[j]}"])
    for k, c in enumerate(P.GLM_CUTPOINTS):
        rows.append(["glm_cutpoint", f"{k + 1}|{k + 2}", "", "", "cutpoints", c, note])
    for item, v in item_effects(n_items, seed).items():
        rows.append(["glm_item", item, "", "", "item_effects", v, f"sd {P.GLM_ITEM_SD}"])
    rows.append(["glm_position", "", "", "pairwise", "intercept", P.GLM_POSITION, note])
    for pair, v in P.GLM_PAIR_EFFECT.items():
        rows.append(["glm_pair", pair, "", "pairwise", "pair_effects", v, note])
    for g, v in P.GLM_PAIR_GRADER_EFFECT.items():
        rows.append(["glm_pair_grader", g, "", "pairwise", "grader_effects", v, note])
    for g, v in P.GLM_LENGTH_SLOPE.items():
        rows.append(
            ["glm_length_slope", g, "", "pairwise", "grader_length_slopes", v, "per sd of x"]
        )
    return rows


def write_glm_planted(out: Path, seed: int, n_items: int = 80) -> None:
    """ratings.csv and pairs.csv (the GLMs' long shape, not input contract
    files) and truth.csv with the ``glm_*`` rows."""
    out.mkdir(parents=True, exist_ok=True)
    ratings = planted_ratings(seed, n_items)
    pairs = planted_pairs(seed)
    write_rows(out / "glm_ratings.csv", list(ratings.columns), ratings.to_numpy().tolist())
    write_rows(out / "glm_pairs.csv", list(pairs.columns), pairs.to_numpy().tolist())
    write_rows(out / "truth.csv", TRUTH_HEADER, glm_truth_rows(seed, n_items))
