"""Binary agreement and judge drift on real data: LLMBar Natural (../shared/data/
llmbar_natural, 100 items each judged in both orders). A unit is item x order; the
judge's verdict "output_1 is better" against the gold label; units cluster by item.

References on the same units: truescore's judge_agreement / gwet_ac1 /
rogan_gladen_estimate and judge_drift (ChatGPT-0301 -> ChatGPT, two versions of one
judge, on the units both parsed), and LLMBar's accuracy recomputed from the files.
Named difference: our intervals cluster the two orders of an item, truescore's treat
the 200 units as independent, so ours are at least as wide."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import truescore as ts

from judge_bias.drift.versions import drift_statistics
from tests.agreement_reference import binary_agreement
from tests.conftest import SHARED_DATA

LLMBAR = SHARED_DATA / "llmbar_natural"
pytestmark = pytest.mark.skipif(
    not (LLMBAR / "dataset.json").exists(), reason="../shared/data/llmbar_natural is absent"
)
JUDGES = ("GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon")


def _units(judge: str) -> dict[tuple[int, str], tuple[int, int]]:
    """(item, order) -> (judge says output 1, gold says output 1), parsed answers only,
    read with plain json."""
    items = json.loads(Path(LLMBAR / f"{judge}__Vanilla__result.json").read_text("utf-8"))
    out = {}
    for i, item in enumerate(items):
        for order in ("swap = False", "swap = True"):
            winner = item["results"][0][order]["winner"]
            if winner is not None:
                out[(i, order)] = (int(str(winner) == "1"), int(str(item["label"]) == "1"))
    return out


@pytest.mark.parametrize("judge", JUDGES)
def test_binary_agreement_on_llmbar_matches_truescore(judge: str) -> None:
    units = _units(judge)
    j = np.array([v[0] for v in units.values()])
    g = np.array([v[1] for v in units.values()])
    items = np.array([k[0] for k in units])
    ours = binary_agreement(j.astype(float), g.astype(float), items, level=0.95)
    ref = ts.judge_agreement(j, g, alpha=0.05)
    accuracy = float(np.mean(j == g))  # LLMBar's accuracy over the parsed answers
    assert ours["accuracy"] == pytest.approx(accuracy, abs=1e-12)
    assert ours["accuracy"] == pytest.approx(ref.accuracy.point, abs=1e-12)
    assert ours["sensitivity"] == pytest.approx(ref.sensitivity.point, abs=1e-12)
    assert ours["specificity"] == pytest.approx(ref.specificity.point, abs=1e-12)
    assert ours["gwet_ac1"] == pytest.approx(ts.gwet_ac1(j, g), abs=1e-12)
    # clustered by item: never narrower than truescore's independent Wilson
    width = ours["accuracy_ci_high"] - ours["accuracy_ci_low"]
    assert width >= (ref.accuracy.high - ref.accuracy.low) - 1e-12
    if ours["sensitivity"] + ours["specificity"] > 1:
        rg = ts.rogan_gladen_estimate(j, g, np.arange(j.size), alpha=0.05)
        assert ours["rg_pass_rate"] == pytest.approx(rg.point, abs=1e-12)
        # every unit labelled: the corrected rate is the gold rate itself
        assert ours["rg_pass_rate"] == pytest.approx(float(np.clip(g.mean(), 0, 1)), abs=1e-12)
        # the gold labels of the first 50 items only: the judge's pass rate over all 100
        # corrected by the error rates measured on those 50
        labelled = items < 50
        half = binary_agreement(j, np.where(labelled, g, np.nan), items, level=0.90)
        ref_half = ts.rogan_gladen_estimate(j, g[labelled], np.flatnonzero(labelled), alpha=0.1)
        assert half["rg_pass_rate"] == pytest.approx(ref_half.point, abs=1e-12)
        print(
            f"\n{judge}: RG from 50 labelled items {half['rg_pass_rate']:.3f} "
            f"[{half['rg_pass_rate_ci_low']:.3f}, {half['rg_pass_rate_ci_high']:.3f}], "
            f"judge {j.mean():.3f}, gold on all 100 {g.mean():.3f}"
        )


def test_chatgpt_versions_drift_matches_truescore() -> None:
    old, new = _units("ChatGPT-0301"), _units("ChatGPT")
    shared = sorted(set(old) & set(new))
    x = np.array([old[k][0] for k in shared])
    y = np.array([new[k][0] for k in shared])
    gold = np.array([old[k][1] for k in shared])
    items = np.array([k[0] for k in shared])
    ours = drift_statistics(x.astype(float), y.astype(float), items, gold.astype(float))
    ref = ts.judge_drift(x, y, gold, alpha=0.10)
    assert ours["n_items"] == ref.n_anchor == len(shared)
    assert ours["flip_rate"] == pytest.approx(ref.flip_rate, abs=1e-12)
    assert ours["pass_flip_rate"] == pytest.approx(ref.flip_rate, abs=1e-12)
    assert ours["accuracy_before"] == pytest.approx(ref.baseline_agreement, abs=1e-12)
    assert ours["accuracy_after"] == pytest.approx(ref.current_agreement, abs=1e-12)
    assert ours["accuracy_change"] == pytest.approx(ref.agreement_change, abs=1e-12)
    # on binary verdicts the mean shift is the change in the pass rate
    assert ours["mean_shift"] == pytest.approx(y.mean() - x.mean(), abs=1e-12)
    print(
        f"\nChatGPT-0301 -> ChatGPT on {len(shared)} units: flips {ours['flip_rate']:.3f} "
        f"[{ours['flip_rate_ci_low']:.3f}, {ours['flip_rate_ci_high']:.3f}], accuracy "
        f"{ours['accuracy_before']:.3f} -> {ours['accuracy_after']:.3f}, flag "
        f"{ours['drift_flag']} ({ours['drift_reasons']})"
    )
