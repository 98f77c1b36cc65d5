"""The agreement marts on the demo and Play Favorites warehouses."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from judge_bias.warehouse.build import BuildResult
from tests.conftest import DEMO_DIR, needs_shared, query

pytestmark = pytest.mark.dbt


def test_annotator_alpha_equals_krippendorff_on_the_csv(demo_build: BuildResult) -> None:
    got = query(demo_build.db_path, "select * from agreement_annotators").set_index("dimension")
    everyone = pd.read_csv(DEMO_DIR / "human_annotations.csv")
    humans = everyone[everyone["role"] == "annotator"].copy()
    scales = pd.read_csv(DEMO_DIR / "rating_scales.csv")
    score = {(d, lab): s for d, lab, s in scales[["dimension", "label", "score"]].values}
    humans["score"] = [
        score[(d, lab)] for d, lab in zip(humans["dimension"], humans["label"], strict=True)
    ]
    for dimension, part in humans.groupby("dimension"):
        data = part.pivot(index="annotator_id", columns=["prompt_id", "model"], values="score")
        for level in ("nominal", "ordinal", "interval"):
            ref = krippendorff.alpha(
                reliability_data=data.to_numpy(dtype=float), level_of_measurement=level
            )
            assert got.loc[dimension, f"alpha_{level}"] == pytest.approx(ref, abs=1e-9)
    assert (got["n_annotators"] == 3).all()
    # labels marked not applicable (no score) are left out of alpha and counted in notes
    n_na = humans["score"].isna().groupby(humans["dimension"]).sum()
    n_na["all"] = n_na.sum()
    assert n_na["faithfulness"] > 0
    for dimension, count in n_na.items():
        note = f"{count} labels marked not applicable (NA) have no score: left out"
        notes = got.loc[dimension, "notes"]
        assert notes == note if count else pd.isna(notes)
    # the 3-point scale rounds away most of the signal: lowest interval alpha
    assert got["alpha_interval"].drop("all").idxmin() == "correctness"


def test_self_vs_peer_equals_scipy_and_shows_the_planted_biases(demo_build: BuildResult) -> None:
    fct = query(demo_build.db_path, "select * from fct_judge_ratings where judge_score is not null")
    tests = query(demo_build.db_path, "select * from self_vs_peer_tests").set_index(
        ["judge", "framing"]
    )
    pos = fct[fct["framing"] == "positive"]
    judge = "aurora-large"
    s = pos[(pos["judge"] == judge) & (pos["model"] == judge)].set_index(
        ["prompt_id", "dimension"]
    )["judge_score_norm"]
    r = (
        pos[(pos["model"] == judge) & (pos["judge"] != judge)]
        .groupby(["prompt_id", "dimension"])["judge_score_norm"]
        .mean()
    )
    g = (
        pos[(pos["judge"] == judge) & (pos["model"] != judge)]
        .groupby(["prompt_id", "dimension"])["judge_score_norm"]
        .mean()
    )
    idx = s.index.intersection(r.index).intersection(g.index)
    row = tests.loc[(judge, "positive")]
    assert row["n"] == len(idx)
    # the demo rates three dimensions of each prompt: clustered by prompt (CR1, t with
    # G - 1 df) as statsmodels does it for the mean difference
    prompts = idx.get_level_values("prompt_id")

    def clustered(diff: pd.Series):
        return sm.OLS(diff.to_numpy(), np.ones(len(diff))).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(prompts)[0]}, use_t=True
        )

    ref_r, ref_g = clustered(s[idx] - r[idx]), clustered(s[idx] - g[idx])
    assert row["t_self_received"] == pytest.approx(ref_r.tvalues[0], rel=1e-10)
    assert row["p_self_received"] == pytest.approx(ref_r.pvalues[0], rel=1e-8)
    assert row["t_self_given"] == pytest.approx(ref_g.tvalues[0], rel=1e-10)
    assert row["ci_low_self_given"] == pytest.approx(ref_g.conf_int(0.05)[0, 0], rel=1e-10)
    # the unclustered t-test would claim more precision than the prompts give
    naive = stats.ttest_rel(s[idx], r[idx])
    assert abs(naive.statistic) > abs(row["t_self_received"])
    assert row["self_enhancement_error_rate"] == pytest.approx(
        abs(s[idx].mean() - r[idx].mean()) / r[idx].mean()
    )
    # planted: aurora-large +0.15, cirrus-max -0.12, aurora-small +0.10 shifted to 0 when inverted
    assert tests.loc[("aurora-large", "positive"), "ci_low_self_received"] > 0
    assert tests.loc[("cirrus-max", "positive"), "ci_high_self_received"] < 0
    assert tests.loc[("aurora-small", "positive"), "ci_low_self_received"] > 0
    frame = tests.loc[("aurora-small", "inverted - positive")]
    assert frame["ci_high_self_received"] < 0 and frame["p_self_received"] < 0.001
    # R is the positive-frame peer view in both frames: no change to report
    assert frame[["mean_received", "se_received"]].isna().all()


@needs_shared
@pytest.mark.shared
def test_play_favorites_agreement_tables_build(pf_build: BuildResult) -> None:
    ann = query(pf_build.db_path, "select * from agreement_annotators")
    assert ann["alpha_interval"].isna().all()
    assert ann["notes"].str.contains("per-annotator labels are absent").all()
    corr = query(pf_build.db_path, "select * from agreement_judge_human")
    assert len(corr) == 9 * 2  # nine judges, Faithfulness and all
    assert corr["spearman"].between(-1, 1).all() and (corr["n"] > 1700).all()
    svp = query(pf_build.db_path, "select * from self_vs_peer_tests")
    assert set(svp["framing"]) == {"positive"} and len(svp) == 9
    np.testing.assert_array_less(svp["ci_low_self_received"], svp["ci_high_self_received"])


def test_counterfactual_agreement_separates_calibration_from_disagreement(
    demo_build: BuildResult,
) -> None:
    from judge_bias.agreement.counterfactual import interval_alpha_two_coders

    cf = query(demo_build.db_path, "select * from agreement_counterfactual").set_index("judge")
    fct = query(
        demo_build.db_path,
        "select * from fct_judge_ratings where framing = 'positive' "
        "and judge_score_norm is not null and human_score_norm is not null",
    )
    part = fct[fct["judge"] == "borealis-lite"]
    observed = interval_alpha_two_coders(
        part["judge_score_norm"].to_numpy(), part["human_score_norm"].to_numpy()
    )
    assert cf.loc["borealis-lite", "alpha_observed"] == pytest.approx(observed, abs=1e-12)
    assert (cf["alpha_observed_ci_low"] < cf["alpha_observed"]).all()
    assert (cf["alpha_observed"] < cf["alpha_observed_ci_high"]).all()
    # borealis-lite has the flattest planted slope (0.60): calibration helps it most
    assert (cf["alpha_calibrated"] >= cf["alpha_observed"]).all()
    assert cf["correctable_share"].idxmax() in {"borealis-lite", "cirrus-max"}


def test_alpha_is_what_the_planted_annotator_noise_predicts(demo_build: BuildResult) -> None:
    """Predict alpha by drawing many more items from the simulator's annotator model
    (quality, leniency, noise, rounding to the scale), then compare."""
    from judge_bias import simulate as sim

    got = query(demo_build.db_path, "select * from agreement_annotators").set_index("dimension")
    rng = np.random.default_rng(99)
    n = 20_000
    means = np.array([sim.MODEL_QUALITY[m] for m in sim.GENERATORS])
    quality = np.clip(rng.choice(means, n) + rng.normal(0, 0.08, n) + rng.normal(0, 0.08, n), 0, 1)
    for scale in sim.SCALES:
        k = len(scale.labels)
        labels = np.vstack(
            [
                np.clip(np.rint((quality + len_ + rng.normal(0, sd, n)) * (k - 1)), 0, k - 1)
                for len_, sd in sim.ANNOTATORS.values()
            ]
        )
        predicted = krippendorff.alpha(reliability_data=labels, level_of_measurement="interval")
        # 720 demo items: the sampling sd of alpha is about 0.02-0.03
        assert got.loc[scale.dimension, "alpha_interval"] == pytest.approx(predicted, abs=0.07)


def test_gold_range_accuracy_and_spearman(demo_build: BuildResult) -> None:
    got = query(demo_build.db_path, "select * from agreement_annotators").set_index("dimension")
    humans = pd.read_csv(DEMO_DIR / "human_annotations.csv")
    scales = pd.read_csv(DEMO_DIR / "rating_scales.csv")
    score = {(d, lab): s for d, lab, s in scales[["dimension", "label", "score"]].values}
    humans["score"] = [score[k] for k in zip(humans["dimension"], humans["label"], strict=True)]
    humans = humans.dropna(subset=["score"])
    item = ["prompt_id", "model", "dimension"]
    for dimension, part in humans.groupby("dimension"):
        gold = part[part["role"] == "expert"].groupby(item)["score"].agg(["min", "max", "mean"])
        ann = part[part["role"] == "annotator"].join(gold, on=item, how="inner")
        accuracy = ann["score"].between(ann["min"], ann["max"]).mean()
        means = ann.groupby(item).agg(a=("score", "mean"), g=("mean", "first"))
        row = got.loc[dimension]
        assert row["n_gold_items"] == len(gold) == 180
        assert row["gold_accuracy"] == pytest.approx(accuracy, abs=1e-12)
        assert row["gold_spearman"] == pytest.approx(
            stats.spearmanr(means["a"], means["g"]).statistic, abs=1e-12
        )


def test_counterfactual_from_sql_sums_equals_alpha_on_the_completions(
    demo_build: BuildResult,
) -> None:
    """The mart (from int_agreement_prompt_sums) against interval alpha computed on the
    completions themselves: observed, and with calibrate() applied per dimension."""
    from judge_bias.agreement.counterfactual import calibrate, interval_alpha_two_coders

    mart = query(demo_build.db_path, "select * from agreement_counterfactual").set_index("judge")
    fct = query(
        demo_build.db_path,
        "select * from fct_judge_ratings where framing = 'positive' "
        "and judge_score_norm is not null and human_score_norm is not null",
    )
    for judge, part in fct.groupby("judge"):
        comp = part.groupby(["prompt_id", "model", "dimension"], as_index=False)[
            ["judge_score_norm", "human_score_norm"]
        ].mean()
        a, b = comp["judge_score_norm"].to_numpy(), comp["human_score_norm"].to_numpy()
        cal = a.copy()
        for _, idx in comp.groupby("dimension").indices.items():
            cal[idx] = calibrate(a[idx], b[idx])
        row = mart.loc[judge]
        assert row["n_items"] == len(comp) and row["n_prompts"] == comp["prompt_id"].nunique()
        assert row["alpha_observed"] == pytest.approx(interval_alpha_two_coders(a, b), abs=1e-10)
        assert row["alpha_calibrated"] == pytest.approx(
            interval_alpha_two_coders(cal, b), abs=1e-10
        )


def test_self_vs_peer_items_from_sql_equal_pandas(demo_build: BuildResult) -> None:
    from judge_bias.agreement.self_vs_peer import _items

    key = ["judge", "framing", "prompt_id", "dimension"]
    sql = query(demo_build.db_path, "select * from int_self_vs_peer_items").sort_values(key)
    mem = _items(query(demo_build.db_path, "select * from fct_judge_ratings")).sort_values(key)
    assert len(sql) == len(mem) > 0
    assert sql[key].reset_index(drop=True).equals(mem[key].reset_index(drop=True))
    for col in ("s", "r", "g"):
        np.testing.assert_allclose(sql[col].to_numpy(), mem[col].to_numpy(), rtol=1e-12)
