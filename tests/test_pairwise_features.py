"""The pairwise length feature, against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judge_bias.pairwise.features import length_difference_feature


def test_hand_computed_values() -> None:
    # (150 - 50) / 100 = 1; (60 - 120) / 90 = -2/3; equal lengths give 0
    got = length_difference_feature([150, 60, 80, 10], [50, 120, 80, 0])
    expected = [math.tanh(1.0), math.tanh(-2 / 3), 0.0, math.tanh(2.0)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_antisymmetric_scale_free_and_bounded() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 500, 1000), rng.integers(1, 500, 1000)
    x = length_difference_feature(a, b)
    np.testing.assert_allclose(length_difference_feature(b, a), -x)
    np.testing.assert_allclose(length_difference_feature(3 * a, 3 * b), x)
    assert np.all(np.abs(x) <= math.tanh(2.0) + 1e-15)


def test_missing_negative_or_zero_lengths_give_nan() -> None:
    first = pd.Series([None, 10, -1, 0, 5], dtype="Float64").to_numpy(dtype=float, na_value=np.nan)
    got = length_difference_feature(first, [10, None, 4, 0, 5])
    assert np.isnan(got[:4]).all() and got[4] == 0.0
