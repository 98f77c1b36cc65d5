"""The Parquet route's rows reconciled apart from the loader (the file's footer), and
a damaged Parquet file named in one line with the input error's exit code."""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judge_bias.errors import InputError
from judge_bias.inputs import loading
from judge_bias.inputs.summary import FileCounts
from judge_bias.warehouse.build import build, check_file_rows
from judge_bias.warehouse.dbt_child import BuildError, unreadable_input
from tests.conftest import DEMO_DIR


def _ratings(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "judge": ["j1", "j2"] * (n // 2),
            "prompt_id": [f"p{i}" for i in range(n)],
            "model": ["m"] * n,
            "dimension": ["d"] * n,
            "label": [str(i % 5) for i in range(n)],
        }
    )


def _counts(read: int, accepted: int, rejected: int, **gate) -> list[FileCounts]:
    return [FileCounts("judge_ratings", "x", read, accepted, rejected, None, None, None, **gate)]


@pytest.mark.parametrize("native", [True, False])
def test_the_footer_count_is_the_rows_loaded_over_row_groups(
    native: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """parquet_rows reads the footer (every row group), apart from either reader: on
    a file of 7 row groups it is the rows written and the rows each route loads."""
    n = 20_001  # 20,000 rows
    path = tmp_path / "judge_ratings.parquet"
    pq.write_table(pa.Table.from_pandas(_ratings(n - 1)), path, row_group_size=3_000)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 7
    assert (
        loading.parquet_rows(path)
        == n - 1
        == sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    )
    if not native:
        monkeypatch.setattr(loading, "_native_parquet", lambda *args: None)
    loaded = loading.load_input(duckdb.connect(), tmp_path, "judge_ratings")
    assert loaded.aggregate("count(*)").fetchall() == [(n - 1,)]
    check_file_rows(tmp_path, _counts(n - 1, n - 11, 10))  # agrees: no error


def test_rows_lost_or_added_after_the_file_fail_naming_it(tmp_path: Path) -> None:
    """A build whose rows read, or rows accounted for, differ from the footer's count
    fails naming the file; on an incremental build this load's rows are compared."""
    path = tmp_path / "judge_ratings.parquet"
    _ratings(10).to_parquet(path, row_group_size=3)
    for counts in (_counts(9, 9, 0), _counts(11, 11, 0), _counts(10, 9, 0)):
        with pytest.raises(
            BuildError, match=r"judge_ratings.parquet: its Parquet footer counts 10"
        ):
            check_file_rows(tmp_path, counts)
    # incremental: the base table holds earlier loads' rows too; this load's are judged
    check_file_rows(tmp_path, _counts(25, 20, 5, gate_scope="load b", gate_rows_read=10))
    with pytest.raises(BuildError, match=r"read 9 in load b"):
        check_file_rows(tmp_path, _counts(25, 20, 5, gate_scope="load b", gate_rows_read=9))
    check_file_rows(None, _counts(9, 9, 0))  # the relation route: no file
    (tmp_path / "judge_ratings.parquet").unlink()
    _ratings(10).to_csv(tmp_path / "judge_ratings.csv", index=False)
    check_file_rows(tmp_path, _counts(9, 9, 0))  # CSV: the loader's own count


def _as_parquet(data: Path) -> Path:
    """The demo's judge_ratings as a Parquet file of 4 row groups."""
    frame = pd.read_csv(data / "judge_ratings.csv", dtype=str, keep_default_na=False)
    (data / "judge_ratings.csv").unlink()
    path = data / "judge_ratings.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path,
                   row_group_size=len(frame) // 4 + 1)  # fmt: skip
    return path


DROP_A_ROW = """
import judge_bias.inputs.loading as loading
_load = loading._load_parquet
loading._load_parquet = lambda con, path, spec: _load(con, path, spec).filter("_row_number <> 2")
"""


@pytest.mark.dbt
def test_a_loader_that_drops_a_row_fails_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet loader that loses one row (patched into dbt's child by a
    sitecustomize) fails the build at the input gates, naming the file: the loader's
    table, rejected_rows and input_row_counts all agree with each other then. A mart
    of an earlier build is dropped, as after a failed gate (review17b: it was left
    beside the new inputs)."""
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        con.execute("create table main.bias_estimates as select 1 as stale")
    data = tmp_path / "data"
    shutil.copytree(DEMO_DIR, data)
    path = _as_parquet(data)
    footer = loading.parquet_rows(path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(DROP_A_ROW), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    with pytest.raises(BuildError, match=rf"footer counts {footer:,} rows, but the build read "
                       rf"{footer - 1:,} and accounted for {footer - 1:,}"):  # fmt: skip
        build(data, tmp_path / "w.duckdb", quiet=True)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        tables = {t for (t,) in con.execute("select table_name from duckdb_tables()").fetchall()}
    assert "bias_estimates" not in tables and "input_row_counts" in tables


def _damage_a_page(path: Path) -> None:
    """Overwrite the pages of one column chunk of the third row group (the footer kept)."""
    chunk = pq.ParquetFile(path).metadata.row_group(2).column(1)
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start : start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    path.write_bytes(data)


@pytest.mark.dbt
@pytest.mark.parametrize("damage", ["page", "truncated"])
def test_a_damaged_parquet_file_is_an_input_error_naming_it(damage: str, tmp_path: Path) -> None:
    """A data page that does not decode (the footer valid: DuckDB's reader fails only
    when dbt writes the loader's table) and a truncated file (no footer: refused
    before dbt) are InputErrors naming the file (exit 2), not DuckDB's bare message."""
    data = tmp_path / "data"
    shutil.copytree(DEMO_DIR, data)
    path = _as_parquet(data)
    if damage == "page":
        _damage_a_page(path)
        assert loading.parquet_columns(path)  # the footer still reads
    else:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    named = rf"^{re.escape(str(path))}: .*(write the file again|write it again)$"
    with pytest.raises(InputError, match=named):
        build(data, tmp_path / "w.duckdb", quiet=True)


def test_only_a_loaders_failure_on_its_damaged_parquet_file_names_the_file(
    tmp_path: Path,
) -> None:
    """Named only when pyarrow fails reading the file too (review17b: a loader's bug,
    a clock refusal, a memory error on a good file were reported as a damaged file)."""
    path = tmp_path / "judge_ratings.parquet"
    pq.write_table(pa.Table.from_pandas(_ratings(400)), path, row_group_size=100)
    _ratings(2).to_csv(tmp_path / "prompts.csv", index=False)
    cause = "_duckdb.Error: don't know what type: "
    bug = "AttributeError: 'NoneType' object has no attribute 'fetch_arrow_table'"
    for good_file_cause in (cause, bug):  # the file reads whole: not the file's failure
        assert (
            unreadable_input("model base_inputs__judge_ratings", good_file_cause, tmp_path) is None
        )
    _damage_a_page(path)
    got = unreadable_input("model base_inputs__judge_ratings", cause, tmp_path)
    assert got is not None and str(got).startswith(f"{path}: "), got
    assert "pyarrow: " in str(got)
    assert unreadable_input("model base_inputs__prompts", cause, tmp_path) is None  # CSV
    assert unreadable_input("model base_inputs__models", cause, tmp_path) is None  # absent
    assert unreadable_input("model int_judge_ratings_checked", cause, tmp_path) is None
    oom = "Out of Memory Error: could not allocate block of size 256.0 KiB"
    assert unreadable_input("model base_inputs__judge_ratings", oom, tmp_path) is None


def test_the_importers_footer_count_is_the_loaders_or_none(tmp_path: Path) -> None:
    """One footer reader (loading.parquet_rows) behind the importers' and doctor's
    count: the rows pyarrow's reader yields for a Parquet file, None (no error) for a
    CSV file or a truncated Parquet file, where the loader's count raises InputError."""
    from judge_bias.inputs.importers._records import parquet_rows as importer_rows

    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pandas(_ratings(1_000)), path, row_group_size=300)
    assert importer_rows(path) == loading.parquet_rows(path) == len(pq.read_table(path)) == 1_000
    csv = tmp_path / "r.csv"
    _ratings(10).to_csv(csv, index=False)
    truncated = tmp_path / "t.parquet"
    truncated.write_bytes(path.read_bytes()[:200])
    for bad in (csv, truncated, tmp_path / "absent.parquet"):
        assert importer_rows(bad) is None
        with pytest.raises(InputError, match=re.escape(str(bad))):
            loading.parquet_rows(bad)
