"""int_comparison_cross_moments when the PPI strata leave out the dimension
(ppi_strata [same_family]): a unit's own row (its dimension) and the pooled row
(dimension 'all') then centre it on different means, so the SQL must pair each
pooling with its own centring. With the default strata [dimension, same_family] the
two centrings coincide and a swap cannot show (cross11's mutation: no test caught
it). The reference: the pandas cross moments from int_ppi_units. About 60 s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judge_bias.comparisons.units import cross_from_units, pooled_units
from judge_bias.simulate import simulate
from judge_bias.warehouse.build import run_dbt
from tests.conftest import query
from tests.test_comparison_marts import KEYS, MODELS, SIDES, _units

pytestmark = [pytest.mark.dbt]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("comparison_strata")
    data = simulate(root / "data", seed=11, n_prompts=60, label_share=0.3)
    path = root / "sim.duckdb"
    run_dbt(MODELS, path, Path(data), capture=True, dbt_vars={"ppi_strata": ["same_family"]})
    return path


def test_cross_moments_of_strata_without_dimension_equal_the_pandas_ones(db: Path) -> None:
    sql = query(db, "select * from int_comparison_cross_moments")
    units = _units(db)
    assert set(units["stratum"]) == {"same_family=true", "same_family=false"}
    ref = cross_from_units(pooled_units(units))
    keys = [*KEYS, *SIDES]
    merged = sql.merge(ref, on=keys, how="outer", suffixes=("", "_ref"), indicator=True)
    assert (merged["_merge"] == "both").all(), merged["_merge"].value_counts()
    assert (merged["dimension"] == "all").any() and (merged["dimension"] != "all").any()
    for c in ("n_pairs", "ll_yy", "ll_yh", "ll_hy", "ll_hh", "lu_yu", "lu_hu", "ul_uy",
              "ul_uh", "uu_uu", "gg"):  # fmt: skip
        np.testing.assert_allclose(merged[c], merged[f"{c}_ref"], rtol=1e-9, atol=1e-9)
