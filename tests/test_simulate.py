"""The simulator is deterministic, is what the demo ships, and plants what it says."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pandas as pd

from judge_bias import simulate as sim
from tests.conftest import DEMO_DIR


def test_committed_demo_data_is_the_simulators_output(tmp_path: Path) -> None:
    sim.simulate(tmp_path)
    names = sorted(p.name for p in DEMO_DIR.iterdir())
    assert names == sorted(p.name for p in tmp_path.iterdir())
    match, mismatch, errors = filecmp.cmpfiles(DEMO_DIR, tmp_path, names, shallow=False)
    assert not mismatch and not errors, "re-run: judge-bias simulate --out data/demo"


def test_same_seed_same_data_other_seed_other_data(tmp_path: Path) -> None:
    a, b, c = (sim.simulate(tmp_path / n, seed=s) for n, s in (("a", 1), ("b", 1), ("c", 2)))
    assert (a / "judge_ratings.csv").read_bytes() == (b / "judge_ratings.csv").read_bytes()
    assert (a / "judge_ratings.csv").read_bytes() != (c / "judge_ratings.csv").read_bytes()


def test_demo_exercises_everything_downstream() -> None:
    models = pd.read_csv(DEMO_DIR / "models.csv")
    per_family = models[models["model"].isin(sim.GENERATORS)].groupby("family").size()
    assert (per_family >= 2).sum() >= 3
    assert set(sim.JUDGES) - set(sim.GENERATORS), "a judge that generates nothing"
    assert set(sim.GENERATORS) - set(sim.JUDGES), "a generator that never judges"
    assert set(sim.JUDGES) & set(sim.GENERATORS), "judges that rate their own model"

    scales = pd.read_csv(DEMO_DIR / "rating_scales.csv")
    levels = scales[~scales["is_na"]].groupby("dimension").size()
    assert sorted(levels) == [3, 5, 7]
    assert scales["is_na"].any()

    ratings = pd.read_csv(DEMO_DIR / "judge_ratings.csv", keep_default_na=False)
    assert (ratings["raw_output"].str.contains("Answer: ")).any()
    assert (ratings["label"] != "").any()
    assert set(ratings["framing"]) == {"positive", "inverted"}
    assert ratings.loc[ratings["framing"] == "inverted", "judge"].nunique() == 1
    assert ratings["label"].str.startswith("NA:").any()

    humans = pd.read_csv(DEMO_DIR / "human_annotations.csv")
    annotators = humans[humans["role"] == "annotator"]
    per_item = annotators.groupby(["prompt_id", "model", "dimension"])["annotator_id"].nunique()
    assert (per_item == 3).all()
    experts = humans[humans["role"] == "expert"]
    per_gold_item = experts.groupby(["prompt_id", "model", "dimension"])["annotator_id"].nunique()
    assert len(per_gold_item) == sim.GOLD_PROMPTS * len(sim.GENERATORS) * len(sim.SCALES)
    assert (per_gold_item == len(sim.EXPERTS)).all()
    assert humans["label"].str.startswith("NA:").any()

    texts = pd.read_csv(DEMO_DIR / "completions.csv")["completion_text"]
    words = texts.str.split().str.len()
    assert words.max() > 3 * words.min()
    assert texts.str.contains("\n").any() and texts.str.contains('"').any()


def test_truth_table_lists_every_planted_parameter() -> None:
    truth = pd.read_csv(DEMO_DIR / "truth.csv", keep_default_na=False)
    self_bias = truth[truth["term_type"] == "self"].set_index("subject")["value"]
    assert self_bias.to_dict() == sim.SELF_BIAS
    assert (self_bias > 0).any() and (self_bias == 0).any() and (self_bias < 0).any()
    family = truth[truth["term_type"] == "family"].set_index("family")["value"]
    assert family.to_dict() == sim.FAMILY_BIAS and (family != 0).any()
    length = truth[truth["term_type"] == "length"].set_index("subject")["value"]
    assert (length > 0).sum() == 1
    assert set(truth["term_type"]) >= {
        "judge_offset",
        "judge_slope",
        "dimension",
        "annotator",
        "self_inverted_shift",
        "model_quality",
    }
