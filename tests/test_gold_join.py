"""`--gold FILE --gold-id COLUMN` on every importer: human labels from a separate
spreadsheet joined to what the import wrote, counted, and refused (one line, exit 2)
when an id repeats with two labels, names several completions, or matches nothing.

The expected counts come from the gold rows written here, not from the code; all
fail on the code before --gold existed (argparse refuses the option).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judge_bias.cli import main
from judge_bias.inputs.importers import IMPORTERS

PF_HEADER = "judge,model,gt,dataset,prompt_id,rating,pred_length\n"
PF_ROWS = [
    ("gpt-4o", "gpt-4o", "3", "cnn", "cnn_0", "4", "50"),
    ("mistral-large", "gpt-4o", "3", "cnn", "cnn_0", "3", "50"),
    ("gpt-4o", "mistral-large", "2", "cnn", "cnn_0", "2", "40"),
    ("gpt-4o", "gpt-4o", "4", "cnn", "cnn_1", "4", "55"),
    ("gpt-4o", "mistral-large", "1", "cnn", "cnn_1", "2", "45"),
]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _play_favorites(tmp: Path) -> Path:
    path = tmp / "Faithfulness.csv"
    path.write_text(PF_HEADER + "".join(",".join(r) + "\n" for r in PF_ROWS), encoding="utf-8")
    return path


def _gold(tmp: Path, text: str, name: str = "gold.csv") -> Path:
    (tmp / name).write_text(text, encoding="utf-8")
    return tmp / name


def _run(fmt: str, data: Path, gold: Path, gold_id: str, out: Path, *extra: str) -> int:
    args = ["import", fmt, str(data), "--out", str(out), "--gold", str(gold)]
    return main([*args, "--gold-id", gold_id, *extra])


def test_gold_joins_by_prompt_id_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = _gold(
        tmp_path,
        "prompt_id,model,label,annotator_id\n"
        "cnn_0,gpt-4o,3,expert\n"
        "cnn_0,mistral-large,2,expert\n"
        "cnn_0,gpt-4o,3.0,expert\n"  # the same label again (as a number): written once
        "cnn_9,gpt-4o,1,expert\n",  # no such prompt: counted
    )
    out = tmp_path / "out"
    assert _run("play-favorites", _play_favorites(tmp_path), gold, "prompt_id", out) == 0
    stdout = capsys.readouterr().out
    humans = _rows(out / "human_annotations.csv")
    mine = [h for h in humans if h["annotator_id"] == "expert"]
    assert len(humans) - len(mine) == len({(r[4], r[1]) for r in PF_ROWS})  # importer's kept
    assert sorted((h["prompt_id"], h["model"], h["label"], h["gold_id"]) for h in mine) == [
        ("cnn_0", "gpt-4o", "3", "cnn_0"),
        ("cnn_0", "mistral-large", "2", "cnn_0"),
    ]
    # judge ratings now labelled: cnn_0 x gpt-4o (2 judges), cnn_0 x mistral-large (1)
    assert "gold gold.csv: 4 rows read; 3 joined (2 human labels for 3 judge ratings)" in stdout
    assert "1 matched no judge rating (e.g. cnn_9)" in stdout
    assert "1 repeats of the same label written once" in stdout
    n_completions = len({(r[4], r[1]) for r in PF_ROWS})  # each with the importer's gt_mean
    assert f"human_annotations: {n_completions + 2} rows" in stdout


def test_gold_on_another_importer_by_an_extra_column_from_parquet(tmp_path: Path) -> None:
    """MT-Bench single judgments; the gold file (Parquet) names the id differently."""
    lines = [
        {"question_id": q, "model": m, "judge": ["gpt-4", "single-v1"], "score": s, "turn": 1,
         "judgment": "[[5]]"}
        for q, m, s in ((81, "vicuna-13b", 5), (81, "alpaca-13b", 3), (82, "vicuna-13b", 8))
    ]  # fmt: skip
    data = tmp_path / "gpt-4_single.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    table = pa.Table.from_pylist(
        [
            {"pid": "mt-81-t1", "model": "alpaca-13b", "human_score": 2},
            {"pid": "mt-82-t1", "model": "vicuna-13b", "human_score": 9},
        ]
    )
    pq.write_table(table, tmp_path / "gold.parquet")
    out = tmp_path / "out"
    args = ("--gold-label", "human_score")
    assert _run("mt-bench", data, tmp_path / "gold.parquet", "pid=prompt_id", out, *args) == 0
    humans = _rows(out / "human_annotations.csv")
    assert [(h["prompt_id"], h["model"], h["dimension"], h["annotator_id"], h["label"])
            for h in humans] == [
        ("mt-81-t1", "alpaca-13b", "mt_bench_score", "gold", "2"),
        ("mt-82-t1", "vicuna-13b", "mt_bench_score", "gold", "9"),
    ]  # fmt: skip


REFUSED = {
    "two labels": ("prompt_id,model,label\ncnn_0,gpt-4o,3\ncnn_0,gpt-4o,1\n",
                   "two different labels"),
    "no match": ("prompt_id,model,label\nx,gpt-4o,3\ny,gpt-4o,1\n", "no id in column"),
    "several completions": ("prompt_id,label\ncnn_0,3\n", "add a model column"),
    "no label column": ("prompt_id,score\ncnn_0,3\n", "no column 'label'"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_gold_refusals_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, message = REFUSED[case]
    gold = _gold(tmp_path, text)
    assert _run("play-favorites", _play_favorites(tmp_path), gold, "prompt_id", tmp_path / "o") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "gold.csv" in err[0], err


def test_gold_needs_its_id_and_a_known_ratings_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, gold = _play_favorites(tmp_path), _gold(tmp_path, "id,label\ncnn_0,3\n")
    args = ["import", "play-favorites", str(data), "--out", str(tmp_path / "o")]
    assert main([*args, "--gold", str(gold)]) == 2
    assert "go together" in capsys.readouterr().err
    assert _run("play-favorites", data, gold, "id", tmp_path / "o") == 2
    assert "judge_ratings.csv has no column 'id'" in capsys.readouterr().err


def test_gold_labels_off_the_scale_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = _gold(tmp_path, "prompt_id,model,label\ncnn_1,gpt-4o,7\ncnn_1,mistral-large,good\n")
    assert _run("play-favorites", _play_favorites(tmp_path), gold, "prompt_id", tmp_path / "o") == 0
    # the scale is 0..4 (the largest gt or rating): 7 and "good" are off it
    assert "2 labels not on the dimension's rating_scales" in capsys.readouterr().out


def test_every_importer_gets_gold_from_the_shared_layer() -> None:
    """--gold is applied by the CLI after any importer: no importer takes it itself."""
    import inspect

    for name, fn in IMPORTERS.items():
        assert "gold" not in inspect.signature(fn).parameters, name
    from judge_bias.cli import parser

    sub = parser().parse_args(["import", "hibayes", "x.csv", "--gold", "g.csv", "--gold-id", "i"])
    assert (sub.gold, sub.gold_id, sub.gold_label) == ("g.csv", "i", "label")
