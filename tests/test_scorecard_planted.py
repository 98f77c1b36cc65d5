"""judge_scorecard's verdicts on planted judges, each verdict what the documented rule
(docs/scorecard.md; defaults in macro scorecard_thresholds) gives for what was
planted, not what the code printed (issues 29 and 33):

- ``steady``: tracks humans closely on 200 prompts, rates its own model with no
  self-bias: `use`;
- ``fragile``: rates like steady, robust to `authority` on 7 of 10 items (0.70, Wilson
  [0.40, 0.89]: a lower point rate, a wide interval) and to `verbosity` on 360 of 500
  (0.72 [0.68, 0.76]): verbosity's upper bound is below min_robustness 0.8, so
  `use with debiasing` naming verbosity (the old rule tested authority's 0.89 only);
- ``thin``: tracks humans on 6 prompts only, never rates its own model: its Spearman
  interval is wider than max_ci_width 0.4, so `insufficient evidence` (old: `use`);
- ``slotty``: pairwise only, the first slot in every verdict: position consistency 0
  (upper bound far below avoid_consistency 0.5), so `avoid` (old: `use with
  debiasing`);
- ``balanced``: pairwise only, the same completion in both orders, no human verdict:
  no agreement with humans, so `insufficient evidence` (as before).

And the self-recognition XSUM results (../shared/data), where the verdict follows from
position consistencies computed here from the raw JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from judge_bias.warehouse.build import build
from tests.conftest import SHARED_DATA, query

pytestmark = pytest.mark.dbt

# The documented defaults (macro scorecard_thresholds, docs/scorecard.md).
MIN_ROBUSTNESS = 0.8
MAX_CI_WIDTH = 0.4
AVOID_CONSISTENCY = 0.5
SCALE = [1, 2, 3, 4, 5]
RATING_JUDGES = {"steady": "A", "fragile": "B", "thin": "C"}
PAIRWISE_JUDGES = {"slotty": "D", "balanced": "E"}
# robust items / items per bias type of the fragile judge
PLANTED_ROBUSTNESS = {"authority": (7, 10), "verbosity": (360, 500)}


def _ratings(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human labels per prompt (the same for the three models of a prompt, so a self
    dummy explains nothing: every self-bias is 0) and the judges' labels: the human
    label moved one step on a third of the prompts, the same for every model."""
    n_prompts = 200
    human = rng.integers(1, 6, n_prompts)
    shift = rng.choice([-1, 0, 0, 1], n_prompts)
    judge_label = np.clip(human + shift, 1, 5)
    rows, ann = [], []
    for i in range(n_prompts):
        for model in RATING_JUDGES:
            for annotator in ("h1", "h2"):
                ann.append((f"p{i:03d}", model, "quality", annotator, int(human[i])))
            for judge in ("steady", "fragile"):
                rows.append((judge, f"p{i:03d}", model, "quality", int(judge_label[i])))
            if i < 6 and model != "thin":  # thin: few prompts, never its own model
                rows.append(("thin", f"p{i:03d}", model, "quality", int(judge_label[i])))
    judge = pd.DataFrame(rows, columns=["judge", "prompt_id", "model", "dimension", "label"])
    humans = pd.DataFrame(ann, columns=["prompt_id", "model", "dimension", "annotator_id", "label"])
    return judge, humans


def _perturbations() -> pd.DataFrame:
    rows = []
    for bias_type, (robust, n) in PLANTED_ROBUSTNESS.items():
        for i in range(n):
            item = f"{bias_type}_{i:03d}"
            rows.append(("fragile", item, bias_type, "original", "A", "A"))
            rows.append(("fragile", item, bias_type, "perturbed", "A" if i < robust else "B", "A"))
    return pd.DataFrame(
        rows, columns=["judge", "item_id", "bias_type", "condition", "verdict", "ground_truth"]
    )


def _pairwise() -> pd.DataFrame:
    """Each pairwise judge sees every pair of the three models on 100 prompts in both
    orders: slotty always answers `first`, balanced names the model first in
    alphabetical order whatever its slot."""
    models = sorted(RATING_JUDGES)
    rows = []
    for i in range(100):
        for a_i, a in enumerate(models):
            for b in models[a_i + 1 :]:
                for first, second in ((a, b), (b, a)):
                    rows.append(("slotty", f"p{i:03d}", first, second, "first"))
                    rows.append(("balanced", f"p{i:03d}", first, second,
                                 "first" if first == a else "second"))  # fmt: skip
    return pd.DataFrame(rows, columns=["judge", "prompt_id", "model_first", "model_second",
                                       "verdict"])  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    data = tmp_path_factory.mktemp("planted") / "data"
    data.mkdir()
    judge, humans = _ratings(np.random.default_rng(29))
    judge.to_csv(data / "judge_ratings.csv", index=False)
    humans.to_csv(data / "human_annotations.csv", index=False)
    _perturbations().to_csv(data / "perturbation_judgments.csv", index=False)
    _pairwise().to_csv(data / "pairwise_judgments.csv", index=False)
    families = {**RATING_JUDGES, **PAIRWISE_JUDGES}
    models = pd.DataFrame(
        {"alias": list(families), "model": list(families), "family": list(families.values())}
    )
    models.to_csv(data / "models.csv", index=False)
    scale = pd.DataFrame({"dimension": "quality", "label": [str(s) for s in SCALE], "score": SCALE})
    scale.to_csv(data / "rating_scales.csv", index=False)
    db = data.parent / "planted.duckdb"
    build(data, db, quiet=True)
    card = query(db, "select * from judge_scorecard where dimension = 'all'")
    return card.set_index("judge")


def test_planted_verdicts_follow_the_documented_rule(planted: pd.DataFrame) -> None:
    expected = {
        "steady": "use",
        "fragile": "use with debiasing",
        "thin": "insufficient evidence",
        "slotty": "avoid",
        "balanced": "insufficient evidence",
    }
    got = planted["verdict"].to_dict()
    assert got == expected, planted[["verdict", "verdict_reasons"]].to_string()


def test_any_fragile_type_counts_and_is_named(planted: pd.DataFrame) -> None:
    """The fragile types are those whose Wilson upper bound (statsmodels) is below
    min_robustness: verbosity, not authority, though authority's point rate is lower."""
    bounds = {
        t: proportion_confint(k, n, alpha=0.05, method="wilson")
        for t, (k, n) in PLANTED_ROBUSTNESS.items()
    }
    fragile = sorted(t for t, (_, hi) in bounds.items() if hi < MIN_ROBUSTNESS)
    assert fragile == ["verbosity"]
    row = planted.loc["fragile"]
    assert row["robustness_bias_type"] == "verbosity"
    assert row["n_fragile_bias_types"] == 1 and row["n_perturbation_bias_types"] == 2
    lo, hi = bounds["verbosity"]
    assert row["robustness_rate_ci_high"] == pytest.approx(hi, abs=1e-12)
    assert f"verbosity 0.72 [{lo:.2f}, {hi:.2f}]" in row["verdict_reasons"]
    assert "authority" not in row["verdict_reasons"]


def test_thin_evidence_names_the_width(planted: pd.DataFrame) -> None:
    row = planted.loc["thin"]
    assert row["spearman_ci_width"] > MAX_CI_WIDTH
    assert row["spearman_ci_high"] > 0.3  # not weak: it cannot be decided either way
    assert "agreement interval too wide to decide (Spearman" in row["verdict_reasons"]
    steady = planted.loc["steady"]
    assert steady["spearman_ci_width"] <= MAX_CI_WIDTH
    assert steady["n_self_ratings"] == 200 and steady["self_bias_n_support"] == 200
    assert abs(steady["self_bias"]) < 1e-9 and not steady["self_bias_significant"]


def test_slot_driven_pairwise_judge_is_avoided(planted: pd.DataFrame) -> None:
    row = planted.loc["slotty"]
    assert row["position_consistency"] == 0.0 and row["first_slot_rate"] == 1.0
    assert "the verdict follows the slot (100.0% first slot)" in row["verdict_reasons"]
    assert "no agreement with humans" in row["verdict_reasons"]
    assert "no agreement with humans" in planted.loc["balanced", "verdict_reasons"]


SELF_RECOGNITION = SHARED_DATA / "self_recognition_xsum"


def _raw_consistency(path: Path) -> tuple[int, int]:
    """Records whose two orders pick the same summary (forward "1" = own, backward
    "2" = own), out of the records with both answers."""
    records = json.loads(path.read_text())
    records = records if isinstance(records, list) else list(records.values())
    pairs = [(str(r["forward_comparison"]), str(r["backward_comparison"])) for r in records]
    valid = [(f, b) for f, b in pairs if f in "12" and b in "12" and f and b]
    same = sum((f == "1") == (b == "2") for f, b in valid)
    return same, len(valid)


@pytest.mark.skipif(not SELF_RECOGNITION.exists(), reason="../shared/data is not present")
def test_self_recognition_slot_driven_judges_are_not_usable(imported_build) -> None:
    """Issue 33: pairwise-only data with no human verdicts. A judge whose consistency
    is clearly below a coin toss (Wilson upper bound < 0.5 computed from the raw files)
    is `avoid`; the others have no agreement with humans: `insufficient evidence`.
    Never `use` or `use with debiasing`."""
    files = sorted(SELF_RECOGNITION.glob("*_results.json"))
    _, result = imported_build("self-recognition", files)
    card = query(result.db_path, "select * from judge_scorecard where dimension = 'all'")
    card = card.set_index("judge")
    for path in files:
        judge = path.name.removesuffix("_results.json")
        same, n = _raw_consistency(path)
        row = card.loc[judge]
        assert row["position_consistency"] == pytest.approx(same / n, abs=1e-12)
        _, hi = proportion_confint(same, n, alpha=0.05, method="wilson")
        expected = "avoid" if hi < AVOID_CONSISTENCY else "insufficient evidence"
        assert row["verdict"] == expected, (judge, same / n, hi, row["verdict_reasons"])
    assert card.loc["llama", "verdict"] == "avoid"
