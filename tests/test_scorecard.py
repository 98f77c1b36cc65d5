"""judge_scorecard and panel_leaderboard on the demo warehouse: every scorecard value
equals its source mart's, the Wilson interval equals statsmodels', the panel never
holds a judge of the model's family and its raw score equals a pandas computation.
(The verdict rule and a hand-computed panel are dbt unit tests in
models/marts/scorecard/_scorecard__models.yml, run by every build; verdicts on planted
judges: tests/test_scorecard_planted.py.)"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from judge_bias.warehouse.build import BuildResult
from tests.conftest import query

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def card(demo_build: BuildResult) -> pd.DataFrame:
    return query(demo_build.db_path, "select * from judge_scorecard")


def _check(card: pd.DataFrame, source: pd.DataFrame, on: list[str], pairs: dict[str, str]) -> int:
    """Each scorecard column of ``pairs`` equals the source column on the join keys."""
    joined = card.merge(source, on=on, how="inner", suffixes=("", "_src"))
    assert len(joined) > 0
    for mine, theirs in pairs.items():
        theirs = f"{theirs}_src" if theirs in card.columns else theirs
        a, b = joined[mine].astype(float), joined[theirs].astype(float)
        assert ((a - b).abs() < 1e-12).all() | (a.isna() & b.isna()).all(), mine
    return len(joined)


def test_every_value_equals_its_source_mart(demo_build, card) -> None:
    db = demo_build.db_path
    corr = query(db, "select * from agreement_judge_human")
    _check(card, corr, ["judge", "dimension"],
           {c: c for c in ("spearman", "spearman_ci_low", "spearman_ci_high")})  # fmt: skip
    assert (card["spearman_source"] == "agreement_judge_human").all()
    cf = query(db, "select * from agreement_counterfactual")
    _check(card, cf, ["judge"], {"alpha": "alpha_observed", "alpha_ci_low": "alpha_observed_ci_low",
                                 "alpha_ci_high": "alpha_observed_ci_high"})  # fmt: skip
    est = query(db, "select * from bias_estimates")
    main = est[(est["analysis"] == "main")].assign(dimension="all")
    by_dim = est[est["analysis"] == "by_dimension"].assign(dimension=lambda d: d["slice"])
    terms = pd.concat([main, by_dim])
    self_ = terms[terms["term_type"] == "self"]
    n = _check(card, self_, ["judge", "dimension"],
               {"self_bias": "estimate", "self_bias_ci_low": "ci_low",
                "self_bias_ci_high": "ci_high",
                "self_bias_significant": "significant"})  # fmt: skip
    assert n == card["self_bias"].notna().sum()
    fam = terms[terms["term_type"] == "family"].rename(columns={"family": "judge_family"})
    fam = fam.drop(columns="judge")
    n = _check(card, fam, ["judge_family", "dimension"],
               {"family_bias": "estimate", "family_bias_ci_low": "ci_low",
                "family_bias_ci_high": "ci_high"})  # fmt: skip
    assert n == card["family_bias"].notna().sum()
    length = est[(est["analysis"] == "length_controlled") & (est["term_type"] == "length")]
    _check(card, length, ["judge"], {"length_slope": "estimate", "length_slope_ci_low": "ci_low"})
    pw = query(db, "select * from pairwise_bias where opponent = 'all'")
    _check(card, pw, ["judge"],
           {c: c for c in ("position_consistency", "position_consistency_ci_low",
                           "position_consistency_ci_high", "first_slot_rate",
                           "first_slot_rate_ci_low", "first_slot_rate_ci_high")})  # fmt: skip
    _check(card, pw, ["judge"],
           {"pairwise_accuracy": "accuracy", "pairwise_accuracy_ci_low": "accuracy_ci_low",
            "pairwise_accuracy_ci_high": "accuracy_ci_high", "pairwise_kappa": "kappa",
            "pairwise_invalid_rate": "invalid_rate",
            "n_pairwise_human": "n_human_judgments"})  # fmt: skip
    pert = query(db, "select * from perturbation_bias")
    # the type shown is the one with the lowest upper bound (the most surely fragile)
    worst = pert.groupby("judge")["robustness_rate_ci_high"].min().rename("worst").reset_index()
    fragile = pert[pert["robustness_rate_ci_high"] < 0.8].groupby("judge").size()
    pert = pert.rename(columns={"bias_type": "robustness_bias_type"})
    joined = card.merge(pert, on=["judge", "robustness_bias_type"], suffixes=("", "_src"))
    assert len(joined) == len(card)
    assert np.allclose(joined["robustness_rate"], joined["robustness_rate_src"], atol=1e-12)
    assert np.allclose(joined.merge(worst, on="judge")["worst"], joined["robustness_rate_ci_high"])
    counts = card.set_index("judge")["n_fragile_bias_types"]
    assert (counts == fragile.reindex(counts.index).fillna(0)).all()


def test_invalid_output_rate_counts_the_unreadable_outputs(demo_build, card) -> None:
    rows = query(demo_build.db_path, "select judge, dimension, reject_code from "
                 "int_judge_ratings_checked where judge is not null")  # fmt: skip
    bad = rows["reject_code"].isin(["unparseable_raw_output", "unknown_label",
                                    "score_out_of_range"])  # fmt: skip
    pooled = card[card["dimension"] == "all"].set_index("judge")
    for judge, n in rows.groupby("judge").size().items():
        assert pooled.loc[judge, "n_outputs"] == n
        assert pooled.loc[judge, "n_invalid"] == bad[rows["judge"] == judge].sum()


def test_invalid_output_interval_is_wilson(broken) -> None:
    """On the broken-input warehouse (unparseable outputs, unknown labels, scores out of
    range), the rate and its interval against statsmodels' Wilson interval."""
    build, _, _ = broken
    card = query(build.db_path, "select * from judge_scorecard where n_outputs > 0")
    assert (card["n_invalid"] > 0).any()
    for row in card.itertuples():
        lo, hi = proportion_confint(row.n_invalid, row.n_outputs, alpha=0.05, method="wilson")
        assert row.invalid_output_rate == pytest.approx(row.n_invalid / row.n_outputs, abs=1e-15)
        np.testing.assert_allclose(
            [row.invalid_output_rate_ci_low, row.invalid_output_rate_ci_high], [lo, hi],
            rtol=1e-12, atol=1e-14,
        )  # fmt: skip


def test_missing_pairwise_and_perturbation_inputs_give_nulls_with_a_note(gapped_demo) -> None:
    """On the session's gapped_demo: the demo without pairwise_judgments.csv and
    perturbation_judgments.csv (its two broken rating records, for
    test_input_reconciliation, are two rejected rows of thousands)."""
    result, _ = gapped_demo
    card = query(result.db_path, "select * from judge_scorecard")
    assert len(card) > 0 and card["verdict"].notna().all()
    assert card[["position_consistency", "robustness_rate", "pairwise_source"]].isna().all().all()
    assert card["notes"].str.contains("no pairwise judgments").all()
    assert card["notes"].str.contains("no perturbation judgments").all()
    assert card["spearman"].notna().all()


def test_panel_excludes_same_family_judges_and_raw_score_by_hand(demo_build) -> None:
    db = demo_build.db_path
    panel = query(db, "select * from panel_leaderboard")
    fct = query(db, "select * from fct_judge_ratings where framing = 'positive' "
                "and judge_score_norm is not null")  # fmt: skip
    family = dict(zip(fct["judge"], fct["judge_family"], strict=False))
    model_family = dict(zip(fct["model"], fct["model_family"], strict=False))
    for row in panel.itertuples():
        members = [] if row.panel_judges is None else row.panel_judges.split(", ")
        assert all(family[j] != model_family[row.model] for j in members)
        assert len(members) == row.n_panel_judges
    other = fct[fct["judge_family"] != fct["model_family"]]
    means = other.groupby(["model", "judge"])["judge_score_norm"].mean()
    expected = means.groupby("model").mean()
    pooled = panel[panel["dimension"] == "all"].set_index("model")
    np.testing.assert_allclose(pooled.loc[expected.index, "panel_score"], expected, rtol=1e-12)
    # the demo has same-family judges for every model: the panel is smaller than all judges
    assert (pooled["n_excluded_judges"] > 0).all()


def test_panel_score_intervals_equal_statsmodels_clustered_wls(demo_build) -> None:
    """panel_score and panel_score_debiased: a weighted mean of the panel's ratings
    (weight 1 / (judges x the judge's ratings)); its standard error equals statsmodels'
    WLS of the score on a constant with prompt-clustered errors."""
    db = demo_build.db_path
    board = query(db, "select * from panel_leaderboard").set_index(["model", "dimension"])
    fct = query(db, "select * from fct_judge_ratings where framing = 'positive' and "
                    "judge_score_norm is not null and judge_family <> model_family")  # fmt: skip
    est = query(db, "select * from bias_estimates where analysis = 'main' and slice = 'all'")
    off = est[est["term_type"] == "judge_offset"].set_index("judge")["estimate"]
    slope = est[(est["term_type"] == "judge_slope") & (est["ci_low"] > 0)
                & ((est["std_error"] > 0) | (est["estimate"].abs() > 1e-9))]  # fmt: skip
    slope = slope.set_index("judge")["estimate"]
    dim = est[est["term_type"] == "dimension"].set_index("dimension")["estimate"]
    fct["calibrated"] = (
        fct["judge_score_norm"] - fct["judge"].map(off) - fct["dimension"].map(dim).fillna(0)
    ) / fct["judge"].map(slope)
    checked = 0
    for dimension in [*sorted(fct["dimension"].unique()), "all"]:
        rows = fct if dimension == "all" else fct[fct["dimension"] == dimension]
        for model, g in rows.groupby("model"):
            for column, score in (("judge_score_norm", "panel_score"),
                                  ("calibrated", "panel_score_debiased")):  # fmt: skip
                g2 = g[g[column].notna()]
                n_j = g2.groupby("judge")[column].transform("size")
                w = 1.0 / (g2["judge"].nunique() * n_j)
                fit = sm.WLS(g2[column].to_numpy(), np.ones((len(g2), 1)), weights=w).fit(
                    cov_type="cluster", cov_kwds={"groups": pd.factorize(g2["prompt_id"])[0]}
                )
                row = board.loc[(model, dimension)]
                assert row[score] == pytest.approx(fit.params[0], abs=1e-12)
                assert row[f"{score}_se"] == pytest.approx(fit.bse[0], rel=1e-9)
                assert row[f"{score}_ci_low"] == pytest.approx(
                    fit.params[0] - 1.959963984540054 * fit.bse[0], rel=1e-9
                )
                checked += 1
    assert checked >= 2 * 6 * 4


def test_report_shows_the_scorecard_right_after_what_is_significant(demo_build, card, tmp_path):
    from judge_bias.report import write_report

    html = write_report(demo_build.db_path, tmp_path / "r.html").read_text(encoding="utf-8")
    order = re.findall(r'<section[^>]*id="([^"]+)"', html)
    # "At a glance" (the one-screen summary) comes first, then what is significant
    assert order[:2] == ["glance", "significant"]
    assert order[2:5] == ["scorecard", "cross_family_panel", "forest"]
    section = html[html.index('id="scorecard"') : html.index('id="cross_family_panel"')]
    pooled = card[card["dimension"] == "all"]
    for judge, verdict in zip(pooled["judge"], pooled["verdict"], strict=True):
        assert f"<td>{judge}</td><td>{verdict}</td>" in section
    robustness = html[html.index('id="robustness"') :]
    assert "spline of the reference" in robustness[: robustness.index("</section>")]


def test_panel_human_score_counts_each_labelled_completion_once() -> None:
    """panel_leaderboard's human_score and n_human_completions (from its per-completion
    aggregate since session 18) on ratings where a third of the completions have no
    human score (the demo labels every one, so no other test reads them: review18c):
    the mean over labelled completions of their human score, each completion once
    however many judges rated it, per dimension and pooled."""
    import duckdb

    from tests.sql_models import model_relation

    rng = np.random.default_rng(11)
    judges = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    models = {"a1": "A", "b1": "B", "c1": "C"}
    human = {
        (p, m, d): (None if rng.random() < 1 / 3 else float(rng.integers(0, 5)) / 4)
        for p in range(30) for m in models for d in ("d1", "d2")
    }  # fmt: skip
    rows = [
        {"judge": j, "judge_family": judges[j], "model": m, "model_family": models[m],
         "prompt_id": f"p{p}", "dimension": d, "framing": "positive",
         "judge_score_norm": float(rng.integers(0, 5)) / 4, "human_score_norm": h}
        for (p, m, d), h in human.items() for j in judges if rng.random() < 0.8
    ]  # fmt: skip
    fct = pd.DataFrame(rows)
    estimates = pd.DataFrame(
        [
            {
                "analysis": "main",
                "slice": "all",
                "term_type": t,
                "judge": j,
                "dimension": None,
                "estimate": e,
                "std_error": 0.05,
                "ci_low": 0.1,
            }
            for j in judges
            for t, e in (("judge_offset", 0.1), ("judge_slope", 0.9))
        ]  # fmt: skip
    )
    board = model_relation(
        duckdb.connect(), "panel_leaderboard",
        {"fct_judge_ratings": fct, "bias_estimates": estimates},
    ).df().set_index(["model", "dimension"])  # fmt: skip
    completions = fct.drop_duplicates(["prompt_id", "model", "dimension"])
    labelled = completions[completions["human_score_norm"].notna()]
    assert 0 < len(labelled) < len(completions)
    per_dimension = labelled.groupby(["model", "dimension"])["human_score_norm"].agg(
        ["mean", "size"]
    )
    pooled = labelled.groupby("model")["human_score_norm"].agg(["mean", "size"])
    for (model, dimension), row in per_dimension.iterrows():
        assert board.loc[(model, dimension), "human_score"] == pytest.approx(row["mean"], abs=1e-12)
        assert board.loc[(model, dimension), "n_human_completions"] == row["size"]
    for model, row in pooled.iterrows():
        assert board.loc[(model, "all"), "human_score"] == pytest.approx(row["mean"], abs=1e-12)
        assert board.loc[(model, "all"), "n_human_completions"] == row["size"]


def test_panel_debiases_by_no_rounded_zero_slope() -> None:
    """Constant scores fit a judge slope of 0 with standard error 0; rounding
    leaves -7e-15..6e-14, whose zero-width interval can lie above 0 (Play
    Favorites with constant scores). Such a judge has no debiased score (old
    code: its scores divided by 6e-14, panel_score_debiased ~1e12 and counted in
    n_debiased_judges); a slope of standard error 0 that is no rounded zero
    (0.5, an exact fit) and one with a standard error (0.8) debias. Reference:
    pandas, (score - offset) / slope per judge, averaged over the kept judges."""
    import duckdb

    from tests.sql_models import model_relation

    judges = {"a1": "A", "b1": "B", "b2": "B", "b3": "B"}
    slopes = {  # judge: (estimate, std_error): b1 a rounded zero, b2 exact, b3 noisy
        "a1": (0.5, 0.1), "b1": (6e-14, 0.0), "b2": (0.5, 0.0), "b3": (0.8, 0.1),
    }  # fmt: skip
    rng = np.random.default_rng(3)
    rows = [
        {"judge": j, "judge_family": f, "model": m, "model_family": m[0].upper(),
         "prompt_id": f"p{p}", "dimension": "d", "framing": "positive",
         "judge_score_norm": float(rng.integers(0, 5)) / 4, "human_score_norm": 0.5}
        for p in range(6) for j, f in judges.items() for m in ("a1", "b1")
    ]  # fmt: skip
    fct = pd.DataFrame(rows)
    terms = [
        {"analysis": "main", "slice": "all", "term_type": t, "judge": j,
         "dimension": None, "estimate": e, "std_error": se, "ci_low": e - 1.645 * se}
        for j, (slope, slope_se) in slopes.items()
        for t, e, se in (("judge_offset", 0.125, 0.01), ("judge_slope", slope, slope_se))
    ]  # fmt: skip
    estimates = pd.DataFrame(terms)
    assert (estimates["ci_low"] > 0).all()  # every interval lies above 0, b1's by rounding
    board = model_relation(
        duckdb.connect(), "panel_leaderboard",
        {"fct_judge_ratings": fct, "bias_estimates": estimates},
    ).df().set_index(["model", "dimension"])  # fmt: skip
    kept = {j: s for j, (s, _) in slopes.items() if j != "b1"}
    panel = fct[fct["judge_family"] != fct["model_family"]]
    panel = panel[panel["judge"].isin(list(kept))]
    calibrated = (panel["judge_score_norm"] - 0.125) / panel["judge"].map(kept)
    expected = calibrated.groupby([panel["model"], panel["judge"]]).mean().groupby("model").mean()
    for model, score in expected.items():
        row = board.loc[(model, "d")]
        assert row["panel_score_debiased"] == pytest.approx(score, abs=1e-12)
        assert row["n_debiased_judges"] == panel[panel["model"] == model]["judge"].nunique()
    # model a1's panel is b1, b2, b3: two debiased, the rounded zero left out
    assert board.loc[("a1", "d"), "n_debiased_judges"] == 2
    assert board.loc[("a1", "d"), "n_panel_judges"] == 3
