"""Coverage of the 90% intervals of judge_drift, judge_stability and agreement_binary
by simulation with planted values, the functions called directly (REPS replicates
each, fixed seeds; docs/drift.md records the measured figures), and the drift flag's
false-positive rate on an unchanged judge.

Design (docs/drift.md, "Measured coverage"): G = 60 prompts x M = 4 items, a prompt
effect on the item quality (sd 0.1), scores rounded to a 5-point scale normalised to
0-1, judge noise sd 0.08 (the simulator's JUDGE_NOISE_SD), 3 runs per item for the
stability figures. Planted values that are not parameters of the generator (the
population QWK, AC1, flip rate of rounded scores) are computed on 400,000 draws of
the same generator. Coverage must fall in [0.87, 0.93] (the Monte Carlo SE of
REPS = 800 replicates is 0.015)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from judge_bias.drift.settings import DriftSettings
from judge_bias.drift.stability import stability_statistics
from judge_bias.drift.versions import drift_statistics
from judge_bias.stats.binary_cells import gwet_ac1_binary, qwk_moments
from tests.agreement_reference import binary_agreement

REPS = 800
G, M = 60, 4
NOISE = 0.08
BAND = (0.87, 0.93)
SETTINGS = DriftSettings(n_boot=400)


def _round5(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(latent * 4), 0, 4) / 4


def _quality(rng: np.random.Generator, g: int, m: int) -> np.ndarray:
    prompt = np.repeat(rng.normal(0, 0.1, g), m)
    return np.clip(0.55 + prompt + rng.normal(0, 0.2, g * m), 0, 1)


def _versions(rng: np.random.Generator, g: int, m: int, shift: float) -> tuple[np.ndarray, ...]:
    q = _quality(rng, g, m)
    human = _round5(q + rng.normal(0, 0.1, q.size))
    before = _round5(q + rng.normal(0, NOISE, q.size))
    after = _round5(q + shift + rng.normal(0, NOISE, q.size))
    return before, after, human


def _covered(truth: float, low: object, high: object) -> bool:
    return low is not None and high is not None and low <= truth <= high  # type: ignore[operator]


def _coverage(
    truths: dict[str, float], draw: Callable[[int], dict[str, object]]
) -> dict[str, float]:
    hits = dict.fromkeys(truths, 0)
    for rep in range(REPS):
        row = draw(rep)
        for name, truth in truths.items():
            hits[name] += _covered(truth, row[f"{name}_ci_low"], row[f"{name}_ci_high"])
    return {name: hit / REPS for name, hit in hits.items()}


def _population_drift(shift: float) -> dict[str, float]:
    before, after, human = _versions(np.random.default_rng(1), 100_000, 4, shift)
    hp = human >= 0.5
    n = float(before.size)
    sums = [
        n,
        before.sum(),
        after.sum(),
        (before**2).sum(),
        (after**2).sum(),
        (before * after).sum(),
    ]
    return {
        "mean_shift": float((after - before).mean()),
        "flip_rate": float((after != before).mean()),
        "pass_flip_rate": float(((after >= 0.5) != (before >= 0.5)).mean()),
        "accuracy_change": float(((after >= 0.5) == hp).mean() - ((before >= 0.5) == hp).mean()),
        "qwk": float(qwk_moments(*np.array(sums))),
    }


@pytest.mark.parametrize("shift", [0.0, 0.1])
def test_drift_intervals_cover(shift: float) -> None:
    truths = _population_drift(shift)
    prompts = np.repeat(np.arange(G), M)

    def draw(rep: int) -> dict[str, object]:
        before, after, human = _versions(np.random.default_rng(1000 + rep), G, M, shift)
        return drift_statistics(before, after, prompts, human, SETTINGS)

    coverage = _coverage(truths, draw)
    for name, value in coverage.items():
        assert BAND[0] <= value <= BAND[1], (name, value, coverage)


def _binary_population(rng: np.random.Generator, g: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    q = _quality(rng, g, m)
    human = _round5(q + rng.normal(0, 0.1, q.size))
    judge = _round5(q + 0.05 + rng.normal(0, 0.12, q.size))
    return judge, human


def test_binary_agreement_intervals_cover() -> None:
    judge, human = _binary_population(np.random.default_rng(2), 100_000, 4)
    jp, hp = judge >= 0.5, human >= 0.5
    n = float(judge.size)
    sums = [n, judge.sum(), human.sum(), (judge**2).sum(), (human**2).sum(), (judge * human).sum()]
    truths = {
        "accuracy": float((jp == hp).mean()),
        "sensitivity": float(jp[hp].mean()),
        "specificity": float((~jp[~hp]).mean()),
        "gwet_ac1": float(
            gwet_ac1_binary((jp & hp).sum(), (jp & ~hp).sum(), (~jp & hp).sum(), (~jp & ~hp).sum())
        ),
        "qwk": float(qwk_moments(*np.array(sums))),
        "rg_pass_rate": float(hp.mean()),
    }
    prompts = np.repeat(np.arange(G), M)
    labelled = np.arange(G * M) < G * M // 2  # half the items carry a human score

    def draw(rep: int) -> dict[str, object]:
        j, h = _binary_population(np.random.default_rng(2000 + rep), G, M)
        h = np.where(labelled, h, np.nan)
        return binary_agreement(j, h, prompts, level=0.90, n_boot=400, seed=rep)

    coverage = _coverage(truths, draw)
    for name, value in coverage.items():
        assert BAND[0] <= value <= BAND[1], (name, value, coverage)


def _stability_items(rng: np.random.Generator, g: int, m: int, runs: int) -> pd.DataFrame:
    q = _quality(rng, g, m)
    scores = _round5(q[:, None] + rng.normal(0, NOISE, (q.size, runs)))
    counts = np.stack([(scores == v).sum(axis=1) for v in np.linspace(0, 1, 5)], axis=1)
    mean = scores.mean(axis=1)
    return pd.DataFrame(
        {
            "prompt_id": np.repeat(np.arange(g), m),
            "n_runs": runs,
            "mean_score": mean,
            "ss": ((scores - mean[:, None]) ** 2).sum(axis=1),
            "discordant_share": (runs**2 - (counts**2).sum(axis=1)) / (runs * (runs - 1)),
            "min_score": scores.min(axis=1),
            "max_score": scores.max(axis=1),
        }
    )


def test_stability_intervals_cover() -> None:
    pop = _stability_items(np.random.default_rng(3), 100_000, 4, 3)
    crossed = (pop["min_score"] < 0.5) & (pop["max_score"] >= 0.5)
    truths = {
        "flip_rate": float(pop["discordant_share"].mean()),
        "pass_cross_rate": float(crossed.mean()),
        "within_item_sd": float(np.sqrt(pop["ss"].sum() / (pop["n_runs"] - 1).sum())),
    }
    coverage = _coverage(
        truths,
        lambda rep: stability_statistics(
            _stability_items(np.random.default_rng(3000 + rep), G, M, 3), SETTINGS
        ),
    )
    for name, value in coverage.items():
        assert BAND[0] <= value <= BAND[1], (name, value, coverage)


def test_drift_flag_false_positive_rate_and_power() -> None:
    """An unchanged judge (a new version that only redraws its noise, sd 0.08) is
    flagged in at most 5% of anchor sets of 60 prompts x 4 items at the default
    rule; a shift of 0.1 on the 0-1 scale is flagged in at least 80%."""
    prompts = np.repeat(np.arange(G), M)
    flagged = {0.0: 0, 0.1: 0}
    for shift in flagged:
        for rep in range(REPS):
            before, after, human = _versions(np.random.default_rng(4000 + rep), G, M, shift)
            row = drift_statistics(before, after, prompts, human, DriftSettings(n_boot=50))
            flagged[shift] += bool(row["drift_flag"])
    assert flagged[0.0] / REPS <= 0.05, flagged
    assert flagged[0.1] / REPS >= 0.80, flagged
