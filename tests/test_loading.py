"""The loader reads every input record, keeps row numbers and never drops a row."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from judge_bias.errors import InputError
from judge_bias.inputs.loading import check_inputs, load_input

HEADER = "judge,prompt_id,model,dimension,label\n"


def _load(data_dir: Path, kind: str = "judge_ratings") -> pd.DataFrame:
    con = duckdb.connect()
    return load_input(con, data_dir, kind).df().sort_values("_row_number")


def test_quotes_newlines_bom_and_extra_columns(tmp_path: Path) -> None:
    text = (
        "\ufeffJudge , prompt_id,model,dimension,label,note\n"
        'j1,p1,"m ""quoted""; drop table x;",d,"multi\nline",first\n'
        "j2,p2,m2,d,3,second\n"
    )
    (tmp_path / "judge_ratings.csv").write_text(text, encoding="utf-8")
    df = _load(tmp_path)
    assert list(df["_row_number"]) == [1, 2]
    assert df["judge"].tolist() == ["j1", "j2"]
    assert df["model"].iloc[0] == 'm "quoted"; drop table x;'
    assert df["label"].iloc[0] == "multi\nline"
    assert df["note"].tolist() == ["first", "second"]  # extra columns are kept
    assert df["raw_output"].isna().all()  # absent optional contract column


def test_malformed_records_keep_their_row_numbers(tmp_path: Path) -> None:
    lines = ["j1,p1,m,d,1", "j2,p2,m,d,1,EXTRA", "j3,p3,m,d,2", "short", "j5,p5,m,d,3"]
    (tmp_path / "judge_ratings.csv").write_text(HEADER + "\n".join(lines) + "\n")
    df = _load(tmp_path)
    assert list(df["_row_number"]) == [1, 2, 3, 4, 5]
    bad = df[df["_parse_error"].notna()]
    assert bad["_row_number"].tolist() == [2, 4]
    assert bad["_raw_line"].tolist() == ["j2,p2,m,d,1,EXTRA", "short"]
    good = df[df["_parse_error"].isna()]
    # each good record is matched to its own line
    assert dict(zip(good["_row_number"], good["judge"], strict=True)) == {
        1: "j1",
        3: "j3",
        5: "j5",
    }


def test_missing_required_column_names_file_and_column(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text("judge,prompt_id,dimension,label\nj,p,d,1\n")
    with pytest.raises(InputError, match=r"judge_ratings\.csv: missing required column.*'model'"):
        _load(tmp_path)


def test_label_or_raw_output_required(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text("judge,prompt_id,model,dimension\nj,p,m,d\n")
    with pytest.raises(InputError, match="label.*raw_output"):
        _load(tmp_path)


def test_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text("")
    with pytest.raises(InputError, match=r"judge_ratings\.csv: the file is empty"):
        _load(tmp_path)


def test_header_only_file_gives_zero_rows(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER)
    assert len(_load(tmp_path)) == 0


def test_absent_optional_file_gives_empty_typed_table(tmp_path: Path) -> None:
    con = duckdb.connect()
    rel = load_input(con, tmp_path, "completions")
    assert rel.columns[:4] == ["_row_number", "_source_file", "_parse_error", "_raw_line"]
    assert rel.columns[4:] == ["prompt_id", "model", "completion_text", "length_tokens"]
    assert len(rel.df()) == 0


def test_absent_required_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="required file judge_ratings.csv"):
        _load(tmp_path)


def test_parquet_is_read_like_csv(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"judge": ["a", "b"], "prompt_id": ["p", "q"], "model": ["m", "m"]}
        | {"dimension": ["d", "d"], "label": [1.5, 2.0]}
    )
    frame.to_parquet(tmp_path / "judge_ratings.parquet")
    df = _load(tmp_path)
    assert df["_row_number"].tolist() == [1, 2]
    assert df["label"].tolist() == ["1.5", "2.0"]


def test_csv_and_parquet_together_is_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER)
    (tmp_path / "judge_ratings.parquet").write_bytes(b"")
    with pytest.raises(InputError, match="keep one of them"):
        _load(tmp_path)


def test_path_with_quotes_and_semicolons(tmp_path: Path) -> None:
    data = tmp_path / "it's; drop table x; --"
    data.mkdir()
    (data / "judge_ratings.csv").write_text(HEADER + "j,p,m,d,1\n")
    df = _load(data)
    assert df["_source_file"].iloc[0] == str(data / "judge_ratings.csv")


def test_mixed_line_ends_and_gzip(tmp_path: Path) -> None:
    import gzip

    text = HEADER.replace("\n", "\r\n") + "j1,p1,m,d,1\nj2,p2,m,d,2\r\nj3,p3,m,d,3\n"
    (tmp_path / "judge_ratings.csv.gz").write_bytes(gzip.compress(text.encode()))
    df = _load(tmp_path)
    assert df["judge"].tolist() == ["j1", "j2", "j3"]
    assert df["_parse_error"].isna().all()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (HEADER.encode("utf-16"), "looks like UTF-16 text"),
        (HEADER.encode("utf-16-le"), r"UTF-16 \(little-endian\) text without a byte order mark"),
        (HEADER.encode("utf-16-be"), r"UTF-16 \(big-endian\) text without a byte order mark"),
        (b"PK\x03\x04" + bytes(100), "zip archive"),
        # mtime=0: the same parameter id in every process (pytest-xdist compares them)
        (__import__("gzip").compress(HEADER.encode(), mtime=0), "gzip-compressed but named"),
        (
            (HEADER + "j,p,m,d,1\nj,p2,caf\xe9,d,1\n").encode("latin-1"),
            r"at line 3 \(byte offset 56, counted from 0\).*Latin-1",  # 38 + 10 + 8 bytes
        ),
    ],
)
def test_files_that_are_not_utf8_csv_say_what_they_look_like(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "judge_ratings.csv").write_bytes(content)
    with pytest.raises(InputError, match=message):
        _load(tmp_path)
    with pytest.raises(InputError, match=message):
        check_inputs(tmp_path)


def test_duplicate_column_names_are_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER.strip() + ",Judge\nj,p,m,d,1,k\n")
    with pytest.raises(
        InputError, match=r"'judge' appears twice in the header \(columns 1 and 6\)"
    ):
        _load(tmp_path)


def test_tsv_and_semicolon_are_opt_in_per_file(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER.replace(",", "\t") + "j;1\tp\tm\td\t1\n")
    con = duckdb.connect()
    df = load_input(con, tmp_path, "judge_ratings", {"judge_ratings": "tsv"}).df()
    assert df["judge"].tolist() == ["j;1"] and df["label"].tolist() == ["1"]
    # without the opt-in the header is one column: the contract columns are missing
    with pytest.raises(InputError, match="missing required column"):
        _load(tmp_path)
    with pytest.raises(InputError, match="csv_dialects: ratings is not an input file kind"):
        load_input(con, tmp_path, "judge_ratings", "{'ratings': 'tsv'}")


def test_folder_check_warns_of_stray_files_and_near_miss_columns(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER)
    (tmp_path / "human_annotations.CSV").write_text("x\n")
    (tmp_path / "human_annotation.csv").write_text("x\n")
    (tmp_path / "truth.csv").write_text("x\n")
    (tmp_path / "pairwise_judgments.csv").write_text(
        "judge,prompt_id,model_first,model_second,verdict,human_verdct\n"
    )
    # a warehouse built into the data folder (docs/importers.md: --db DIR/w.duckdb) is not input
    for own in ("w.duckdb", "w.bi.duckdb", "w.build.json", "w.validation.json"):
        (tmp_path / own).write_text("")
    (tmp_path / "w.dbt").mkdir()
    warnings = check_inputs(tmp_path)
    text = "\n".join(warnings)
    assert len(warnings) == 3, text
    assert "human_annotations.CSV: not an input file of the contract, not read" in text
    assert "did you mean 'human_annotations.csv'" in text
    assert "human_annotation.csv" in text and "truth.csv" not in text
    assert "column 'human_verdct' is not a contract column" in text
    assert "did you mean 'human_verdict'?" in text


def test_optional_file_that_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "judge_ratings.csv").write_text(HEADER)
    (tmp_path / "human_annotations.csv").mkdir()
    with pytest.raises(InputError, match="human_annotations.csv: is a directory"):
        check_inputs(tmp_path)
    with pytest.raises(InputError, match="is a directory"):
        _load(tmp_path, "human_annotations")
    (tmp_path / "human_annotations.csv").rmdir()
    (tmp_path / "human_annotations.csv").symlink_to(tmp_path / "human_annotations.csv")
    with pytest.raises(InputError, match="broken or looping symbolic link"):
        check_inputs(tmp_path)


def test_review_cases_damaged_gzip_nul_values_and_end_of_file(tmp_path: Path) -> None:
    """Cases an independent review found: a gzip file damaged after its first
    block, NULs inside a value (not UTF-16), a character cut at the end of file,
    CR-only line ends in the error's line number, a bare dialect name."""
    import gzip

    from judge_bias.inputs.loading import dialect_for

    body = HEADER + "".join(f"j,p{i},m,d,{i % 5}\n" for i in range(40_000))
    packed = gzip.compress(body.encode())
    for data in (packed[:-100], packed + b"garbage"):
        (tmp_path / "judge_ratings.csv.gz").write_bytes(data)
        with pytest.raises(InputError, match="damaged or truncated gzip file"):
            _load(tmp_path)
    (tmp_path / "judge_ratings.csv.gz").unlink()
    (tmp_path / "judge_ratings.csv").write_bytes(
        HEADER.encode() + b'j,p1,m,d,"' + b"\x00" * 200 + b'"\n'
    )
    assert _load(tmp_path)["label"].tolist() == ["\x00" * 200]
    (tmp_path / "judge_ratings.csv").write_bytes(HEADER.encode() + b"j,p1,m,d,caf\xc3")
    with pytest.raises(InputError, match=r"line 2 \(byte offset 50.*0xC3"):
        _load(tmp_path)
    cr = HEADER.replace("\n", "\r").encode() + b"j,p1,m,d,1\rj,p2,m,d,caf\xe9\r"
    (tmp_path / "judge_ratings.csv").write_bytes(cr)
    with pytest.raises(InputError, match=r"at line 3 \(byte offset 61"):
        _load(tmp_path)
    with pytest.raises(InputError, match="is not a mapping of file kind"):
        dialect_for("tsv", "judge_ratings")


def test_a_fault_at_the_end_of_a_quoted_multi_line_value_is_one_bad_record(tmp_path) -> None:
    """The quotes balance; only a space after the closing quote is wrong. No line
    from inside the value may come through as a record of its own."""
    text = HEADER + 'j,p1,m,d,"said:\nj,INJ,m,d,5\nok" \nj,p2,m,d,2\n'
    (tmp_path / "judge_ratings.csv").write_text(text)
    df = _load(tmp_path)
    assert df["_row_number"].tolist() == [1, 2]
    assert df["prompt_id"].tolist()[1] == "p2" and "INJ" not in df["prompt_id"].tolist()
    bad = df.iloc[0]
    assert "record from line 2, error on line 4" in bad["_parse_error"]
    assert bad["_raw_line"] == 'j,p1,m,d,"said:\nj,INJ,m,d,5\nok" '


def test_many_bad_records_are_stored_fast(tmp_path: Path) -> None:
    """252,000 records one field short: one rejected row each, in seconds (the
    bad records go to DuckDB as one Arrow table, not row by row)."""
    import time

    lines = "".join(f"j,p{i},m,d\n" for i in range(252_000))
    (tmp_path / "judge_ratings.csv").write_text(HEADER + lines)
    start = time.perf_counter()
    df = _load(tmp_path)
    assert len(df) == 252_000 and df["_parse_error"].notna().all()
    assert time.perf_counter() - start < 60  # was 253 s; about 1 s here


def test_parquet_path_is_not_a_glob_pattern(tmp_path: Path) -> None:
    """DuckDB's reader takes a path as a glob: a folder named data[1] would read
    data1's file. The loader streams the file itself."""
    frame = {"judge": ["x"], "prompt_id": ["p"], "model": ["m"], "dimension": ["d"]}
    (tmp_path / "data1").mkdir()
    pd.DataFrame(frame | {"label": ["decoy"]}).to_parquet(
        tmp_path / "data1" / "judge_ratings.parquet"
    )
    real = tmp_path / "data[1]"
    real.mkdir()
    pd.DataFrame(frame | {"label": ["right"], "note": [1.5]}).to_parquet(
        real / "judge_ratings.parquet"
    )
    df = _load(real)
    assert df["label"].tolist() == ["right"] and df["_row_number"].tolist() == [1]
    assert df["note"].tolist() == [1.5]  # an extra column keeps its type


def _both_routes(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list, list, list]:
    """(types, rows) of the Parquet file read by DuckDB's reader and by pyarrow."""
    import judge_bias.inputs.loading as loading

    con = duckdb.connect()
    routes = []
    for native in (True, False):
        with monkeypatch.context() as patch:
            if not native:
                patch.setattr(loading, "_native_parquet", lambda *args: None)
            rel = load_input(con, data_dir, "judge_ratings")
        routes.append((rel.dtypes, rel.order("_row_number").fetchall()))
    (native_types, native_rows), (arrow_types, arrow_rows) = routes
    return native_types, arrow_types, native_rows, arrow_rows


def test_parquet_read_by_duckdb_equals_the_pyarrow_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's Parquet reader (no temp table) gives the pyarrow route's columns, types
    and rows, numbers and text alike, for every type a file may carry."""
    n = 300_000  # more than one row group and one of pyarrow's batches
    frame = pd.DataFrame(
        {
            "Judge ": pd.Categorical(["a", "b", None] * (n // 3)),
            "prompt_id": [f"p{i}" for i in range(n)],
            "model": ["m"] * n,
            "dimension": ["d"] * n,
            "label": [1.5, None, float("nan")] * (n // 3),
            "run_id": list(range(n)),
            "when": pd.date_range("2026-01-01", periods=n, freq="s", tz="UTC"),
            "flag": [True, False, None] * (n // 3),
            "small": pd.array([1.25, 2.5, -0.0] * (n // 3), dtype="float32"),
        }
    )
    path = tmp_path / "judge_ratings.parquet"
    frame.to_parquet(path, row_group_size=70_000)
    import judge_bias.inputs.loading as loading

    names = loading.parquet_columns(path)
    mapping = loading.map_columns(path, loading.KINDS["judge_ratings"], names)
    assert (
        loading._native_parquet(
            duckdb.connect(), path, loading.KINDS["judge_ratings"], names, mapping
        )
        is not None
    )
    native_types, arrow_types, native_rows, arrow_rows = _both_routes(tmp_path, monkeypatch)
    assert native_types == arrow_types
    assert native_rows == arrow_rows
    assert [r[0] for r in native_rows] == list(range(1, n + 1))


@pytest.mark.parametrize("folder", ["judge=gpt4", "Run_ID=7", "label=9"])
def test_a_folder_named_like_a_partition_changes_no_value(
    folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data folder named column=value (Hive partitioning) is only a folder: DuckDB's
    reader would otherwise put the folder's value in every row of that column."""
    data = tmp_path / folder
    data.mkdir()
    frame = {"judge": ["gpt4o", "claude"], "prompt_id": ["p", "q"], "model": ["m", "m"],
             "dimension": ["d", "d"], "label": ["1", "2"], "run_id": ["01", "02"]}  # fmt: skip
    pd.DataFrame(frame).to_parquet(data / "judge_ratings.parquet")
    native_types, arrow_types, native_rows, arrow_rows = _both_routes(data, monkeypatch)
    assert native_rows == arrow_rows
    # judge, prompt_id, model, dimension, label; run_id: the file's values
    assert [(*r[4:9], r[11]) for r in native_rows] == [
        ("gpt4o", "p", "m", "d", "1", "01"),
        ("claude", "q", "m", "d", "2", "02"),
    ]


def test_parquet_column_named_like_the_readers_own_takes_pyarrow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file column named file_row_number (DuckDB's reader adds one) is kept as an
    extra column, read by the pyarrow route."""
    import judge_bias.inputs.loading as loading

    frame = {"judge": ["x"], "prompt_id": ["p"], "model": ["m"], "dimension": ["d"]}
    pd.DataFrame(frame | {"label": ["y"], "File_Row_Number": [7]}).to_parquet(
        tmp_path / "judge_ratings.parquet"
    )
    con = duckdb.connect()
    path = tmp_path / "judge_ratings.parquet"
    names = loading.parquet_columns(path)
    spec = loading.KINDS["judge_ratings"]
    assert loading._native_parquet(con, path, spec, names, {}) is None
    df = _load(tmp_path)
    assert df["_row_number"].tolist() == [1] and df["file_row_number"].tolist() == [7]
