"""judge_drift, judge_stability and agreement_binary count their rows before reading
them: over the memory_budget var each mart gets one row per key with the note and
no statistics (as every other Python mart), within it the same table as before.
Old code: the rows were read whole (to_pandas) whatever the budget."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from judge_bias.drift import marts
from judge_bias.drift.settings import DriftSettings
from judge_bias.drift.stability import judge_stability_mart
from judge_bias.drift.versions import judge_drift_mart
from judge_bias.stats import binary_cells
from judge_bias.stats.binary_agreement import agreement_binary_mart

ITEMS = """select * from (values
    ('j@1', 'd', 'p1', 'm', 'positive', 0.2, 0.5), ('j@2', 'd', 'p1', 'm', 'positive', 0.7, 0.5),
    ('j@1', 'd', 'p2', 'm', 'positive', 0.4, 1.0), ('j@2', 'd', 'p2', 'm', 'positive', 0.4, 1.0),
    ('j@1', 'd', 'p3', 'm', 'positive', 1.0, 0.0), ('j@2', 'd', 'p3', 'm', 'positive', 0.9, 0.0)
) t(judge, dimension, prompt_id, model, framing, judge_score_norm, human_score_norm)"""
STABILITY = """select 'j' as judge, 'd' as dimension, 'p' || i as prompt_id, 'm' as model,
    'positive' as framing, 2 as n_runs, 0.5 as mean_score, 0.02 as ss,
    0.5 as discordant_share, 0 as n_pass, 4 as sum_sq_counts, 0.4 as min_score,
    0.6 as max_score from range(4) r(i)"""
BINARY = """select 'j' as judge, 'd' as dimension, 'p' || (i % 3) as prompt_id,
    (i % 2)::double as judge_score_norm, (i % 3 > 0)::int::double as human_score_norm,
    1 as n_rows from range(12) r(i)"""


@pytest.fixture(scope="module")
def ref():
    con = duckdb.connect()
    con.execute(f"create table int_drift_items as {ITEMS}")
    con.execute(
        "create table int_judge_versions as select 'j@1' as judge_before, 'j@2' as judge_after"
    )
    con.execute(f"create table int_stability_items as {STABILITY}")
    con.execute(f"create table int_agreement_binary_ratings as {BINARY}")
    yield con.table
    con.close()


def _get(budget: str):
    return {"memory_budget": budget, "n_boot": 50}.get


@pytest.mark.parametrize(
    ("mart", "key"),
    [
        (marts.judge_drift, ["judge_before", "judge_after", "dimension"]),
        (marts.judge_stability, ["judge", "dimension"]),
        (marts.agreement_binary, ["judge", "dimension"]),
    ],
)
def test_over_the_budget_one_row_per_key_with_the_note(ref, mart, key) -> None:
    out = mart(ref, _get("1KB"))
    assert len(out) == 1, out
    assert out["notes"].iloc[0].startswith("skipped: reading ")
    assert "memory_budget" in out["notes"].iloc[0]
    assert out[key].notna().all().all()
    assert out["ci_level"].iloc[0] == pytest.approx(DriftSettings().ci_level)
    if "drift_flag" in out:
        assert out["drift_flag"].iloc[0] is False or not out["drift_flag"].iloc[0]


def test_within_the_budget_the_tables_are_unchanged(ref) -> None:
    s = DriftSettings(n_boot=50)
    items = ref("int_drift_items").df()
    pd.testing.assert_frame_equal(
        marts.judge_drift(ref, _get("")),
        judge_drift_mart(items, ref("int_judge_versions").df(), s),
    )
    pd.testing.assert_frame_equal(
        marts.judge_stability(ref, _get("")),
        judge_stability_mart(ref("int_stability_items").df(), s),
    )
    rows = ref("int_agreement_binary_ratings").df()
    pd.testing.assert_frame_equal(
        marts.agreement_binary(ref, _get("")),
        agreement_binary_mart(
            rows, pass_threshold=s.pass_threshold, level=s.ci_level, n_boot=50, seed=s.seed
        ),
    )


# judge k rates one of the three prompts: 4 judge x dimension x prompt cells, while
# the groups times the prompts are 6
TWO_JUDGES = f"""{BINARY} union all
select 'k', 'd', 'p0', (i % 2)::double, 1.0, 1 from range(8) r(i)"""


def test_binary_budget_bounds_first_the_exact_counts_decide(monkeypatch) -> None:
    """agreement_binary checks cheap bounds of its cells (cell_bounds: at least
    pandas' distinct judge x dimension x prompt, the prompts exact) and counts the
    cells exactly only when the bounds are over the budget: a budget between the
    exact need (2 x 4 cells x CELL_BYTES + 50 x 3 weights x 8 B = 2096 B) and the
    bounds' (2544 B) computes the mart, as the exact count alone did; within the
    bounds no exact count runs."""
    con = duckdb.connect()
    con.execute(f"create table int_agreement_binary_ratings as {TWO_JUDGES}")
    rows = con.table("int_agreement_binary_ratings").df()
    cells, prompts = binary_cells.cell_bounds(con.table("int_agreement_binary_ratings"))
    assert (cells, prompts) == (6, rows["prompt_id"].nunique())
    assert cells >= len(rows.drop_duplicates(["judge", "dimension", "prompt_id"])) == 4
    s = DriftSettings(n_boot=50)
    want = agreement_binary_mart(
        rows, pass_threshold=s.pass_threshold, level=s.ci_level, n_boot=50, seed=s.seed
    )
    between = marts.agreement_binary(con.table, _get("2200B"))
    pd.testing.assert_frame_equal(between, want)
    assert (
        marts.agreement_binary(con.table, _get("2000B"))["notes"]
        .str.startswith("skipped: reading 4 per-prompt sums")
        .all()
    )

    def no_count(relation):
        raise AssertionError("exact count within the bounds")

    monkeypatch.setattr(marts, "cell_counts", no_count)
    pd.testing.assert_frame_equal(marts.agreement_binary(con.table, _get("2600B")), want)


def test_binary_cell_bounds_count_a_null_prompt_as_a_cell() -> None:
    """Rows without a prompt_id are one cell of their group (cell_counts' distinct
    triples), not one of the distinct prompts: the bounds cover the exact cells."""
    con = duckdb.connect()
    rel = con.sql(
        "select 'j' as judge, d as dimension, null::varchar as prompt_id, 0.5 as "
        "judge_score_norm, 0.5 as human_score_norm, 1 as n_rows from "
        "(values ('a'), ('a'), ('b'), ('b')) t(d)"
    )
    rows = rel.df()
    exact = len(rows.drop_duplicates(["judge", "dimension", "prompt_id"]))
    assert binary_cells.cell_counts(rel) == (exact, 0) == (2, 0)
    cells, prompts = binary_cells.cell_bounds(rel)
    assert cells >= exact and prompts == 0
