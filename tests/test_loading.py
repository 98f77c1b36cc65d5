"""The loader reads every input record, keeps row numbers and never drops a row."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from judge_bias.loading import InputError, load_input

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
