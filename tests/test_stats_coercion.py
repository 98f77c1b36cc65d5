"""No silent coercion in the stats' row routes (issue 29, defect 6): a value that is
not a number raises a one-line ValueError with the column and the count, instead of
``errors='coerce'`` turning it into a missing value that changes the estimate; a
missing correlation is not read as 0 by Newcombe's interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_bias.bench.pairwise import simulate_pairwise_rows
from judge_bias.pairwise.reference.human import pairwise_bias_with_human
from judge_bias.pairwise.reference.rates import pairwise_bias, perplexity_bins
from judge_bias.perturbation.calm import perturbation_bias
from judge_bias.stats.intervals import newcombe_difference


def _rows() -> pd.DataFrame:
    return simulate_pairwise_rows(400, seed=3, n_prompts=40).drop(columns="x_true")


@pytest.mark.parametrize("column", ["length_first", "length_second", "p_first"])
def test_a_non_numeric_pairwise_value_is_an_error_not_a_missing_value(column: str) -> None:
    rows = _rows()
    rows[column] = rows[column].astype(object)
    rows.loc[[3, 7], column] = "n/a"
    with pytest.raises(ValueError, match=rf"^{column}: 2 of 400 values are not numbers"):
        pairwise_bias(rows)
    with pytest.raises(ValueError, match=rf"^{column}: 2 of 400 values are not numbers"):
        pairwise_bias_with_human(rows)


def test_missing_values_stay_missing_and_are_counted() -> None:
    rows = _rows()
    rows.loc[[3, 7], "length_first"] = np.nan
    got = pairwise_bias(rows).set_index(["judge", "opponent"])
    decisive = rows["verdict"] != "tie"
    for judge, part in rows[decisive].groupby("judge"):
        assert got.loc[(judge, "all"), "n_length_judgments"] == part["length_first"].notna().sum()


def test_a_non_numeric_perplexity_is_an_error() -> None:
    rows = _rows()
    rows["perplexity_first"] = rows["perplexity_first"].astype(object)
    rows.loc[5, "perplexity_first"] = "inf?"
    with pytest.raises(ValueError, match=r"^perplexity_first: 1 of 400 values"):
        perplexity_bins(rows)


def test_a_non_numeric_perturbation_score_is_an_error() -> None:
    rows = pd.DataFrame(
        {
            "judge": "j",
            "item_id": ["a", "a", "b", "b"],
            "bias_type": "verbosity",
            "condition": ["original", "perturbed"] * 2,
            "verdict": None,
            "score": [3.0, "high", 2.0, 2.0],
            "ground_truth": None,
        }
    )
    with pytest.raises(ValueError, match=r"^score: 1 of 4 values are not numbers"):
        perturbation_bias(rows)


def test_newcombe_refuses_a_missing_correlation() -> None:
    args = (0.6, 0.5, 0.7, 0.4, 0.3, 0.5)
    with pytest.raises(ValueError, match="phi must be finite"):
        newcombe_difference(*args, np.nan)
    # 0 is independence: the interval of the two Wilson intervals combined in quadrature
    low, high = newcombe_difference(*args, 0.0)
    assert (low, high) == pytest.approx((0.2 - np.hypot(0.1, 0.1), 0.2 + np.hypot(0.1, 0.1)))


@pytest.mark.parametrize(
    ("value", "finite"),
    [
        (1, True),
        (-2.5, True),
        (np.float64(3.0), True),  # an alpha as the mart computes it
        (True, False),  # a bool is no score
        (False, False),
        (None, False),  # an alpha left null
        (float("nan"), False),
        (np.float64("nan"), False),
        (float("inf"), False),
        (-float("inf"), False),
        ("1", False),  # text: mapping asks its own question
    ],
)
def test_is_finite_number_the_one_check_of_alpha_and_the_importers(
    value: object, finite: bool
) -> None:
    """stats.scalars.is_finite_number, which annotator_alpha (a defined alpha), the
    Inspect importer (a score on a numeric scale) and the Langfuse importer (a
    boolean score's value) share."""
    from judge_bias.stats.scalars import is_finite_number

    assert is_finite_number(value) is finite
