"""model_comparisons and label_budget built by dbt on simulated data with 30% of the
human labels kept: the SQL cross moments (int_comparison_cross_moments) equal the
pandas ones (judge_bias.comparisons.units, from int_ppi_units), and the marts equal
the package's functions on them. About 60 s (a partial build)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_bias.comparisons.budget import budget_rows
from judge_bias.comparisons.paired import KEYS, differences
from judge_bias.comparisons.units import cross_from_units, pooled_units
from judge_bias.simulate import simulate
from judge_bias.warehouse.build import run_dbt
from tests.conftest import query

pytestmark = [pytest.mark.dbt]
MODELS = ["build", "-s", "+model_comparisons", "+label_budget"]
SIDES = ["first_model", "first_stratum", "second_model", "second_stratum"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("comparisons")
    data = simulate(root / "data", seed=7, n_prompts=60, label_share=0.3)
    path = root / "sim.duckdb"
    run_dbt(MODELS, path, Path(data), capture=True)
    return path


def _units(db: Path) -> pd.DataFrame:
    u = query(db, "select * from int_ppi_units where status in ('labelled', 'unlabelled')")
    u["y"] = u["y"].where(u["status"] == "labelled")
    return u


def test_cross_moments_equal_the_pandas_ones(db: Path) -> None:
    sql = query(db, "select * from int_comparison_cross_moments")
    ref = cross_from_units(pooled_units(_units(db)))
    keys = [*KEYS, *SIDES]
    merged = sql.merge(ref, on=keys, how="outer", suffixes=("", "_ref"), indicator=True)
    assert (merged["_merge"] == "both").all(), merged["_merge"].value_counts()
    assert (sql["lu_yu"] != 0).any() and (sql["uu_uu"] != 0).any()  # both label statuses
    for c in ("n_pairs", "ll_yy", "ll_yh", "ll_hy", "ll_hh", "lu_yu", "lu_hu", "ul_uy",
              "ul_uh", "uu_uu", "gg"):  # fmt: skip
        np.testing.assert_allclose(merged[c], merged[f"{c}_ref"], rtol=1e-9, atol=1e-9)


def test_marts_equal_the_package_functions(db: Path) -> None:
    moments = query(db, "select * from int_ppi_stratum_moments")
    cross = query(db, "select * from int_comparison_cross_moments")
    mart = query(db, "select * from model_comparisons")
    ref = differences(moments, cross, 0.90)
    keys = [*KEYS, "model_a", "model_b"]
    merged = mart.merge(ref, on=keys, suffixes=("", "_ref"))
    assert len(merged) == len(mart) == len(ref) > 0
    for c in ("difference", "std_error", "p_value_holm", "judge_only_difference"):
        np.testing.assert_allclose(merged[c], merged[f"{c}_ref"], rtol=1e-9, atol=1e-12)
    assert mart["difference"].notna().all()
    # the adjustments are within a judge x dimension and never below the raw p-value
    assert (mart["p_value_holm"] >= mart["p_value"] - 1e-15).all()
    assert (mart["p_value_bh"] <= mart["p_value_holm"] + 1e-15).all()
    budget = query(db, "select * from label_budget")
    rows = budget_rows(moments, 0.05, 0.90).set_index(["model", "dimension"])
    got = budget.set_index(["model", "dimension"]).loc[rows.index]
    np.testing.assert_array_equal(got["labels_needed_human_only"], rows["labels_needed_human_only"])
    assert (budget["labels_needed"].dropna() <= budget["n_units"].max()).all()
