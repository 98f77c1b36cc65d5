"""int_human_scores_aggregated's midpoint (the median of one or two labels, computed
without median()'s buffer per completion) against DuckDB's median() itself.

The expression is read from the model's SQL, so a change there is what is tested.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np

MODEL = Path(__file__).resolve().parents[1] / "models/intermediate/int_human_scores_aggregated.sql"


def midpoint_sql() -> str:
    """The model's `case ... end as human_score_midpoint` expression."""
    match = re.search(
        r"(case\s(?:(?!case\s).)*?\send)\s+as human_score_midpoint", MODEL.read_text(), re.S
    )
    assert match, "int_human_scores_aggregated has no human_score_midpoint expression"
    return match.group(1)


def test_midpoint_equals_duckdb_median_on_one_and_two_labels() -> None:
    rng = np.random.default_rng(7)
    n = 100_000
    ordinary = rng.integers(0, 11, size=(n, 2)) / rng.integers(1, 13, size=(n, 1))
    wide = rng.normal(size=(n, 2)) * 10.0 ** rng.integers(-300, 300, size=(n, 1))
    # past the largest double, and subnormals (where DuckDB's interpolation and the
    # midpoint may round apart by the smallest subnormal, 5e-324: the only tolerance)
    extreme = np.array(
        [[9e307, 1.7e308], [-1.7e308, -9e307], [-1.7e308, 1.7e308], [5e-324, 5e-324],
         [5e-324, 1e-323], [0.0, -0.0], [2 / 3, 2 / 3], [1.0, 1.0]]
    )  # fmt: skip
    pairs = np.vstack([ordinary, wide, extreme])
    ones = pairs[:, :1]
    con = duckdb.connect()
    for values, n_labels in ((pairs, 2), (ones, 1)):
        grp = np.repeat(np.arange(len(values)), n_labels)
        con.register("frame", {"g": grp, "s": values.ravel()})
        con.execute(
            "create or replace table labels as select g as grp, s as human_score from frame"
        )
        differ = con.execute(
            f"""
            select count(*), any_value(grp) from (
                select grp, median(human_score) as m, {midpoint_sql()} as mid
                from labels group by grp
            ) where (m is distinct from mid and not abs(m - mid) <= 1e-323) or not isfinite(mid)
            """
        ).fetchall()[0]
        assert differ == (0, None), (n_labels, differ)
