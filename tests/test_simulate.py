"""The simulator is deterministic, is what the demo ships, and plants what it says."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from judge_bias import simulate as sim
from judge_bias.simulate.perturbation import _expected_abs_error as expected_abs_error
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


def test_pairwise_and_perturbation_truth_values_equal_independent_integrals() -> None:
    from scipy import integrate, stats

    truth = pd.read_csv(DEMO_DIR / "truth.csv", keep_default_na=False)

    def value(term_type: str, subject: str, parameter: str, dimension: str = "") -> float:
        row = truth[
            (truth["term_type"] == term_type)
            & (truth["subject"] == subject)
            & (truth["parameter"] == parameter)
            & (truth["dimension"] == dimension)
        ]
        assert len(row) == 1, (term_type, subject, parameter)
        return float(row["value"].iloc[0])

    for j in sim.JUDGES:
        pi = sim.PAIRWISE_FIRST_SLOT[j]
        assert value("pairwise_position", j, "expected_first_slot_rate") == 0.5 + pi / 2
        if j in sim.GENERATORS:
            # P(own chosen) = E[1 / (1 + exp(-(s + k (u_own - u_other))))], u iid N(0, 1)
            k, s = sim.PAIRWISE_CONTENT[j], sim.PAIRWISE_SELF_LOGIT[j]
            ref = integrate.quad(
                lambda d, k=k, s=s: stats.norm.pdf(d, scale=np.sqrt(2)) * special.expit(s + k * d),
                -np.inf,
                np.inf,
            )[0]
            assert value("pairwise_self", j, "expected_self_preference_rate") == pytest.approx(
                ref, abs=1e-6
            )
        e, sd = sim.PERTURBATION_INFLATION[j], sim.PERTURBATION_SCORE_NOISE_SD
        ref = integrate.quad(
            lambda z, e=e, sd=sd: stats.norm.pdf(z) * abs((1 + e) * np.exp(sd * z) - 1),
            -np.inf,
            np.inf,
        )[0]
        got = value("perturbation_score", j, "expected_error_rate", sim.PERTURBATION_SCORE_TYPE)
        assert got == pytest.approx(ref, abs=1e-6)


def _wilson(successes: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    return proportion_confint(successes, n, alpha=0.05, method="wilson")


def test_demo_pairwise_file_carries_the_planted_effects() -> None:
    """Counted on the raw demo files (95% intervals): the position judge's first-slot
    rate, the self-preferring judge's own-completion rate, the length judge's slope."""
    import re

    import statsmodels.api as sm

    from judge_bias.pairwise.features import length_difference_feature

    alias = dict(pd.read_csv(DEMO_DIR / "models.csv")[["alias", "model"]].values)
    pw = pd.read_csv(DEMO_DIR / "pairwise_judgments.csv", keep_default_na=False)
    for col in ("judge", "model_first", "model_second"):
        pw[col] = pw[col].map(alias)
    assert len(pw) == len(sim.JUDGES) * 120 * sim.PAIRWISE_PAIRS_PER_PROMPT * 2
    first = pw["verdict"] == "first"

    pos = next(j for j, p in sim.PAIRWISE_FIRST_SLOT.items() if p > 0)
    sel = pw["judge"] == pos
    lo, hi = _wilson(int(first[sel].sum()), int(sel.sum()))
    assert lo > 0.5 and lo <= 0.5 + sim.PAIRWISE_FIRST_SLOT[pos] / 2 <= hi

    me = next(j for j, s in sim.PAIRWISE_SELF_LOGIT.items() if s > 0)
    own = pw[(pw["judge"] == me) & ((pw["model_first"] == me) | (pw["model_second"] == me))]
    chose_own = np.where(own["verdict"] == "first", own["model_first"], own["model_second"]) == me
    lo, hi = _wilson(int(chose_own.sum()), len(own))
    truth = pd.read_csv(DEMO_DIR / "truth.csv", keep_default_na=False)
    rate = truth[(truth["subject"] == me) & (truth["parameter"] == "expected_self_preference_rate")]
    assert lo > 0.5 and lo <= float(rate["value"].iloc[0]) <= hi

    comp = pd.read_csv(DEMO_DIR / "completions.csv")
    tokens = {
        (p, alias[m]): len(re.findall(r"\w+|[^\w\s]", t))
        for p, m, t in comp[["prompt_id", "model", "completion_text"]].values
    }
    lj = next(j for j, s in sim.PAIRWISE_LENGTH_SLOPE.items() if s > 0)
    part = pw[pw["judge"] == lj]
    x = length_difference_feature(
        [tokens[(p, m)] for p, m in part[["prompt_id", "model_first"]].values],
        [tokens[(p, m)] for p, m in part[["prompt_id", "model_second"]].values],
    )
    fit = sm.Logit((part["verdict"] == "first").astype(float), sm.add_constant(x)).fit(disp=0)
    lo, hi = fit.conf_int(alpha=0.05)[1]
    assert 0 < lo <= sim.PAIRWISE_LENGTH_SLOPE[lj] <= hi


def test_demo_perturbation_file_carries_the_planted_flips() -> None:
    alias = dict(pd.read_csv(DEMO_DIR / "models.csv")[["alias", "model"]].values)
    pt = pd.read_csv(DEMO_DIR / "perturbation_judgments.csv", keep_default_na=False)
    pt["judge"] = pt["judge"].map(alias)
    wide = pt.pivot_table(
        index=["judge", "bias_type", "item_id"],
        columns="condition",
        values="verdict",
        aggfunc="first",
    )
    verdicts = wide[wide.index.get_level_values("bias_type") != sim.PERTURBATION_SCORE_TYPE]
    base = []
    for (j, bias), flip in sim.PERTURBATION_FLIP.items():
        part = verdicts.loc[(j, bias)]
        kept = (part["original"] == part["perturbed"]).to_numpy()
        if flip == sim.PERTURBATION_BASE_FLIP:
            base.append(kept)  # pooled below: 27 cells at 95% would miss about one
            continue
        lo, hi = _wilson(int(kept.sum()), len(kept))
        assert lo <= 1 - flip <= hi, (j, bias)
        assert hi < 1 - sim.PERTURBATION_BASE_FLIP, (j, bias)
    kept = np.concatenate(base)
    lo, hi = _wilson(int(kept.sum()), len(kept))
    assert lo <= 1 - sim.PERTURBATION_BASE_FLIP <= hi
    same = (verdicts["original"] == verdicts["repeat"]).to_numpy()
    lo, hi = _wilson(int(same.sum()), len(same))
    assert lo <= 1 - sim.PERTURBATION_REPEAT_FLIP <= hi


def test_demo_score_perturbation_carries_the_planted_inflation() -> None:
    from scipy import stats

    alias = dict(pd.read_csv(DEMO_DIR / "models.csv")[["alias", "model"]].values)
    pt = pd.read_csv(DEMO_DIR / "perturbation_judgments.csv", keep_default_na=False)
    pt = pt[pt["bias_type"] == sim.PERTURBATION_SCORE_TYPE]
    pt = pt.assign(judge=pt["judge"].map(alias), score=pt["score"].astype(float))
    wide = pt.pivot_table(index=["judge", "item_id"], columns="condition", values="score")
    error = (wide["perturbed"] - wide["original"]).abs() / wide["original"]
    for j in sim.JUDGES:
        e = error.loc[j].to_numpy()
        lo, hi = stats.t.interval(0.95, len(e) - 1, loc=e.mean(), scale=stats.sem(e))
        expected = expected_abs_error(
            sim.PERTURBATION_INFLATION[j], sim.PERTURBATION_SCORE_NOISE_SD
        )
        assert lo <= expected <= hi, j
