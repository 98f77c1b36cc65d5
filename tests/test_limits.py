"""Resource limits (judge_bias.limits): each size check skips its fit with a note
naming the var to raise, and a fit inside the limits is unchanged by them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_bias.bias.analyses import ORDINAL_COLUMNS, Settings, run_analyses
from judge_bias.bias.ordinal import fit_ordinal
from judge_bias.bias.regression import Spec, fit_bias_regression
from judge_bias.bias.sufficient import (
    cell_design,
    design_size,
    independent_columns,
    stats_from_rows,
)
from judge_bias.errors import SettingError
from judge_bias.limits import Budget, parse_size


def fact(n_judges: int = 6, n_models: int = 6, n_prompts: int = 40, seed: int = 1) -> pd.DataFrame:
    """A fct_judge_ratings-shaped frame: judges j0.. of which the first n_models are the
    models m0.. as well (j_i = m_i), families of two, one dimension on 1..5."""
    rng = np.random.default_rng(seed)
    judges = [f"m{i}" for i in range(n_judges)]
    models = [f"m{i}" for i in range(n_models)]
    family = {name: f"F{int(name[1:]) // 2}" for name in {*judges, *models}}
    j, m, p = np.meshgrid(judges, models, np.arange(n_prompts), indexing="ij")
    j, m, p = j.ravel(), m.ravel(), p.ravel()
    human = rng.integers(1, 6, len(p)).astype(float)
    score = np.clip(np.rint(human + rng.normal(0, 0.8, len(p)) + 0.7 * (j == m)), 1, 5)
    jf, mf = np.array([family[x] for x in j]), np.array([family[x] for x in m])
    return pd.DataFrame(
        {
            "judge": j, "judge_family": jf, "model": m, "model_family": mf,
            "prompt_id": np.char.add("p", p.astype(str)), "dataset": "d", "task_type": "t",
            "dimension": "quality", "framing": "positive", "judge_score": score,
            "judge_score_norm": (score - 1) / 4, "human_score_norm": (human - 1) / 4,
            "is_self": j == m, "is_same_family": (jf == mf) & (j != m), "length_feature": np.nan,
        }
    )  # fmt: skip


def prepared(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(rating=frame["judge_score_norm"], reference=frame["human_score_norm"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2GB", 2 * 10**9),
        ("512 MiB", 512 * 2**20),
        (" 1.5gb ", 1.5e9),
        ("1000", 1000),
        (64, 64),
        ("1.5GiB", int(1.5 * 2**30)),
        ("7B", 7),
        ("0.5 tb", 5 * 10**11),
    ],  # fmt: skip
)
def test_parse_size(text, expected) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["1.5G", "2g", "512Mi", "1.5 GI", "KB", "1.5.0GB", "-1GB"])
def test_parse_size_refuses_a_unit_without_its_b(text) -> None:
    """A decimal is a size (1.5GB above); a unit without its B was a KeyError (an
    unexpected exit 1): now the SettingError naming memory_budget, as DuckDB's own
    limit refuses 1.5G (duckdb_memory_limit)."""
    with pytest.raises(SettingError, match="memory_budget"):
        parse_size(text)


def test_budget_from_dbt_vars_and_defaults() -> None:
    assert Budget.from_config(None) == Budget() == Budget.from_config("")
    assert Budget().bytes == 2 * 10**9
    got = Budget.from_dbt({"memory_budget": "8GB", "max_fits": "50", "max_ordinal_params": 7}.get)
    assert got == Budget(8 * 10**9, 50, 7)
    with pytest.raises(ValueError, match="memory_budget"):
        Budget.from_config("two gigabytes")
    with pytest.raises(ValueError, match="max_fits"):
        Budget.from_config("2GB", max_fits=0)


def test_the_parameter_cap_follows_the_budget() -> None:
    # p x p float64 matrices, OLS_SQUARE_MATRICES of them, must fit
    assert Budget(8 * 10 * 1000**2).max_ols_params == 1000
    assert Budget(8 * 10 * 1000**2 - 1).max_ols_params == 999
    assert Budget(4 * 10**9).max_ols_params > Budget().max_ols_params


def test_ols_fit_over_the_parameter_cap_is_skipped_with_a_note() -> None:
    data = prepared(fact())
    roomy = fit_bias_regression(data, "main", spec=Spec(dimension_effects=False))
    p = roomy.fit["n_params"]
    assert p == 6 + 6 + 6 + 3 and len(roomy.estimates) == p
    # a budget whose parameter cap is p - 1: the same fit is skipped, nothing estimated
    tight = Budget(8 * 10 * (p - 1) ** 2 + 8 * 10 * (p - 1))
    assert tight.max_ols_params == p - 1
    skipped = fit_bias_regression(data, "main", spec=Spec(False), budget=tight)
    assert skipped.estimates.empty and skipped.fit["n_params"] == p
    # no model fitted: model_type none (bias_fits' yml), the fitted one's is ols
    assert (roomy.fit["model_type"], skipped.fit["model_type"]) == ("ols", "none")
    note = skipped.fit["notes"]
    assert note.startswith("skipped:") and f"{p:,} parameters" in note
    assert "memory_budget" in note and "--vars" in note


def test_ols_fit_over_the_memory_budget_names_the_size_and_the_var() -> None:
    data = prepared(fact())
    note = fit_bias_regression(data, "main", budget=Budget(50_000)).fit["notes"]
    # 1,440 rows of row-grain statistics at 680 bytes each, over 50 kB
    assert "skipped: the OLS fit (21 parameters) would need about 1.0 MB" in note
    assert "over the memory budget of 50 kB" in note and "{memory_budget: 2MB}" in note


def test_analyses_with_more_slices_than_max_fits_are_skipped_with_a_note() -> None:
    frame = fact()
    est, fits = run_analyses(frame, Settings(budget=Budget(max_fits=2)))
    by = fits.set_index(["analysis", "slice"])["notes"]
    # 6 models/judges to leave out and 3 judge families: both over 2
    assert "leave_one_out would run 6 fits" in by[("leave_one_out", "all")]
    assert "{max_fits: 6}" in by[("leave_one_out", "all")]
    assert "llm_reference would run 3 fits (one per judge family)" in by[("llm_reference", "all")]
    assert not est["analysis"].isin(["leave_one_out", "llm_reference"]).any()
    # one slice each: still fitted
    assert {"main", "by_dimension", "without_weakest"} <= set(est["analysis"])
    _, roomy = run_analyses(frame, Settings())
    assert (roomy["analysis"] == "leave_one_out").sum() == 6


def test_ordinal_fit_over_the_parameter_cap_is_refused_before_fitting() -> None:
    frame = fact()
    rows = frame.assign(reference=frame["human_score_norm"])
    counts = rows.groupby(ORDINAL_COLUMNS, as_index=False).size().rename(columns={"size": "n_rows"})
    fitted = fit_ordinal(counts, "ordinal", "quality", 0.9)
    params = fitted.fit["n_params"]  # 20 terms (first judge offset out) + 4 thresholds
    assert params == 20 + 4 and len(fitted.estimates) == 20
    refused = fit_ordinal(counts, "ordinal", "quality", 0.9, Budget(max_ordinal_params=params - 1))
    assert refused.estimates.empty and refused.fit["n_params"] == params
    assert (fitted.fit["model_type"], refused.fit["model_type"]) == ("ordered_logit", "none")
    assert "5 score levels" in refused.fit["notes"]
    assert f"{{max_ordinal_params: {params}}}" in refused.fit["notes"]


def test_a_fit_run_on_no_model_is_labelled_none_whatever_stopped_it() -> None:
    """Every way fit_bias_regression and fit_gam return before fitting (slice too
    small, cluster errors on one prompt, a spline without enough reference values, over
    the budget) labels the fit model_type none, as bias_fits' yml says: a row saying
    ols with no estimate read as a fitted model (session 23's 605-parameter skip)."""
    from judge_bias.bias.gam import fit_gam, reference_stats_from_rows

    data = prepared(fact())
    small = prepared(fact(n_prompts=1)).iloc[::2]  # 18 rows for 18 parameters
    one_prompt = stats_from_rows(data[data["prompt_id"] == "p0"].head(36), "prompt")
    stopped = {
        "too small": fit_bias_regression(small, "main"),
        "one prompt": fit_bias_regression(one_prompt, "main", se_type="cluster"),
        "budget": fit_bias_regression(data, "main", budget=Budget(50_000)),
        "gam budget": fit_gam(reference_stats_from_rows(data), budget=Budget(50_000)),
        "gam knots": fit_gam(reference_stats_from_rows(data.assign(reference=0.5))),
    }
    for why, out in stopped.items():
        assert out.estimates.empty and out.fit["notes"], why
        assert out.fit["model_type"] == "none", (why, out.fit["notes"])
    fitted = fit_bias_regression(data, "main")
    assert fitted.fit["model_type"] == "ols"
    assert fit_gam(reference_stats_from_rows(data)).fit["model_type"] == "ols"
    # n_params as bias_fits' yml words it: the design's size where it was sized before
    # stopping (the fit's own over the budget), 0 where the fit stopped before that
    assert stopped["budget"].fit["n_params"] == fitted.fit["n_params"] > 0
    small_p = stopped["too small"].fit["n_params"]
    assert small_p > 0 and f"for {small_p} parameters" in stopped["too small"].fit["notes"]
    assert stopped["gam budget"].fit["n_params"] > 0
    assert stopped["one prompt"].fit["n_params"] == stopped["gam knots"].fit["n_params"] == 0


def test_design_size_counts_what_cell_design_builds() -> None:
    rng = np.random.default_rng(3)
    frame = prepared(fact(n_judges=8, n_models=5, n_prompts=3))
    frame["dimension"] = rng.choice(["a", "b", "c"], len(frame))
    stats = stats_from_rows(frame, "cell")
    for dims, length in ((True, False), (False, False), (True, True)):
        design = cell_design(stats, dims, length)
        assert design_size(stats, dims, length) == (design.n_cells, len(design.terms))


def _independent_columns_one_solve_per_column(gram: np.ndarray, tol: float = 1e-9) -> list:
    """The definition, spelled out: keep k when 1 - R^2 of column k on the kept earlier
    columns is at least tol."""
    keep: list[int] = []
    for k in range(gram.shape[0]):
        own = gram[k, k]
        resid = own - (
            gram[keep, k] @ np.linalg.solve(gram[np.ix_(keep, keep)], gram[keep, k]) if keep else 0
        )
        if own > 0 and resid > tol * own:
            keep.append(k)
    return keep


@pytest.mark.parametrize("collinear", [False, True])
def test_rank_check_by_cholesky_equals_the_definition(collinear: bool) -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 30))
    if collinear:
        X[:, 5] = X[:, 1] - 2 * X[:, 3]
        X[:, 17] = 0.0
        X[:, 20] = X[:, 19] * 3
    gram = X.T @ X
    got = independent_columns(gram)
    assert got == _independent_columns_one_solve_per_column(gram)
    assert len(got) == (30 - 3 if collinear else 30)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "1.5GB"), ("", "1.5GB"), (" 3GB ", "3GB"), ("3000MB", "3000MB"), ("2GiB", "2GiB")],
)
def test_duckdb_memory_limit_from_the_environment(value, expected, monkeypatch):
    from judge_bias.limits import DUCKDB_MEMORY_ENV, duckdb_memory_limit

    if value is None:
        monkeypatch.delenv(DUCKDB_MEMORY_ENV, raising=False)
    else:
        monkeypatch.setenv(DUCKDB_MEMORY_ENV, value)
    assert duckdb_memory_limit() == expected


@pytest.mark.parametrize("value", ["banana", "-1", "10KB", "2", "1.5 G"])
def test_a_bad_duckdb_memory_limit_names_the_variable(value, monkeypatch):
    """Not a size, or under 256MB (DuckDB would fail on the first large join): a
    SettingError (exit 2) naming the variable, where dbt's traceback named neither."""
    from judge_bias.errors import SettingError
    from judge_bias.limits import DUCKDB_MEMORY_ENV, duckdb_memory_limit

    monkeypatch.setenv(DUCKDB_MEMORY_ENV, value)
    with pytest.raises(SettingError, match=f"{DUCKDB_MEMORY_ENV}=.*at least 256MB"):
        duckdb_memory_limit()


def test_a_bad_duckdb_memory_limit_stops_the_build_before_dbt(tmp_path, monkeypatch):
    from judge_bias.errors import SettingError
    from judge_bias.warehouse import build

    monkeypatch.setenv("JUDGE_BIAS_DUCKDB_MEMORY", "banana")
    with pytest.raises(SettingError, match="JUDGE_BIAS_DUCKDB_MEMORY='banana'"):
        build.build(tmp_path, tmp_path / "w.duckdb")


@pytest.mark.parametrize("value", ["x", "0", "-2", "1.5", "two"])
def test_bad_duckdb_threads_stop_the_build_before_dbt(value, tmp_path, monkeypatch):
    """JUDGE_BIAS_DUCKDB_THREADS not a positive integer: a SettingError naming the
    variable before dbt starts (the hook's compilation error named the hook)."""
    from judge_bias.errors import SettingError
    from judge_bias.glm import dbt as glm_dbt
    from judge_bias.limits import duckdb_threads
    from judge_bias.warehouse import build

    monkeypatch.setenv("JUDGE_BIAS_DUCKDB_THREADS", value)
    with pytest.raises(SettingError, match=f"JUDGE_BIAS_DUCKDB_THREADS='{value}'"):
        build.build(tmp_path, tmp_path / "w.duckdb")
    monkeypatch.setenv("JUDGE_BIAS_DUCKDB_THREADS", " 3 ")
    assert duckdb_threads() == "3"
    assert glm_dbt._threads() == {"threads": 3}  # the GLM units' own connection
    monkeypatch.delenv("JUDGE_BIAS_DUCKDB_THREADS")
    assert duckdb_threads() is None
    assert glm_dbt._threads() == {}


def test_profiles_default_duckdb_memory_is_the_checks():
    """profiles.yml's memory_limit default (dbt run by hand) is limits'
    DEFAULT_DUCKDB_MEMORY (judge-bias build sets the variable from it)."""
    from pathlib import Path

    from judge_bias.limits import DEFAULT_DUCKDB_MEMORY, DUCKDB_MEMORY_ENV

    profiles = (Path(__file__).parents[1] / "profiles.yml").read_text()
    assert f"env_var('{DUCKDB_MEMORY_ENV}', '{DEFAULT_DUCKDB_MEMORY}')" in profiles
