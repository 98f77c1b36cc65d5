"""The partial centring weights of ``hierarchical`` (glm/centring.py): each
grader's shift and standard error against an independent maximum-likelihood
fit written here with scipy, the planted shifts' order, and the weights at
both ends (graders far apart: about 1; graders alike: the floor)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from judge_bias.glm import ordinal_counts
from judge_bias.glm.centring import grader_centring, grader_shifts

CUTS = np.array([-1.5, -0.3, 0.8, 2.0])


def _counts(shifts: list[float], per_grader: int, seed: int) -> pd.DataFrame:
    """Ratings on a 5-point scale by LLM graders whose latent scores are
    shifted by ``shifts`` (logistic noise), counted per grader and score."""
    rng = np.random.default_rng(seed)
    rows = []
    for j, shift in enumerate(shifts):
        score = np.searchsorted(CUTS, shift + rng.logistic(size=per_grader))
        for k, n in zip(*np.unique(score, return_counts=True), strict=True):
            rows.append({"grader": f"judge-{j}", "grader_type": "llm", "model": "m",
                         "score": float(k), "n": int(n)})  # fmt: skip
    return pd.DataFrame(rows)


def _reference(counts: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each grader's shift maximising its multinomial log-likelihood under the
    pooled empirical cutpoints (scipy's bounded scalar optimiser), and the
    standard error from a finite-difference second derivative."""
    table = counts.pivot_table(
        index="grader", columns="score", values="n", aggfunc="sum", fill_value=0
    ).reindex(columns=np.arange(5.0), fill_value=0)
    pooled = table.sum().to_numpy()
    cuts = stats.logistic.ppf(np.cumsum(pooled)[:-1] / pooled.sum())
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])

    def nll(shift: float, n: np.ndarray) -> float:
        p = np.diff(stats.logistic.cdf(edges - shift))
        return -float(np.sum(n * np.log(p)))

    shifts, ses = [], []
    for n in table.to_numpy():
        best = optimize.minimize_scalar(nll, bounds=(-10, 10), args=(n,), method="bounded",
                                        options={"xatol": 1e-10})  # fmt: skip
        h = 1e-4
        curv = (nll(best.x + h, n) - 2 * nll(best.x, n) + nll(best.x - h, n)) / h**2
        shifts.append(best.x)
        ses.append(curv**-0.5)
    return np.array(shifts), np.array(ses)


def test_shifts_and_standard_errors_match_scipy():
    counts = _counts([-0.6, 0.0, 0.4, 1.1], 800, seed=3)
    data = ordinal_counts(counts, [0.0, 1.0, 2.0, 3.0, 4.0], "d")
    shift, se = grader_shifts(data)
    ref_shift, ref_se = _reference(counts)
    np.testing.assert_allclose(shift, ref_shift, atol=1e-6)
    # observed vs Fisher information: equal in expectation, close at 800 ratings
    np.testing.assert_allclose(se, ref_se, rtol=0.05)


def test_planted_shifts_keep_their_order_and_are_attenuated():
    """Against the truth: the pooled cutpoints are not the graders' own (a mix
    of shifted logistics is not logistic), so the shifts' differences come
    out attenuated (here by about 15%), never inflated, and in order. A low
    spread only moves the weight towards non-centred; the posterior is
    unchanged whatever the weight."""
    planted = np.array([-0.8, -0.2, 0.3, 0.9, 1.4])
    data = ordinal_counts(_counts(list(planted), 3000, seed=4), [0.0, 1.0, 2.0, 3.0, 4.0], "d")
    shift, se = grader_shifts(data)
    assert np.all(np.diff(shift) > 0)
    ratio = (shift[-1] - shift[0]) / (planted[-1] - planted[0])
    assert 0.7 < ratio < 1.0 + 4 * np.hypot(se[-1], se[0]) / (planted[-1] - planted[0]), ratio


@pytest.mark.parametrize(("spread", "low", "high"), [(1.0, 0.95, 1.0), (0.0, 0.25, 0.6)])
def test_weights_at_both_ends(spread, low, high):
    """Graders far apart (sd 1 against se ~0.05): nearly centred. Graders alike:
    the floor, spread = mean se^2 x sqrt(2 / (G - 1)), w = that / (that + se^2)."""
    planted = list(np.linspace(-1.5, 1.5, 6) * spread)
    data = ordinal_counts(_counts(planted, 2000, seed=5), [0.0, 1.0, 2.0, 3.0, 4.0], "d")
    w = grader_centring(data)
    assert np.all((w >= low) & (w <= high)), w
    if spread == 0.0:
        _, se = grader_shifts(data)
        floor = np.mean(se**2) * np.sqrt(2 / 5)
        np.testing.assert_allclose(w, floor / (floor + se**2), rtol=1e-12)


def test_a_grader_alone_in_its_type_keeps_weight_one():
    counts = _counts([0.0, 0.5, 1.0], 500, seed=6)
    counts.loc[counts["grader"] == "judge-2", "grader_type"] = "human"
    data = ordinal_counts(counts, [0.0, 1.0, 2.0, 3.0, 4.0], "d")
    w = grader_centring(data)
    alone = data.levels["grader"].index("judge-2")
    assert w[alone] == 1.0
    assert np.all(w[np.arange(3) != alone] < 1.0)
