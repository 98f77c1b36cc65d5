"""`judge-bias import --list`, `--models` overrides and the shared contract writer."""

from __future__ import annotations

import csv
import inspect
import json
import sys
from pathlib import Path

import pytest

from judge_bias.cli import main
from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.importers import IMPORTERS
from judge_bias.inputs.importers._write import default_family
from judge_bias.inputs.writer import write_contract_file


def test_list_prints_one_line_per_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(IMPORTERS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_import_needs_files_and_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "llmbar"]) == 2
    assert "--list" in capsys.readouterr().err


def test_models_file_overrides_the_defaults(tmp_path: Path) -> None:
    record = {
        "instruction": "say hi", "output_1": "hi", "generator_1": "gpt4_1106_preview",
        "output_2": "hello", "generator_2": "my-model", "annotator": "my_annotator",
        "preference": 2.0, "referenced_models": {"m": "output_1", "M": "output_2"},
    }  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps([record]), encoding="utf-8")
    (tmp_path / "models.csv").write_text(
        "alias,model,family\nmy_annotator,gpt-4-1106-preview,GPT\nmy-model,Mine,Home\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["import", "alpaca-eval", str(tmp_path / "a.json"), "--out", str(out)]
    assert main([*args, "--models", str(tmp_path / "models.csv")]) == 0
    with (out / "models.csv").open(newline="") as fh:
        models = {r["alias"]: (r["model"], r["family"]) for r in csv.DictReader(fh)}
    assert models == {
        "gpt4_1106_preview": ("gpt-4-1106-preview", "GPT"),
        "my-model": ("Mine", "Home"),
        "my_annotator": ("gpt-4-1106-preview", "GPT"),
    }
    with (out / "pairwise_judgments.csv").open(newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert (row["model_first"], row["verdict"], row["p_first"]) == (
        "gpt4_1106_preview",
        "second",
        "0.0",
    )


def test_contract_writer_uses_the_contract_columns(tmp_path: Path) -> None:
    n = write_contract_file(tmp_path, "models", [{"alias": "a", "model": None, "family": True}])
    assert n == 1
    lines = (tmp_path / "models.csv").read_text(encoding="utf-8").splitlines()
    # the optional previous_version is written only when a row carries it
    assert lines == ["alias,model,family", "a,,true"]
    write_contract_file(tmp_path, "models", [{"alias": "b", "previous_version": "a"}])
    lines = (tmp_path / "models.csv").read_text(encoding="utf-8").splitlines()
    assert lines == [",".join(KINDS["models"].columns), "b,,," + "a"]
    with pytest.raises(ValueError, match="not declared"):
        write_contract_file(tmp_path, "models", [{"alias": "a", "colour": "red"}])
    assert default_family("Mixtral-8x7B-Instruct-v0.1") == "Mistral"
    assert default_family("ChatGPT-0301") == "GPT"
    assert default_family("newsroom-system") == "newsroom-system"


def test_every_importer_takes_a_models_file(tmp_path: Path) -> None:
    for name, fn in IMPORTERS.items():
        assert "models" in inspect.signature(fn).parameters, name
    # HiBayes (examples/skewed_score/q1/data/data.csv layout) and Play Favorites, which
    # refused --models: the user's rows are written to models.csv
    (tmp_path / "q1.csv").write_text(
        "score,grader,LLM\n7,Human,LLM A\n5,Autograder,LLM A\n", encoding="utf-8"
    )
    (tmp_path / "Faithfulness.csv").write_text(
        "judge,model,gt,dataset,prompt_id,rating,pred_length\ngpt-4o,gpt-4o,3,cnn,cnn_0,4,50\n",
        encoding="utf-8",
    )
    (tmp_path / "m.csv").write_text(
        "alias,model,family\nAutograder,gpt-4o-mini,GPT\n", encoding="utf-8"
    )
    for fmt, data in (("hibayes", "q1.csv"), ("play-favorites", "Faithfulness.csv")):
        out = tmp_path / fmt
        args = ["import", fmt, str(tmp_path / data), "--out", str(out)]
        assert main([*args, "--models", str(tmp_path / "m.csv")]) == 0, fmt
        with (out / "models.csv").open(newline="", encoding="utf-8") as fh:
            models = {r["alias"]: (r["model"], r["family"]) for r in csv.DictReader(fh)}
        assert models["Autograder"] == ("gpt-4o-mini", "GPT"), fmt


# A file of the wrong kind for each importer: text that is not JSON for the JSON
# formats, bytes that are not UTF-8 text for the CSV ones (named as each importer
# expects its files, so that only the content is wrong).
WRONG_FILES = {
    "alpaca-eval": ("annotations.json", b"instruction,output\nhi,there\n"),
    "judge-bench": ("newsroom.json", b"<html>not found</html>"),
    "llmbar": ("dataset.json", b"\n\nnot json"),
    "mt-bench": ("gpt-4_single.jsonl", b'{"question_id": 81}\n{broken\n'),
    "self-recognition": ("gpt4_results.json", b""),
    "hibayes": ("q1_data.csv", b"\x89PNG\r\n\x1a\n\x00\xff\xfe"),
    "play-favorites": ("Faithfulness.csv", b"\xff\xfe\x00j\x00u\x00d"),
    "mlflow": ("search_traces.json", b"<html>not found</html>"),
    "deepeval": (".latest_test_run.json", b"\xff\xfe\x00{"),
    "promptfoo": ("results.json", b'{"evalId": "e", "results": {"version": 3}}'),
    "langfuse": ("scores.csv", b"\xff\xfe\x00i\x00d"),
}


@pytest.mark.parametrize("fmt", sorted(WRONG_FILES))
def test_a_file_the_importer_cannot_read_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    name, content = WRONG_FILES[fmt]
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["import", fmt, str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0], err
    assert "unexpected" not in err[0]


def test_a_directory_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "judge-bench", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(tmp_path) in err[0] and "directory" in err[0]


@pytest.mark.parametrize(
    ("fmt", "module", "extra"),
    [("inspect", "inspect_ai", "inspect"), ("mlflow", "mlflow", "mlflow")],
)
def test_a_missing_extra_is_one_line_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    module: str,
    extra: str,
) -> None:
    """inspect-ai and mlflow are extras: without them the importer says which to install."""
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    source = str(tmp_path / "log.eval") if fmt == "inspect" else "http://127.0.0.1:5000"
    assert main(["import", fmt, source, "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"pip install 'judge-bias[{extra}]'" in line and "unexpected" not in line
