"""No silent loss in the agreement stats (issue 29, defect 6, the rest): labels
marked not applicable, items scored under one frame only and scores without any
variance are counted in ``notes`` instead of being dropped or turned into NaN."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judge_bias.agreement.annotator_alpha import annotator_agreement_table
from judge_bias.agreement.counterfactual import (
    counterfactual_from_prompt_sums,
    interval_alpha_two_coders,
)
from judge_bias.agreement.self_vs_peer import FRAME_DIFFERENCE, self_vs_peer_tests

# annotators x items; NaN = a label "NA: ..." (accepted, no score)
SCORES = np.array(
    [
        [1.0, 2.0, 3.0, 4.0, 5.0, 2.0],
        [1.0, 3.0, np.nan, 4.0, 4.0, 2.0],
        [2.0, 2.0, 3.0, np.nan, 5.0, 1.0],
    ]
)


def _labels() -> pd.DataFrame:
    rows = [
        {"annotator_id": f"a{i}", "prompt_id": f"p{j}", "human_score": SCORES[i, j],
         "role": "annotator"}
        for i in range(SCORES.shape[0]) for j in range(SCORES.shape[1])
    ] + [  # expert labels: one scored, one NA
        {"annotator_id": "e", "prompt_id": "p0", "human_score": 1.0, "role": "expert"},
        {"annotator_id": "e", "prompt_id": "p1", "human_score": np.nan, "role": "expert"},
    ]  # fmt: skip
    return pd.DataFrame(rows).assign(
        model="m", dimension="d", scale_min=1.0, scale_max=5.0, n_aggregated=1
    )


def test_not_applicable_labels_are_counted_in_the_annotator_notes() -> None:
    got = annotator_agreement_table(_labels()).set_index("dimension")
    for dimension in ("d", "all"):
        notes = got.loc[dimension, "notes"]
        assert "2 labels marked not applicable (NA) have no score: left out" in notes
        assert "1 expert labels marked not applicable (NA)" in notes
        assert got.loc[dimension, "n_labels"] == 16  # 18 per-annotator labels, 2 NA
    # the alpha itself: the krippendorff package with NA as a missing value
    ref = krippendorff.alpha(reliability_data=SCORES, level_of_measurement="interval")
    assert got.loc["d", "alpha_interval"] == pytest.approx(ref, abs=1e-12)


def test_items_under_one_frame_only_are_counted_in_the_frame_difference_notes() -> None:
    rng = np.random.default_rng(0)
    keys = [(f"p{i}", "d") for i in range(6)]
    items = pd.DataFrame(
        [
            {"judge": "j", "framing": framing, "prompt_id": p, "dimension": d,
             "s": rng.random(), "r": rng.random(), "g": rng.random()}
            for framing in ("positive", "inverted")
            for p, d in (keys if framing == "positive" else keys[:4])
        ]
    )  # fmt: skip
    got = self_vs_peer_tests(items=items).set_index("framing")
    assert got.loc[FRAME_DIFFERENCE, "n"] == 4
    assert got.loc[FRAME_DIFFERENCE, "notes"] == (
        "2 items (prompt x dimension) scored under one frame only: left out"
    )
    assert got.loc[["positive", "inverted"], "notes"].isna().all()


def _sums(values: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """Prompt sums of 3 completions per prompt x dimension, each with judge score a
    and human score b (values: prompt -> (a, b)); one dimension."""
    n = 3
    return pd.DataFrame(
        [
            {"judge": "j", "prompt_id": p, "dimension": "d", "n": n, "sum_a": n * a,
             "sum_b": n * b, "sum_aa": n * a * a, "sum_bb": n * b * b, "sum_ab": n * a * b}
            for p, (a, b) in values.items()
        ]
    )  # fmt: skip


def test_constant_scores_give_a_null_alpha_with_a_note_and_no_warning() -> None:
    sums = _sums({f"p{i}": (0.3, 0.3) for i in range(6)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (0 / 0) fails the test
        got = counterfactual_from_prompt_sums(sums, n_boot=50).iloc[0]
    for column in ("alpha_observed", "alpha_calibrated"):
        for suffix in ("", "_ci_low", "_ci_high"):
            assert pd.isna(got[column + suffix])
        assert f"{column} null: every one of the" in got["notes"]
        assert "(no variance)" in got["notes"]
    assert pd.isna(got["correctable_share"])
    with pytest.raises(ValueError, match="no variance"):
        interval_alpha_two_coders(np.full(4, 0.3), np.full(4, 0.3))


def test_replicates_without_variance_are_counted_and_left_out_of_the_interval() -> None:
    # p0 and p1 have variance; p2 and p3 are all 0.5: a replicate that draws only p2
    # and p3 has no variance (probability (1/2)^4 = 0.06 each)
    values = {"p0": (0.0, 1.0), "p1": (1.0, 0.8), "p2": (0.5, 0.5), "p3": (0.5, 0.5)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = counterfactual_from_prompt_sums(_sums(values), n_boot=400).iloc[0]
    # the same replicates drawn independently (default seed, prompts in sorted order),
    # each one's alpha from the krippendorff package on its expanded scores
    w = np.random.default_rng(20250101).multinomial(4, np.full(4, 1 / 4), size=400)
    defined = w[:, :2].sum(axis=1) > 0
    alphas = [
        krippendorff.alpha(
            reliability_data=np.array(
                [[v[k] for v, c in zip(values.values(), row, strict=True) for _ in range(3 * c)]
                 for k in (0, 1)]
            ),
            level_of_measurement="interval",
        )
        for row in w[defined]
    ]  # fmt: skip
    k = int((~defined).sum())
    assert got["notes"].split("; ")[0] == (
        f"alpha_observed: {k} of 400 bootstrap replicates have no variance "
        "(alpha undefined) and are left out of its interval"
    )
    assert k > 0 and np.ptp(alphas) > 0.1
    assert [got["alpha_observed_ci_low"], got["alpha_observed_ci_high"]] == pytest.approx(
        np.percentile(alphas, [2.5, 97.5]), abs=1e-9
    )
