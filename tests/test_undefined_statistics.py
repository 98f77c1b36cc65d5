"""A statistic undefined on valid data is null with a note, never NaN or inf and
never null without a reason: the unit cases of the awkward folders
(tests/test_awkward_folders.py builds them whole)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judge_bias.agreement.judge_human import judge_human_agreement
from judge_bias.agreement.self_vs_peer import self_vs_peer_tests
from judge_bias.bias.regression import support_notes, wald_table
from judge_bias.bias.sufficient import Term


def test_an_exactly_fitted_term_has_null_z_and_p_and_a_note() -> None:
    """A judge with constant scores on a constant reference: its offset is fitted
    exactly and every White standard error is 0 (statsmodels gives 0 too: z = inf
    there). Old code: z = inf in bias_estimates and no note."""
    terms = [Term("judge[A]", "judge_offset", judge="A"), Term("judge[B]", "judge_offset", "B")]
    params = np.array([1.0, 0.4])
    cov = np.diag([0.0, 0.01])
    table = wald_table(terms, params, cov, 0.9)
    assert np.isnan(table["z"].iloc[0]) and np.isnan(table["p_value"].iloc[0])
    assert table["z"].iloc[1] == pytest.approx(4.0, rel=1e-12)
    assert table["p_value"].iloc[1] == pytest.approx(2 * stats.norm.sf(4.0), rel=1e-9)
    assert (table["ci_low"].iloc[0], table["ci_high"].iloc[0]) == (1.0, 1.0)
    notes = support_notes(table, 0)
    assert any("standard error 0 for judge[A]" in n for n in notes), notes
    # rounding of an exact fit (se 1e-17) counts as 0, not as z = 1e17
    rounded = wald_table(terms, params, np.diag([1e-34, 0.01]), 0.9)
    assert np.isnan(rounded["z"].iloc[0])


def test_an_exactly_fitted_rounded_zero_is_not_significant() -> None:
    """Constant judge scores (all judges, every rating 3 of 0-4: Play Favorites'
    Faithfulness with every label set to 3): in exact arithmetic every self and
    family coefficient is 0 (closed form: a constant outcome is fitted by the
    offsets alone) with standard error 0; rounding leaves estimates of +-1e-17 and
    a zero-width interval that excludes 0. Old code: 384 such terms (89 self
    or family) marked significant on that folder, and the scorecard listed "family-bias (GPT) -0.000
    [-0.000, -0.000]" as evidence."""
    terms = [
        Term("self[A]", "self", judge="A"),
        Term("family[F]", "family", family="F"),
        Term("self[B]", "self", judge="B"),
        Term("judge[A]", "judge_offset", judge="A"),
    ]
    params = np.array([1.9585360489695648e-16, -1.1068009182105967e-17, 0.5, 0.75])
    cov = np.diag([1e-34, 0.0, 0.01, 0.0])
    table = wald_table(terms, params, cov, 0.9, np.array([100, 100, 100, 100]), 30)
    # the rounded zeros' intervals exclude 0, yet they are not significant; the
    # exactly determined offset 0.75 (standard error 0) is
    assert (table["ci_low"].iloc[0] > 0) and (table["ci_high"].iloc[1] < 0)
    assert table["significant"].tolist() == [False, False, True, True]
    notes = support_notes(table, 30)
    assert any("self[A], family[F], judge[A]" in n and "significant only if |estimate| > 1e-09"
               in n for n in notes), notes  # fmt: skip


def _determined_self_bias(constant: bool) -> pd.DataFrame:
    """Two judges (families A, B) rating four models on 40 prompts, human scores
    varied: each judge scores its own model 4 of 0-4 and every other 2 (norm 1.0
    and 0.5), or every model 2 when ``constant``."""
    from judge_bias.bias.fit_inputs import FACT_COLUMNS

    rows = [
        {"judge": j, "judge_family": j[0], "model": m, "model_family": m[0],
         "prompt_id": f"p{i}", "dataset": "news", "task_type": "qa", "dimension": "d",
         "framing": "positive", "judge_score": 4.0 if j == m and not constant else 2.0,
         "judge_score_norm": 1.0 if j == m and not constant else 0.5,
         "human_score_norm": ((i * 7 + ord(m[0]) + int(m[1])) % 5) / 4,
         "is_self": j == m, "is_same_family": j[0] == m[0], "length_feature": 0.0}
        for i in range(40) for j in ("A1", "B1") for m in ("A1", "A2", "B1", "B2")
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=FACT_COLUMNS)


@pytest.mark.parametrize("se_type", ["HC0", "HC1", "HC3", "cluster"])
def test_an_exactly_determined_self_bias_is_significant_whatever_the_se(se_type: str) -> None:
    """In exact arithmetic (closed form: the judges' scores are their offsets 0.5
    plus 0.5 on their own model) self[A1] = self[B1] = 0.5, every other
    coefficient 0, every residual 0 and every standard error 0; rounding leaves
    some standard errors 0 and others 1e-11..1e-9 by chance. Play Favorites'
    Faithfulness so rewritten for GPT-4o and GPT-3.5 Turbo: self 0.5 of se
    3.6e-10 significant, self 0.5 of se 0.0 not. The same effect is significant
    under every se type; the rounded zeros (family, slopes) are not."""
    from judge_bias.bias.analyses import Settings, run_analyses

    est, _ = run_analyses(_determined_self_bias(False), Settings(se_type=se_type), ["main"])
    self_terms = est[est["term_type"] == "self"]
    assert len(self_terms) == 2
    assert self_terms["estimate"].to_numpy() == pytest.approx([0.5, 0.5], abs=1e-12)
    assert self_terms["significant"].all(), self_terms[["term", "std_error", "significant"]]
    zeros = est[est["term_type"].isin(["family", "judge_slope"])]
    assert len(zeros) and (zeros["estimate"].abs() < 1e-9).all()
    assert not zeros["significant"].any(), zeros[["term", "estimate", "std_error"]]


@pytest.mark.parametrize("se_type", ["HC0", "HC1", "HC3", "cluster"])
def test_the_rounded_zeros_of_a_constant_outcome_are_not_significant(se_type: str) -> None:
    """Every judge scores every model 2: every self, family and slope term is 0 in
    exact arithmetic with standard error 0 (what rounding leaves, |estimate| well
    below 1e-9, is no effect), so none is significant."""
    from judge_bias.bias.analyses import Settings, run_analyses

    est, _ = run_analyses(_determined_self_bias(True), Settings(se_type=se_type), ["main"])
    zeros = est[est["term_type"] != "judge_offset"]
    assert len(zeros) and (zeros["estimate"].abs() < 1e-9).all()
    assert (zeros["std_error"] == 0).all() and not zeros["significant"].any()


def _items(rows: list[tuple[str, str, str, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["judge", "framing", "prompt_id", "s", "r", "g"]).assign(
        dimension="d"
    )


def test_self_vs_peer_null_statistics_say_why() -> None:
    """One prompt: no clustered standard error; S - G equal on every item: t and p
    undefined; peers' mean 0: no error rate. Old code: NaN without a note, and the
    mean difference of one prompt dropped too."""
    items = _items(
        [("one", "positive", "p0", 0.8, 0.5, 0.4)]
        + [("flat", "positive", f"p{i}", 0.6 + i / 10, 0.0, 0.4 + i / 10) for i in range(4)]
    )
    out = self_vs_peer_tests(items=items).set_index("judge")
    one, flat = out.loc["one"], out.loc["flat"]
    assert one["mean_self_minus_received"] == pytest.approx(0.3)
    assert pd.isna(one["t_self_received"]) and pd.isna(one["ci_low_self_received"])
    assert "S - R: 1 prompt, no clustered standard error" in one["notes"]
    assert flat["mean_self_minus_given"] == pytest.approx(0.2)
    assert pd.isna(flat["t_self_given"]) and pd.isna(flat["p_self_given"])
    assert flat["ci_low_self_given"] == flat["ci_high_self_given"] == pytest.approx(0.2)
    assert "S - G: the same on every item" in flat["notes"]
    assert pd.isna(flat["self_enhancement_error_rate"])
    assert "peers' mean score is 0" in flat["notes"]
    # S - R varies: its test is there and equals scipy's paired t-test
    ref = stats.ttest_rel([0.6, 0.7, 0.8, 0.9], [0.0] * 4)
    assert flat["t_self_received"] == pytest.approx(ref.statistic, rel=1e-10)


def _pairs(judge: str, xs, ys, prompts) -> pd.DataFrame:
    return pd.DataFrame(
        {"judge": judge, "dimension": "d", "prompt_id": prompts,
         "judge_score_norm": xs, "human_score_norm": ys, "n_rows": 1}
    )  # fmt: skip


def test_judge_human_null_correlations_say_why() -> None:
    """Constant judge, fewer than 5 pairs, one prompt, r = 1: each null cell is named
    in notes; a row with every statistic has none (old code: no notes column, the
    contracted mart had no way to say why)."""
    rng = np.random.default_rng(3)
    x, y = rng.random(12), rng.random(12)
    frame = pd.concat(
        [
            _pairs("constant", np.full(12, 0.5), y, np.arange(12) // 3),
            _pairs("few", x[:4], y[:4], np.arange(4)),
            _pairs("one prompt", x, y, np.zeros(12)),
            _pairs("perfect", x, 2 * x, np.arange(12) // 3),
            _pairs("fine", x, y + x, np.arange(12) // 3),
        ]
    )
    out = judge_human_agreement(frame)
    out = out[out["dimension"] == "d"].set_index("judge")["notes"]
    assert out["constant"] == "correlations null: the judge's scores are constant"
    assert out["few"] == "correlations null: 4 rated pairs (at least 5 needed)"
    assert "design effect null (one prompt)" in out["one prompt"]
    assert out["perfect"].startswith("spearman, pearson, kendall_tau_b at +-1: no Fisher interval")
    assert pd.isna(out["fine"])


def test_gamma_at_one_has_no_interval_and_a_note() -> None:
    """A judge that rates only its own model (Play Favorites' GPT-4o kept on its own
    completions): 199 scores 1.0 and one 0.75, against varied human means. Brute
    force over the 19,900 pairs (real data: 0 concordant, 45 discordant; here 0 and 44), so
    gamma = -1 and its asymptotic standard error is 0. Old code: the interval
    [-1, -1], zero width, on the strength of one rating, with no note."""
    from judge_bias.agreement.judge_human import judge_human_agreement

    x = np.r_[0.75, np.full(199, 1.0)]
    y = np.r_[1.0, np.full(44, 0.91675), np.full(155, 1.0)]
    dx, dy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    conc, disc = int((dx * dy > 0).sum()) // 2, int((dx * dy < 0).sum()) // 2
    assert (conc, disc) == (0, 44)
    out = judge_human_agreement(_pairs("own", x, y, np.arange(200)))
    row = out[out["dimension"] == "d"].iloc[0]
    assert row["gk_gamma"] == pytest.approx((conc - disc) / (conc + disc))
    assert pd.isna(row["gk_gamma_ci_low"]) and pd.isna(row["gk_gamma_ci_high"])
    assert np.isfinite(row["spearman_ci_low"])  # the other intervals stay
    assert "gk_gamma at +-1" in row["notes"] and "no interval" in row["notes"]


def test_model_comparisons_with_constant_scores_build_with_a_note() -> None:
    """Two judges and two models, every judge and human score 3 (as int_ppi_stratum_
    moments and int_comparison_cross_moments hold them for that folder): the
    difference is 0 with standard error 0 (closed form: two constant means). Old code:
    ZeroDivisionError on 0 / 0 in pairing_variance_ratio (the own-model cross terms
    are absent, their column of Python floats), and the build failed."""
    import duckdb

    from judge_bias.comparisons.marts import model_comparisons

    con = duckdb.connect()
    con.execute(
        """create table int_ppi_stratum_moments as
        select judge, judge = 'panel' as is_panel, model, dimension,
            'dimension=d, same_family=' || (judge <> 'jb')::varchar as stratum,
            case when model = 'all' then 8 else 4 end as n_labelled, 0.5 as mean_y,
            0.5 as mean_yhat_labelled, 0.0 as var_y, 0.0 as var_yhat_labelled,
            0.0 as cov_y_yhat, 0 as n_unlabelled, null::double as mean_yhat_unlabelled,
            null::double as var_yhat_unlabelled, 0.0 as m3_y, 0.0 as m3_y_y_yhat,
            0.0 as m3_y_yhat_yhat, 0.0 as m3_yhat_labelled,
            null::double as m3_yhat_unlabelled, 0 as n_human_na, 0 as n_judge_na
        from (values ('ja'), ('jb'), ('panel')) j(judge)
        cross join (values ('ja'), ('mb'), ('all')) m(model)
        cross join (values ('d'), ('all')) d(dimension)"""
    )
    con.execute(
        """create table int_comparison_cross_moments as
        select judge, judge = 'panel' as is_panel, dimension, 'ja' as first_model,
            'dimension=d, same_family=' || (judge <> 'jb')::varchar as first_stratum,
            'mb' as second_model,
            'dimension=d, same_family=' || (judge <> 'jb')::varchar as second_stratum,
            4 as n_pairs, 0.0 as ll_yy, 0.0 as ll_yh, 0.0 as ll_hy, 0.0 as ll_hh,
            0.0 as lu_yu, 0.0 as lu_hu, 0.0 as ul_uy, 0.0 as ul_uh, 0.0 as uu_uu, 0.0 as gg
        from (values ('ja'), ('jb'), ('panel')) j(judge)
        cross join (values ('d'), ('all')) d(dimension)"""
    )
    out = model_comparisons(con.table, {}.get)
    con.close()
    assert len(out) == 6, out
    assert (out["difference"] == 0).all() and (out["std_error"] == 0).all()
    assert out["p_value"].isna().all() and out["pairing_variance_ratio"].isna().all()
    assert out["notes"].str.startswith("no variance in the scores (constant)").all()


def test_ratings_and_labels_on_disjoint_items_say_why_no_fit_ran() -> None:
    """Human labels on half the prompts, judge ratings on the other half (Play
    Favorites' Faithfulness split by prompt): no rating has a human reference
    (pandas: 0 ratings with human_score_norm). Every registered analysis has a fit
    row whose note says so. Old code: main said only "no rows", by_dimension "no
    dimension in the data" (there is one), and ordinal, llm_reference and
    leave_one_out had no row at all."""
    from judge_bias.bias.analyses import ANALYSES, NO_REFERENCE, Settings, run_analyses
    from judge_bias.bias.fit_inputs import FACT_COLUMNS

    rows = [
        {"judge": j, "judge_family": j[0], "model": m, "model_family": m[0],
         "prompt_id": f"p{i}", "dataset": "news", "task_type": "qa", "dimension": "d",
         "framing": "positive", "judge_score": float(i % 5),
         "judge_score_norm": (i % 5) / 4, "human_score_norm": None,
         "is_self": j == m, "is_same_family": j[0] == m[0], "length_feature": 0.0}
        for i in range(40) for j in ("A1", "B1") for m in ("A1", "A2", "B1")
    ]  # fmt: skip
    fct = pd.DataFrame(rows, columns=FACT_COLUMNS)
    assert fct["human_score_norm"].notna().sum() == 0
    est, fits = run_analyses(fct, Settings())
    assert len(est) == 0
    assert set(fits["analysis"]) == set(ANALYSES)
    assert fits["notes"].str.contains(NO_REFERENCE, regex=False).all(), fits["notes"].tolist()
    assert not fits["notes"].str.contains("no dimension in the data").any()
    # no fit possible: model_type none on every row (the yml's meaning), and the
    # note not followed by the empty fit's "no estimates: no rows"
    assert (fits["model_type"] == "none").all(), fits[["analysis", "model_type"]]
    assert not fits["notes"].str.contains("no rows").any(), fits["notes"].tolist()


@pytest.mark.parametrize("case", ["inverted", "unreadable"])
def test_labelled_ratings_without_a_positive_frame_score_say_so(case: str) -> None:
    """Human labels on every rated item, but every rating in the inverted frame, or
    every judge output unreadable (judge_score_norm null): ratings do have human
    labels (pandas: 240), so "no judge rating has a human reference" (old note)
    was false; the note names the positive-frame scored ratings the fits read."""
    from judge_bias.bias.analyses import ANALYSES, NO_REFERENCE, Settings, run_analyses
    from judge_bias.bias.fit_inputs import FACT_COLUMNS

    rows = [
        {"judge": j, "judge_family": j[0], "model": m, "model_family": m[0],
         "prompt_id": f"p{i}", "dataset": "news", "task_type": "qa", "dimension": "d",
         "framing": "inverted" if case == "inverted" else "positive",
         "judge_score": None if case == "unreadable" else float(i % 5),
         "judge_score_norm": None if case == "unreadable" else (i % 5) / 4,
         "human_score_norm": (i % 3) / 2,
         "is_self": j == m, "is_same_family": j[0] == m[0], "length_feature": 0.0}
        for i in range(40) for j in ("A1", "B1") for m in ("A1", "A2", "B1")
    ]  # fmt: skip
    fct = pd.DataFrame(rows, columns=FACT_COLUMNS)
    assert fct["human_score_norm"].notna().sum() == 240
    positive_scored = (fct["framing"] == "positive") & fct["judge_score_norm"].notna()
    assert (positive_scored & fct["human_score_norm"].notna()).sum() == 0
    est, fits = run_analyses(fct, Settings())
    assert len(est) == 0 and set(fits["analysis"]) == set(ANALYSES)
    assert fits["notes"].str.contains(NO_REFERENCE, regex=False).all(), fits["notes"].tolist()
    said = "no positive-frame judge score has a human reference"
    assert fits["notes"].str.startswith(said).all(), fits["notes"].tolist()
    assert not fits["notes"].str.contains("no judge rating has").any()


def _two_judges_three_models(dataset, task_type) -> pd.DataFrame:
    """fct_judge_ratings' rows: judges A1 and B1 rate models A1, A2 and B1 on 40
    prompts (240 rows, each with a human reference); prompt i's dataset is
    ``dataset(i)``, no completion length."""
    from judge_bias.bias.fit_inputs import FACT_COLUMNS

    rows = [
        {"judge": j, "judge_family": j[0], "model": m, "model_family": m[0],
         "prompt_id": f"p{i}", "dataset": dataset(i), "task_type": task_type, "dimension": "d",
         "framing": "positive", "judge_score": float(i % 5),
         "judge_score_norm": (i % 5) / 4, "human_score_norm": (i % 3) / 2,
         "is_self": j == m, "is_same_family": j[0] == m[0], "length_feature": None}
        for i in range(40) for j in ("A1", "B1") for m in ("A1", "A2", "B1")
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=FACT_COLUMNS)


def test_fits_without_datasets_task_types_or_lengths_are_no_fit() -> None:
    """Ratings with human references (pandas: 240) but no dataset, no task type and no
    completion length (a folder without prompts' datasets or completions): by_dataset,
    by_task_group and length_controlled have no row to fit (n_obs 0), so model_type
    none (bias_fits' yml: no fit possible), as session 22's no-reference rows; main,
    on the same rows, is an ols fit. Fails on the old fit_bias_regression, whose empty
    fit said ols (seen at 10M: by_dataset's "no dataset in the data")."""
    from judge_bias.bias.analyses import Settings, inputs_from_fact, run_analyses
    from judge_bias.bias.gam import fit_gam

    fct = _two_judges_three_models(lambda i: None, None)
    assert fct["human_score_norm"].notna().sum() == 240
    assert fct[["dataset", "task_type", "length_feature"]].isna().all().all()
    _, fits = run_analyses(fct, Settings())
    by = fits.set_index("analysis")
    for name in ("by_dataset", "by_task_group", "length_controlled"):
        assert (by.loc[name, "model_type"], by.loc[name, "n_obs"]) == ("none", 0), name
    assert "no dataset in the data" in by.loc["by_dataset", "notes"]
    assert (by.loc["main", "model_type"], by.loc["main", "n_obs"]) == ("ols", 240)
    empty = fits[fits["n_obs"].fillna(0) == 0]
    assert (empty["model_type"] != "ols").all(), empty[["analysis", "model_type"]]
    # the GAM's own empty fit likewise (no analysis gives it no rows here)
    stats = inputs_from_fact(fct, "HC0").human.iloc[:0]
    gam = fit_gam(stats, "HC0", 0.9).fit
    assert (gam["model_type"], gam["n_obs"]) == ("none", 0)


def test_fits_skipped_by_the_budget_are_no_fit() -> None:
    """Fits the budget skips (max_fits: by_dataset, llm_reference, leave_one_out; the
    GAM when its reference statistics could not be read) run no fit: model_type none
    with n_obs NULL (bias_fits' yml: no fit possible), as ordinal's skip already said;
    they said ols (mend23b). Fails when _too_many's default is ols again, and when the
    GAM's reference_note row says ols."""
    from judge_bias.bias.analyses import ANALYSES, Settings, inputs_from_fact, run_analyses
    from judge_bias.limits import Budget

    fct = _two_judges_three_models(lambda i: f"ds{i % 2}", "t")
    settings = Settings(budget=Budget(max_fits=1))
    names = ["by_dataset", "llm_reference", "leave_one_out", "main"]
    _, fits = run_analyses(fct, settings, names)
    by = fits.set_index("analysis")
    for name in names[:3]:
        assert by.loc[name, "notes"].startswith(f"skipped: {name} would run"), name
        assert by.loc[name, "model_type"] == "none" and pd.isna(by.loc[name, "n_obs"]), name
    assert (by.loc["main", "model_type"], by.loc["main", "n_obs"]) == ("ols", 240)
    inputs = inputs_from_fact(fct, "HC0")
    inputs.reference_note = "skipped: the reference statistics are over the budget"
    (gam,) = ANALYSES["gam"](inputs, Settings())
    assert (gam.fit["model_type"], gam.fit["n_obs"]) == ("none", None)
    assert gam.fit["notes"] == inputs.reference_note
