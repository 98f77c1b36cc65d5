"""without_weakest says which models it removed, their scores and the margin to
the first model kept, and warns when that margin is within the standard error."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.bias.analyses import completion_mean_se, weakest_note


def test_a_margin_within_the_standard_error_is_flagged() -> None:
    # Play Favorites Faithfulness: Mistral 7B 0.9650088 vs Llama 3 8B 5e-6 above it
    means = pd.Series({"Mistral 7B": 0.9650088, "Llama 3 8B": 0.9650138, "GPT-4o": 0.99})
    se = pd.Series({"Mistral 7B": 0.004, "Llama 3 8B": 0.004, "GPT-4o": 0.004})
    note = weakest_note(means, se, ["Mistral 7B"])
    assert "Mistral 7B (0.9650088)" in note
    assert "the first model kept, Llama 3 8B (0.9650138), is 5e-06 above Mistral 7B" in note
    se = f"{np.hypot(0.004, 0.004):.2g}"
    assert (
        f"WARNING: that margin is within the standard error of the difference of the means ({se})"
        in note
    )  # noqa: E501
    clear = weakest_note(means, se, ["Mistral 7B", "Llama 3 8B"])
    assert "the first model kept, GPT-4o (0.99)" in clear and "WARNING" not in clear
    assert "WARNING" not in weakest_note(means, None, ["Mistral 7B"])  # no SE: no claim


def test_nothing_to_remove_is_said_not_left_blank() -> None:
    note = weakest_note(pd.Series(dtype=float), None, [])
    assert note == "no model removed: no model has a mean human score"


def test_standard_error_of_the_completion_means() -> None:
    df = pd.DataFrame(
        {
            "prompt_id": ["p1", "p2", "p3", "p1", "p1"],
            "model": ["m", "m", "m", "n", "n"],
            "dimension": ["d"] * 5,
            "reference": [0.2, 0.4, 0.9, 0.5, 0.5],  # n's second row repeats its completion
        }
    )
    se = completion_mean_se(df)
    assert se["m"] == np.std([0.2, 0.4, 0.9], ddof=1) / np.sqrt(3)
    assert np.isnan(se["n"])  # one completion: no standard error


def test_the_note_does_not_depend_on_the_last_bit_of_a_sum() -> None:
    # Play Favorites Faithfulness: a mean of 200 labels that is exactly 0.96500875,
    # summed by DuckDB in one order or another (4e-16 apart); `.7g` alone rounds the
    # tie either way (0.9650087 vs 0.9650088)
    notes = {
        weakest_note(pd.Series({"Mistral 7B": m, "Llama 3 8B": 0.97}), None, ["Mistral 7B"])
        for m in (0.9650087499999997, 0.9650087500000001)
    }
    assert notes == {
        "removed the weakest models by mean human score: Mistral 7B (0.9650087); the first "
        "model kept, Llama 3 8B (0.97), is 0.005 above Mistral 7B"
    }


def test_means_equal_but_for_the_order_of_their_sums_are_ties_broken_by_name() -> None:
    # two models whose means are the same number added in two orders (4e-16 apart):
    # the weakest is the first by name whichever of them came out 1 ulp lower
    from judge_bias.bias.analyses import Settings
    from judge_bias.bias.fit_inputs import weakest_models

    s = Settings(weakest_k=1)
    for a, b in (
        (0.9650087499999997, 0.9650087500000001),
        (0.9650087500000001, 0.9650087499999997),
    ):
        means = pd.Series({"Mistral 7B": a, "Llama 3 8B": b, "GPT-4o": 0.99})
        assert weakest_models(means, s) == ["Llama 3 8B"]
        assert weakest_note(means, None, ["Llama 3 8B"]).endswith("is 0 above Llama 3 8B")
