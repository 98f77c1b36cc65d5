"""The bench's synthetic data past pandas' size (judge_bias.bench.runs
write_bench_data_sql): DuckDB writes the same design as the pandas writer, with
its own random numbers, the same on every run."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from scipy import stats

from judge_bias.bench import runs


def _labels(path: Path) -> list[int]:
    rows = duckdb.sql(f"select label, count(*) from '{path}' group by label order by label")
    return [n for _, n in rows.fetchall()]


def test_the_sql_writer_draws_the_design_of_the_pandas_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs.write_agreement_bench_data(tmp_path / "pandas", 144_000, 24_000)
    monkeypatch.setattr(runs, "PANDAS_MAX_RATINGS", 0)  # the same call, DuckDB's writer
    runs.write_agreement_bench_data(tmp_path / "sql", 144_000, 24_000)
    runs.write_agreement_bench_data(tmp_path / "again", 144_000, 24_000)
    for name in ("judge_ratings", "human_annotations"):
        pandas, sql = (tmp_path / d / f"{name}.parquet" for d in ("pandas", "sql"))
        key = (
            "judge, prompt_id, model, dimension"
            if name == "judge_ratings"
            else "prompt_id, model, dimension, annotator_id"
        )
        shape = f"select count(*), count(distinct ({key})), count(distinct prompt_id) from "
        assert (
            duckdb.sql(f"{shape} '{pandas}'").fetchall()
            == duckdb.sql(f"{shape} '{sql}'").fetchall()
        )
        # the same label distribution: a chi-square test of the two writers' counts
        # (1..5 each); p > 0.001 fails one run in a thousand if they were the same
        table = [_labels(pandas), _labels(sql)]
        assert len(table[1]) == 5 and stats.chi2_contingency(table).pvalue > 1e-3
        again = tmp_path / "again" / f"{name}.parquet"
        differ = f"select count(*) from (from '{sql}' except all from '{again}')"
        assert duckdb.sql(differ).fetchall() == [(0,)]  # the same rows on every run
    # the judge's error around the completion's quality: judges and the human
    # correlate as in the pandas data (0.84 at this design), within 0.02
    corr = """
        with j as (select prompt_id, model, dimension, avg(label::int) as jm
                   from '{0}/judge_ratings.parquet' group by all),
        h as (select prompt_id, model, dimension, avg(label::int) as hm
              from '{0}/human_annotations.parquet' group by all)
        select corr(jm, hm) from j join h using (prompt_id, model, dimension)
    """
    a, b = (duckdb.sql(corr.format(tmp_path / d)).fetchall()[0][0] for d in ("pandas", "sql"))
    assert abs(a - b) < 0.02
