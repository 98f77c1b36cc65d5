"""bias_fits.r_squared: the OLS fit's R-squared equals statsmodels' on the same rows,
and a constant outcome (0/0: statsmodels gives nan or -inf) is null with a note."""

from __future__ import annotations

import numpy as np
import statsmodels.api as sm

from judge_bias.bias.regression import Spec, dense_design, fit_bias_regression
from tests.test_limits import fact, prepared


def _statsmodels_r_squared(data) -> float:
    X, _, _ = dense_design(data)
    return float(sm.OLS(data["rating"].to_numpy(), X).fit().rsquared)


def test_r_squared_equals_statsmodels() -> None:
    data = prepared(fact())
    fit = fit_bias_regression(data, "main", spec=Spec(dimension_effects=False)).fit
    assert 0 < fit["r_squared"] < 1
    np.testing.assert_allclose(fit["r_squared"], _statsmodels_r_squared(data), rtol=1e-10)


def test_a_constant_outcome_has_no_r_squared_and_says_why() -> None:
    # Hypothesis' valid-data property found a slice whose judge scores were all the
    # same: 1 - ssr / sst was -inf (ssr a rounding error above 0, sst 0)
    data = prepared(fact()).assign(rating=0.75)
    with np.errstate(all="ignore"):
        reference = _statsmodels_r_squared(data)
    assert not np.isfinite(reference)  # statsmodels: undefined too
    fit = fit_bias_regression(data, "main", spec=Spec(dimension_effects=False)).fit
    assert fit["r_squared"] is None
    assert "r_squared is not defined: the outcome is the same on every rating" in fit["notes"]
