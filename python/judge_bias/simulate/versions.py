"""Optional judge reruns and a drifted judge version (``simulate(..., rerun_share=,
drift_shift=)``; both off by default, so the demo data is unchanged).

Both draw from their own random stream (seed + 5) and start from each positive-frame
rating's noiseless latent score, recorded by ``simulate`` without drawing anything:

- reruns: for a ``rerun_share`` of the rated items (every judge), a second run
  (run_id 2) with fresh judge noise: the planted rerun noise is JUDGE_NOISE_SD;
- drifted version: the judge DRIFT_JUDGE gets a new version DRIFT_VERSION (its own
  model name, same family, models.csv previous_version = the judge's alias) that
  rates the first DRIFT_ANCHOR_PROMPTS prompts (the anchor set) with the latent
  shifted by ``drift_shift`` and fresh noise. ``drift_shift`` 0 plants an unchanged
  judge (a new version that only redraws its noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judge_bias.simulate import planted as P
from judge_bias.simulate.draws import to_scale

DRIFT_JUDGE = P.JUDGES[0]
DRIFT_VERSION = f"{P.MODELS[DRIFT_JUDGE][1]}-v2"
DRIFT_ANCHOR_PROMPTS = 60


@dataclass(frozen=True)
class Latent:
    """One positive-frame rating before its noise: who rated what, on which scale."""

    judge: str  # key of P.MODELS
    prompt_index: int
    prompt_id: str
    model_name: str
    dimension: str
    labels: tuple[str, ...]
    mean: float


def _label(latent: float, labels: tuple[str, ...]) -> str:
    return labels[int(to_scale(np.array([latent]), len(labels))[0]) - 1]


def extra_ratings(
    latents: list[Latent], seed: int, rerun_share: float, drift_shift: float | None
) -> list[list[str]]:
    """The judge_ratings rows of the reruns and the drifted version."""
    rng = np.random.default_rng(seed + 5)
    rows: list[list[str]] = []
    for lat in latents:
        if rerun_share > 0 and rng.random() < rerun_share:
            score = lat.mean + rng.normal(0, P.JUDGE_NOISE_SD)
            rows.append(
                [P.MODELS[lat.judge][1], lat.prompt_id, lat.model_name, lat.dimension,
                 _label(score, lat.labels), "", "positive", "2"]
            )  # fmt: skip
    if drift_shift is not None:
        for lat in latents:
            if lat.judge == DRIFT_JUDGE and lat.prompt_index < DRIFT_ANCHOR_PROMPTS:
                score = lat.mean + drift_shift + rng.normal(0, P.JUDGE_NOISE_SD)
                rows.append(
                    [DRIFT_VERSION, lat.prompt_id, lat.model_name, lat.dimension,
                     _label(score, lat.labels), "", "positive", "1"]
                )  # fmt: skip
    return rows


def models_rows(drift_shift: float | None) -> tuple[list[str], list[list[str]]]:
    """The models.csv header and rows (with previous_version when a version is planted)."""
    rows = [[alias, m, fam] for m, (fam, alias) in P.MODELS.items()]
    if drift_shift is None:
        return ["alias", "model", "family"], rows
    fam, alias = P.MODELS[DRIFT_JUDGE]
    return ["alias", "model", "family", "previous_version"], [
        *[[*r, ""] for r in rows],
        [DRIFT_VERSION, DRIFT_VERSION, fam, alias],
    ]
