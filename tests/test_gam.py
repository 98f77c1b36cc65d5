"""The gam analysis: the engine against statsmodels OLS on a patsy cr() basis built
from the rows, the warehouse's gam fit against the same, and planted biases back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import patsy
import pytest
import statsmodels.api as sm

from judge_bias.bias.analyses import Settings, inputs_from_fact, prepare, run_analyses
from judge_bias.bias.gam import fit_gam, gam_knots, reference_stats_from_rows
from judge_bias.bias.settings import settings_from_config
from judge_bias.bias.sufficient import stats_from_rows
from judge_bias.warehouse.build import BuildResult
from tests.conftest import DEMO_DIR, needs_shared, query

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def df(demo_build: BuildResult) -> pd.DataFrame:
    return prepare(query(demo_build.db_path, "select * from fct_judge_ratings"))


def test_knots_are_quantiles_of_the_distinct_values() -> None:
    values = np.array([0.0, 0.0, 0.0, 0.25, 0.5, 0.5, 1.0, 1.0])  # distinct 0, .25, .5, 1
    np.testing.assert_allclose(gam_knots(values, 3), [0.0, 0.375, 1.0])  # median of 4 values
    np.testing.assert_allclose(gam_knots(values, 9), [0.0, 0.25, 0.5, 1.0])  # all 4


def statsmodels_gam(df: pd.DataFrame, se_type: str, n_knots: int = 5):
    """OLS of rating on the design written out column by column from the rows: judge
    dummies, patsy's cr basis of the reference (first column left out) times each judge,
    self, family and dimension dummies (treatment coding)."""
    distinct = np.unique(df["reference"])
    knots = np.quantile(distinct, np.linspace(0, 1, min(n_knots, len(distinct))))
    basis = np.asarray(
        patsy.dmatrix(
            "cr(reference, knots=inner, lower_bound=lo, upper_bound=hi) - 1",
            {"reference": df["reference"], "inner": knots[1:-1], "lo": knots[0],
             "hi": knots[-1]},
        )
    )[:, 1:]  # fmt: skip
    cols: dict[str, np.ndarray] = {}
    judges = sorted(df["judge"].unique())
    for j in judges:
        cols[f"judge[{j}]"] = (df["judge"] == j).to_numpy(float)
    for j in judges:
        for k in range(basis.shape[1]):
            cols[f"judge[{j}]:cr(reference)[{k + 1}]"] = basis[:, k] * (df["judge"] == j)
    for j in sorted(df.loc[df["is_self"], "judge"].unique()):
        cols[f"self[{j}]"] = (df["is_self"] & (df["judge"] == j)).to_numpy(float)
    for f in sorted(df.loc[df["is_same_family"], "judge_family"].unique()):
        cols[f"family[{f}]"] = (df["is_same_family"] & (df["judge_family"] == f)).to_numpy(float)
    for d in sorted(df["dimension"].unique())[1:]:
        cols[f"dimension[{d}]"] = (df["dimension"] == d).to_numpy(float)
    X = pd.DataFrame(cols)
    kw = {"cov_type": se_type}
    if se_type == "cluster":
        kw["cov_kwds"] = {"groups": pd.factorize(df["prompt_id"])[0]}
    return sm.OLS(df["rating"].to_numpy(float), X).fit(**kw)


def assert_equal_to(ours: pd.DataFrame, ref) -> None:
    ours = ours.set_index("term")
    assert set(ours.index) == set(ref.params.index), set(ours.index) ^ set(ref.params.index)
    ci = ref.conf_int(alpha=0.10)
    for term in ref.params.index:
        np.testing.assert_allclose(ours.loc[term, "estimate"], ref.params[term], rtol=1e-9,
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(ours.loc[term, "std_error"], ref.bse[term], rtol=1e-9,
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(ours.loc[term, ["ci_low", "ci_high"]].to_numpy(float),
                                   ci.loc[term].to_numpy(), rtol=1e-9, atol=1e-12)  # fmt: skip


@pytest.mark.parametrize(
    ("se_type", "grain"), [("HC0", "reference"), ("HC1", "reference"), ("HC3", "row"),
                           ("cluster", "prompt")],
)  # fmt: skip
def test_gam_equals_statsmodels_on_a_patsy_cr_basis(df, se_type, grain) -> None:
    stats = reference_stats_from_rows(df) if grain == "reference" else stats_from_rows(df, grain)
    ours = fit_gam(stats, se_type)
    assert len(ours.estimates) > 0, ours.fit["notes"]
    assert (ours.estimates["term_type"] == "judge_spline").sum() > 0
    assert len(stats) < len(df) / 5 or grain != "reference"  # aggregates, not rows
    assert_equal_to(ours.estimates, statsmodels_gam(df, se_type))
    assert ours.fit["n_obs"] == len(df)


def test_cell_statistics_without_the_reference_key_are_refused(df) -> None:
    out = fit_gam(stats_from_rows(df, "cell"), "HC0")
    assert out.estimates.empty and "different reference values" in out.fit["notes"]


def test_too_few_reference_values_give_a_note(df) -> None:
    two = df.assign(reference=np.where(df["reference"] > 0.5, 1.0, 0.0))
    out = fit_gam(reference_stats_from_rows(two), "HC0")
    assert out.estimates.empty and "2 distinct reference values" in out.fit["notes"]


def test_warehouse_gam_fit_equals_statsmodels(demo_build, df) -> None:
    """bias_estimates' gam rows (HC0 from int_bias_reference_stats) against statsmodels."""
    ours = query(demo_build.db_path, "select * from bias_estimates where analysis = 'gam'")
    assert_equal_to(ours, statsmodels_gam(df, "HC0"))
    fits = query(demo_build.db_path, "select * from bias_fits where analysis = 'gam'")
    assert len(fits) == 1 and "knots at" in fits["notes"].iloc[0]


def test_in_memory_inputs_run_gam_like_the_warehouse(demo_build, df) -> None:
    fct = query(demo_build.db_path, "select * from fct_judge_ratings")
    est, _ = run_analyses(inputs_from_fact(fct), Settings(), ["gam"])
    assert_equal_to(est, statsmodels_gam(df, "HC0"))


def test_gam_knots_var_sets_the_knots(demo_build, df) -> None:
    """The dbt var gam_knots (Settings.gam_knots) reaches the fit: 4 knots equal
    statsmodels on a 4-knot basis, and differ from the 5-knot default; under 3 is refused."""
    fct = query(demo_build.db_path, "select * from fct_judge_ratings")
    settings = settings_from_config({"gam_knots": "4"}.get)
    assert settings.gam_knots == 4 and settings_from_config({"gam_knots": ""}.get).gam_knots == 5
    est, fits = run_analyses(inputs_from_fact(fct), settings, ["gam"])
    assert_equal_to(est, statsmodels_gam(df, "HC0", n_knots=4))
    assert (est["term_type"] == "judge_spline").sum() == 3 * df["judge"].nunique()
    listed = fits["notes"].iloc[0].split("knots at ")[1].split(" (")[0]
    assert len(listed.split(", ")) == 4
    with pytest.raises(ValueError, match="gam_knots must be at least 3"):
        Settings(gam_knots=2)


def test_planted_self_biases_keep_sign_and_significance(demo_build) -> None:
    """Read the planted truth from the simulator's truth.csv: every planted self-bias of
    at least 0.10 in size comes back with its sign and significant in the gam fit."""
    truth = pd.read_csv(DEMO_DIR / "truth.csv", keep_default_na=False)
    planted = truth[(truth["term_type"] == "self") & (truth["note"] == "")]
    planted = planted.set_index("subject")["value"].astype(float)
    est = query(demo_build.db_path, "select * from bias_estimates where analysis = 'gam' "
                "and term_type = 'self'").set_index("judge")  # fmt: skip
    large = planted[planted.abs() >= 0.10]
    assert len(large) >= 3
    for judge, value in large.items():
        row = est.loc[judge]
        assert bool(row["significant"]) and np.sign(row["estimate"]) == np.sign(value), judge
    family = truth[(truth["term_type"] == "family") & (truth["value"].astype(float) != 0)]
    fam = query(demo_build.db_path, "select * from bias_estimates where analysis = 'gam' "
                "and term_type = 'family'").set_index("family")  # fmt: skip
    for f, value in family.set_index("family")["value"].astype(float).items():
        assert bool(fam.loc[f, "significant"]) and np.sign(fam.loc[f, "estimate"]) == np.sign(value)


@needs_shared
@pytest.mark.shared
def test_play_favorites_gam_equals_statsmodels(pf_build: BuildResult) -> None:
    df = prepare(query(pf_build.db_path, "select * from fct_judge_ratings"))
    ours = query(pf_build.db_path, "select * from bias_estimates where analysis = 'gam'")
    assert_equal_to(ours, statsmodels_gam(df, "HC0"))
