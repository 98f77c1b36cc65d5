"""Judge and human scores of many levels (continuous scores): the correlations'
contingency table is not built past judge_human.MAX_TABLE_CELLS (review19a: 150,000 x
150,000 levels asked for 168 GiB); Pearson and Spearman come from the cells alone,
equal to scipy's on the rows, and Kendall's tau-b and gamma are null with a note."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judge_bias.agreement import judge_human
from judge_bias.agreement.judge_human_sums import judge_human_from_sums


def _pairs(n: int, levels: int, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    human = rng.integers(0, levels, n) / (levels - 1)
    judge = (
        np.clip(human + rng.normal(0, 0.2, n), 0, 1).round(6)
        if levels > 50
        else np.where(rng.random(n) < 0.6, human, rng.integers(0, levels, n) / (levels - 1))
    )
    return pd.DataFrame(
        {
            "judge": rng.choice(["j1", "j2"], n),
            "dimension": "d",
            "prompt_id": [f"p{i}" for i in rng.integers(0, 40, n)],
            "judge_score_norm": judge,
            "human_score_norm": human,
        }
    )


def _distinct(rows: pd.DataFrame) -> pd.DataFrame:
    keys = ["judge", "dimension", "prompt_id", "judge_score_norm", "human_score_norm"]
    return rows.groupby(keys).size().rename("n_rows").reset_index()


def test_past_the_cap_pearson_and_spearman_are_the_tables_and_scipys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same 5-level rows with and without the table (a cap of 10 cells): Pearson
    and Spearman and their intervals equal (1e-12), and equal to scipy's on the rows;
    Kendall's tau-b and gamma (computed with the table) null without it, with a note."""
    rows = _pairs(2_000, 5)
    x, y = rows["judge_score_norm"].to_numpy(), rows["human_score_norm"].to_numpy()
    with_table = judge_human.correlations(x, y)
    assert np.isfinite(with_table["kendall_tau_b"]) and np.isfinite(with_table["gk_gamma"])
    monkeypatch.setattr(judge_human, "MAX_TABLE_CELLS", 10)
    cells = judge_human.correlations(x, y)
    for name in ("pearson", "spearman"):
        for key in (name, f"{name}_ci_low", f"{name}_ci_high"):
            assert cells[key] == pytest.approx(with_table[key], rel=1e-12, abs=1e-15)
    assert cells["pearson"] == pytest.approx(stats.pearsonr(x, y)[0], rel=1e-12)
    assert cells["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], rel=1e-12)
    for name in ("kendall_tau_b", "gk_gamma"):
        assert all(np.isnan(cells[k]) for k in (name, f"{name}_ci_low", f"{name}_ci_high"))
    assert "5 x 5 score levels" in cells[judge_human.TABLE_SKIPPED]


def test_continuous_scores_build_no_table_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Continuous judge scores against 1,000 human levels, some pairs twice (weights):
    past the cap (the build's memory_budget for the warehouse's route; the default
    for the rows' route; here 100,000 cells) both judge_human routes have n,
    Pearson, Spearman, their intervals and design effects equal to the table
    route's (1e-12), Pearson and Spearman equal to scipy's on the rows, null
    Kendall and gamma, the note, and no column beyond the mart's."""
    cap = judge_human.MAX_TABLE_CELLS * judge_human.TABLE_CELL_BYTES
    assert judge_human.Budget().bytes // 4 >= cap
    rows = _pairs(4_000, 1_000)
    rows = pd.concat([rows, rows.sample(frac=0.3, random_state=1)], ignore_index=True)
    distinct = _distinct(rows)
    assert distinct["n_rows"].max() > 1
    table_sums = judge_human_from_sums(duckdb.connect().from_df(distinct))
    table_plain = judge_human.judge_human_agreement(distinct)
    assert table_sums["kendall_tau_b"].notna().all()  # under the default cap: the table
    small = judge_human.Budget(bytes=4 * judge_human.TABLE_CELL_BYTES * 100_000)
    sums = judge_human_from_sums(duckdb.connect().from_df(distinct), small)
    monkeypatch.setattr(judge_human, "MAX_TABLE_CELLS", 100_000)
    plain = judge_human.judge_human_agreement(distinct)
    same = ["n", "n_prompts"] + [
        f"{c}{suffix}"
        for c in ("pearson", "spearman")
        for suffix in ("", "_ci_low", "_ci_high", "_design_effect")
    ]
    for mart, table in ((sums, table_sums), (plain, table_plain)):
        assert judge_human.TABLE_SKIPPED not in mart.columns
        assert list(mart.columns) == list(table.columns)
        pd.testing.assert_frame_equal(mart[same], table[same], rtol=1e-12, check_dtype=False)
        got = mart[mart["dimension"] == "d"].set_index("judge")
        for judge, part in rows.groupby("judge"):
            x, y = part["judge_score_norm"], part["human_score_norm"]
            assert got.loc[judge, "pearson"] == pytest.approx(stats.pearsonr(x, y)[0], rel=1e-10)
            spearman = stats.spearmanr(x, y)[0]
            assert got.loc[judge, "spearman"] == pytest.approx(spearman, rel=1e-10)
            assert np.isnan(got.loc[judge, "kendall_tau_b"])
            assert np.isnan(got.loc[judge, "gk_gamma"])
            assert "kendall_tau_b and gk_gamma null" in got.loc[judge, "notes"]
            assert "over 100,000 cells" in got.loc[judge, "notes"]
            assert "no interval for kendall" not in got.loc[judge, "notes"]
