"""`judge-bias import mapping --config map.yml FILE...`: in-house CSV, JSON lines and
Parquet files mapped by the documented configs in docs/mapping/, the ready LangSmith
and Braintrust configs on files shaped from their SDKs' schemas, and config errors.

Every count is checked against a plain csv/json parse of the input written here;
the end-to-end test builds the warehouse and recomputes a headline figure from the
raw CSV. All fail on the code before `import mapping` existed (no such format).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from judge_bias.cli import main
from judge_bias.warehouse.build import PROJECT_DIR, BuildResult, build
from tests.conftest import query
from tests.importing import assert_reconciled
from tests.mapping_fixtures import (
    braintrust_experiment,
    inhouse_rows,
    langsmith_feedback,
    mlflow2_eval_table,
)

CONFIGS = PROJECT_DIR / "docs" / "mapping"
GRADE = {"PASS": 1.0, "FAIL": 0.0}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _import(config: str, files: list[Path], out: Path, *extra: str) -> int:
    return main(["import", "mapping", "--config", str(CONFIGS / config), *map(str, files),
                 "--out", str(out), *extra])  # fmt: skip


@pytest.fixture(scope="module")
def inhouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], Path, BuildResult]:
    tmp = tmp_path_factory.mktemp("inhouse")
    raw = inhouse_rows(tmp / "evals.csv")
    out = tmp / "data"
    assert _import("inhouse_csv.yml", [tmp / "evals.csv"], out) == 0
    return raw, out, build(out, tmp / "w.duckdb", quiet=True)


def test_inhouse_csv_builds_and_reconciles(inhouse: tuple[list[dict], Path, BuildResult]) -> None:
    raw, out, result = inhouse
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (len(raw), 1)  # every row read; MAYBE rejected
    reviewed = {(r["case_id"], r["answer_model"]) for r in raw if r["review_grade"]}
    assert counts["human_annotations"] == (len(reviewed), 0)
    assert counts["prompts"] == (len({r["case_id"] for r in raw}), 0)


def test_inhouse_csv_headline_figures(inhouse: tuple[list[dict], Path, BuildResult]) -> None:
    """agreement_judge_human's Spearman and agg_judge_model_scores' mean, per judge,
    recomputed from the raw CSV with scipy (the MAYBE grade left out, as rejected)."""
    raw, _, result = inhouse
    spearman = query(
        result.db_path,
        "select judge, spearman, n from agreement_judge_human where dimension = 'correct'",
    ).set_index("judge")
    means = query(
        result.db_path,
        "select judge, model, mean_judge_score_norm from agg_judge_model_scores "
        "where dimension = 'correct'",
    ).set_index(["judge", "model"])
    for judge in {r["grader"] for r in raw}:
        pairs = [
            (GRADE[r["grade"]], GRADE[r["review_grade"]])
            for r in raw
            if r["grader"] == judge and r["review_grade"] and r["grade"] in GRADE
        ]
        rho = stats.spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
        assert spearman.loc[judge, "n"] == len(pairs)
        assert spearman.loc[judge, "spearman"] == pytest.approx(rho, abs=1e-9)
        for model in {r["answer_model"] for r in raw}:
            grades = [
                GRADE[r["grade"]]
                for r in raw
                if (r["grader"], r["answer_model"]) == (judge, model) and r["grade"] in GRADE
            ]
            got = means.loc[(judge, model), "mean_judge_score_norm"]
            assert got == pytest.approx(sum(grades) / len(grades), abs=1e-12)


GRADERS = [("gpt-4o", "helpfulness"), ("claude-3", "harm")]


def test_nested_json_lines(tmp_path: Path) -> None:
    """inhouse_jsonl.yml: each over a list, dotted paths, an optional human object."""
    records = [
        {
            "test": {"id": f"t{i}", "vars": {"question": f"q{i}"}},
            "provider": ["gpt-4o-mini", "my-model"][i % 2],
            "grades": [
                {"grader": g, "metric": m, "gradingResult": {"score": 1 + (i + k) % 5}}
                for k, (g, m) in enumerate(GRADERS[: 1 + i % 2])
            ],
            **({"human": {"user": "bob", "score": 1 + i % 5}} if i % 3 == 0 else {}),
        }
        for i in range(9)
    ]  # fmt: skip
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert _import("inhouse_jsonl.yml", [path], tmp_path / "out") == 0
    ratings = _rows(tmp_path / "out" / "judge_ratings.csv")
    assert len(ratings) == sum(len(r["grades"]) for r in records)
    assert [(r["judge"], r["dimension"], r["label"], r["grade_index"]) for r in ratings[:3]] == [
        ("gpt-4o", "helpfulness", "1", "0"),
        ("gpt-4o", "helpfulness", "2", "0"),  # record 1: 1 + (1 + 0) % 5
        ("claude-3", "harm", "3", "1"),  # its second grade: 1 + (1 + 1) % 5
    ]
    humans = _rows(tmp_path / "out" / "human_annotations.csv")
    assert len(humans) == sum("human" in r for r in records)
    scales = _rows(tmp_path / "out" / "rating_scales.csv")
    assert Counter(r["dimension"] for r in scales) == {"helpfulness": 2, "harm": 2}


def test_parquet_with_templates(tmp_path: Path) -> None:
    """inhouse_parquet.yml: ids from a template, a human mean repeated on every
    judge's row written once, the config's models file rows."""
    rows = [
        {"dataset": "d1", "item": i, "system": "my-finetune-v3", "judge_model": j,
         "criterion": "quality", "score": (i + len(j)) % 11, "human_mean": 5.5 if i else None,
         "n_reviewers": 2}
        for i in range(4) for j in ("gpt-4o", "claude-3")
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "scores.parquet")
    assert _import("inhouse_parquet.yml", [tmp_path / "scores.parquet"], tmp_path / "out") == 0
    ratings = _rows(tmp_path / "out" / "judge_ratings.csv")
    assert len(ratings) == len(rows)
    assert {r["prompt_id"] for r in ratings} == {f"d1-{i}" for i in range(4)}
    humans = _rows(tmp_path / "out" / "human_annotations.csv")
    assert [(h["prompt_id"], h["label"], h["n_aggregated"]) for h in humans] == [
        (f"d1-{i}", "5.5", "2") for i in range(1, 4)
    ]
    models = {r["alias"]: r["family"] for r in _rows(tmp_path / "out" / "models.csv")}
    assert models == {"my-finetune-v3": "Llama", "gpt-4o": "GPT", "claude-3": "Claude"}


def test_langsmith_feedback_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = langsmith_feedback(tmp_path / "feedback.jsonl")
    assert _import("langsmith_feedback.yml", [tmp_path / "feedback.jsonl"], tmp_path / "o") == 0
    err = capsys.readouterr().err
    source = Counter(r["feedback_source"]["type"] for r in records)
    ratings = _rows(tmp_path / "o" / "judge_ratings.csv")
    humans = _rows(tmp_path / "o" / "human_annotations.csv")
    assert len(ratings) == source["model"]
    assert len(humans) == source["app"] + source["api"]
    by_id = {r["id"]: r for r in records}
    for row in ratings:
        score, value = by_id[row["feedback_id"]]["score"], by_id[row["feedback_id"]]["value"]
        want = value if score is None else str(int(score) if isinstance(score, bool) else score)
        assert (row["prompt_id"], row["label"]) == (by_id[row["feedback_id"]]["run_id"], want)
    # the text-only feedback: its value written (imp26; fmt25 wrote it empty), named
    assert sum(r["label"] == "looks right" for r in ratings) == 1
    assert "dimension 'correctness': 1 text labels on no scale of it (looks right)" in err
    # helpfulness' numbers pass the true/false map as they are: only the text is named
    assert "outputs[0].columns.label.map: 1 values it does not name" in err
    assert {h["annotator_id"] for h in humans} == {"ana", "langsmith-user"}


def test_a_missing_extra_column_is_kept_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record without the value of an extra column (LangSmith feedback without a
    comment) keeps its row: the line says so (main said "the build rejects those
    rows" for any column), while a missing label is still said to be rejected."""
    records = langsmith_feedback(tmp_path / "feedback.jsonl")
    for r in records:
        r["comment"] = None
        if r["score"] is None:  # neither score nor value: a missing label
            r["value"] = None
    (tmp_path / "feedback.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _import("langsmith_feedback.yml", [tmp_path / "feedback.jsonl"], tmp_path / "o") == 0
    lines = capsys.readouterr().err.splitlines()
    n_judged = sum(r["feedback_source"]["type"] == "model" for r in records)
    said = f"columns.comment: {n_judged} values missing, written empty (the build keeps those rows)"
    assert f"mapping: outputs[0].{said}" in lines
    assert any("columns.label: 1 values missing" in x and "rejects" in x for x in lines)


LANGSMITH_CSV = Path(__file__).parent / "fixtures" / "langsmith" / "experiment_0.15.1.csv"


def test_langsmith_experiment_csv_config(tmp_path: Path) -> None:
    """langsmith 0.15.1's own evaluate(...).to_pandas().to_csv(): one rating per
    feedback.<evaluator> column (``each: feedback`` over the flattened header), by the
    example; every cell read with the csv module alone. main wrote no rating ("each:
    records have no list or object there")."""
    rows = _rows(LANGSMITH_CSV)
    expected = sorted(
        (r["example_id"], k.removeprefix("feedback."), v)
        for r in rows for k, v in r.items() if k.startswith("feedback.")
    )  # fmt: skip
    assert len(expected) == 6
    assert _import("langsmith_experiment_csv.yml", [LANGSMITH_CSV], tmp_path / "o") == 0
    ratings = _rows(tmp_path / "o" / "judge_ratings.csv")
    assert sorted((r["prompt_id"], r["dimension"], r["label"]) for r in ratings) == expected
    answers = {
        r["prompt_id"]: r["completion_text"] for r in _rows(tmp_path / "o" / "completions.csv")
    }
    assert answers == {r["example_id"]: r["outputs.output"] for r in rows}


def test_braintrust_experiment_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = braintrust_experiment(tmp_path / "experiment.jsonl")
    assert (
        _import("braintrust_experiment.yml", [tmp_path / "experiment.jsonl"], tmp_path / "o") == 0
    )
    roots = [r for r in records if r["is_root"]]
    ratings = _rows(tmp_path / "o" / "judge_ratings.csv")
    humans = _rows(tmp_path / "o" / "human_annotations.csv")
    assert len(ratings) == sum(
        len(r["scores"]) - ("Human factuality" in r["scores"]) for r in roots
    )
    assert len(humans) == sum("Human factuality" in r["scores"] for r in roots)
    assert {h["dimension"] for h in humans} == {"Factuality"}
    assert {r["prompt_id"] for r in ratings} == {r["origin"]["id"] for r in roots}
    assert {r["model"] for r in ratings} == {r["metadata"]["model"] for r in roots}
    err = capsys.readouterr().err
    assert "1 values missing" in err  # the null Factuality
    # the child spans: left out by where, not counted as lacking scores
    assert f"{len(records) - len(roots)} of {len(records)} records matched no output" in err
    assert ".each:" not in err
    assert len(_rows(tmp_path / "o" / "completions.csv")) == len(roots)


def test_mlflow2_eval_table_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MLflow 2's eval_results_table.json (pandas' split layout): one rating per row
    and genai metric, read back with pandas; the failed score written empty;
    toxicity and exact_match (no justification: no judge) not imported."""
    import pandas as pd

    path = tmp_path / "eval_results_table.json"
    mlflow2_eval_table(path)
    frame = pd.read_json(path, orient="split", dtype=False)
    assert _import("mlflow2_eval_table.yml", [path], tmp_path / "o") == 0
    ratings = _rows(tmp_path / "o" / "judge_ratings.csv")
    want = (
        (q, metric, None if pd.isna(s) else float(s))
        for metric in ("answer_similarity", "faithfulness")
        for q, s in zip(frame["inputs"], frame[f"{metric}/v1/score"], strict=True)
    )
    got = [(r["prompt_id"], r["dimension"], float(r["label"]) if r["label"] else None)
           for r in ratings]  # fmt: skip
    assert sorted(got, key=str) == sorted(want, key=str)
    assert len(ratings) == 2 * len(frame)
    assert {r["judge"] for r in ratings} == {"openai:/gpt-4"}
    err = capsys.readouterr().err
    assert "1 values missing" in err  # the failed faithfulness score
    # the constants are named, and the score columns no output maps (read with pandas)
    [line] = [x for x in err.splitlines() if "constants of the config" in x]
    assert "judge 'openai:/gpt-4' and model 'my-model'" in line
    judged = {c.removesuffix("/justification") for c in frame.columns}
    scores = [c for c in frame.columns if c.endswith("/score")]
    unmapped = sorted(c for c in scores if c.removesuffix("/score") not in judged)
    [line] = [x for x in err.splitlines() if "score column(s)" in x]
    assert line.endswith(f"{len(unmapped)} score column(s) of the file no output maps, "
                         f"not imported: {', '.join(unmapped)} (a judge's? map it in a "
                         "copy of the config)")  # fmt: skip
    completions = _rows(tmp_path / "o" / "completions.csv")
    assert [c["completion_text"] for c in completions] == list(frame["outputs"])


def test_a_split_table_row_of_another_width_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "eval_results_table.json"
    path.write_text(json.dumps({"columns": ["inputs", "x"], "data": [["q", 1], ["r"]]}))
    assert _import("mlflow2_eval_table.yml", [path], tmp_path / "o") == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "row 1" in line


BAD_CONFIGS = {
    "outputs: []": "outputs",
    "outputs: [{kind: judge_rating, columns: {a: b}}]": "outputs[0].kind",
    "outputs: [{kind: judge_ratings, columns: {judge: j}}]": "outputs[0].columns",
    "outputs: [{kind: prompts, columns: {prompt_id: {path: a, const: b}}}]":
        "outputs[0].columns.prompt_id",
    "outputs: [{kind: prompts, colums: {prompt_id: a}}]": "outputs[0].colums",
    "outputs: [{kind: prompts, columns: {prompt_id: a}, where: {x: {like: 1}}}]":
        "outputs[0].where.x.like",
    "input: {format: xlsx}\noutputs: [{kind: prompts, columns: {prompt_id: a}}]": "input.format",
    "outputs: [{kind: prompts, columns: {prompt_id: a}}]\nrating_scales: [{dimension: d, "
    "range: [1]}]": "rating_scales[0].range",
    "outputs: [{kind: prompts, columns: {prompt_id: a}}]\nrating_scales: [{dimension: d, "
    "labels: {a: high}}]": "rating_scales[0].labels.a",
    "outputs: [{kind: prompts, columns: {prompt_id: a}}]\nmodels: [{alias: a}]": "models[0]",
    "outputs: [\n  - {": "line",
}  # fmt: skip


@pytest.mark.parametrize("text", sorted(BAD_CONFIGS))
def test_a_bad_config_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (tmp_path / "map.yml").write_text(text, encoding="utf-8")
    (tmp_path / "a.csv").write_text("a\n1\n", encoding="utf-8")
    args = ["import", "mapping", "--config", str(tmp_path / "map.yml"), str(tmp_path / "a.csv")]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "map.yml" in err[0] and BAD_CONFIGS[text] in err[0], err


def test_config_is_required_and_only_for_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.csv").write_text("a\n1\n", encoding="utf-8")
    assert main(["import", "mapping", str(tmp_path / "a.csv"), "--out", str(tmp_path)]) == 2
    assert "--config" in capsys.readouterr().err
    args = ["import", "hibayes", str(tmp_path / "a.csv"), "--config", "x.yml"]
    assert main([*args, "--out", str(tmp_path)]) == 2
    assert "takes no config" in capsys.readouterr().err


def test_the_config_in_docs_mapping_md_parses() -> None:
    """The annotated config on docs/mapping.md is a valid config."""
    import yaml

    from judge_bias.inputs.importers.mapping_config import parse_config

    text = (PROJECT_DIR / "docs" / "mapping.md").read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = parse_config(yaml.safe_load(block), Path("docs/mapping.md"))
    assert [o.kind for o in config.outputs] == ["judge_ratings"]
    assert config.outputs[0].columns["model"].path == ("metadata.model", "provider")
    assert [r["dimension"] for r in config.scale_all] == ["*", "*"]


LANGSMITH_CATEGORICAL = LANGSMITH_CSV.with_name("categorical_0.15.1.jsonl")


def test_langsmith_categorical_feedback_is_read_from_its_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """langsmith 0.15.1's own Feedback records (fixtures/langsmith/make_categorical.py):
    an LLM evaluator's categorical verdict is a value with a null score; a UI category
    has both (score read). fmt25 wrote the value-only verdicts empty (missing_value);
    the config reads the value, the import names the labels scale the build needs,
    and with that entry added the build scores the verdicts by it and rejects the one
    label the entry leaves out."""
    import yaml

    records = [json.loads(x) for x in LANGSMITH_CATEGORICAL.read_text().splitlines()]
    verdicts = {r["id"]: r["value"] for r in records if r["feedback_source"]["type"] == "model"}
    assert {r["score"] for r in records if r["id"] in verdicts} == {None}
    assert _import("langsmith_feedback.yml", [LANGSMITH_CATEGORICAL], tmp_path / "o") == 0
    ratings = _rows(tmp_path / "o" / "judge_ratings.csv")
    assert {r["feedback_id"]: r["label"] for r in ratings} == verdicts
    humans = _rows(tmp_path / "o" / "human_annotations.csv")
    scored = {(r["run_id"], str(r["score"])) for r in records if r["id"] not in verdicts}
    assert {(h["prompt_id"], h["label"]) for h in humans} == scored
    [line] = [x for x in capsys.readouterr().err.splitlines() if "'verdict'" in x]
    assert "4 text labels on no scale of it (fail, pass, unsure)" in line
    assert line.endswith('- {dimension: "verdict", labels: {"fail": <score>, "pass": <score>, '
                         '"unsure": <score>}}')  # fmt: skip

    config = yaml.safe_load((CONFIGS / "langsmith_feedback.yml").read_text())
    config["rating_scales"].insert(0, {"dimension": "verdict", "labels": {"pass": 1, "fail": 0}})
    (tmp_path / "map.yml").write_text(yaml.safe_dump(config))
    out = tmp_path / "o2"
    assert main(["import", "mapping", "--config", str(tmp_path / "map.yml"),
                 str(LANGSMITH_CATEGORICAL), "--out", str(out)]) == 0  # fmt: skip
    [line] = [x for x in capsys.readouterr().err.splitlines() if "'verdict'" in x]
    assert "1 text labels on no scale of it (unsure)" in line
    result = build(out, tmp_path / "w.duckdb", quiet=True)
    fct = query(result.db_path, "select prompt_id, judge_score from fct_judge_ratings")
    want = sorted(
        (r["run_id"], {"pass": 1.0, "fail": 0.0}[r["value"]])
        for r in records
        if r["id"] in verdicts and r["value"] != "unsure"
    )
    assert sorted(fct.itertuples(index=False, name=None)) == want
    rejected = query(result.db_path, "select source, reason from rejected_rows")
    assert list(rejected["source"]) == ["judge_ratings"] and "unsure" in rejected["reason"][0]


@pytest.mark.parametrize(("extra", "first_cause"), [("", "a trailing comma"), ("x", "a quote")])
def test_a_csv_row_longer_than_its_header_is_refused_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, first_cause: str
) -> None:
    """A CSV row of one cell more than the header (a trailing comma, or a quote
    escaped with a backslash splitting a text): every value after the split cell is
    shifted (the reviewer's LangSmith CSV had prompt_id 0.000352). Before session 26
    the extra cells went under ``_extra_fields`` and the shifted values were mapped;
    now the file is refused in one line naming the line, the cell counts and the
    likely causes, the likelier first (an empty extra cell: a trailing comma)."""
    source = tmp_path / "evals.csv"
    inhouse_rows(source)
    with source.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    width = len(rows[0])
    rows[3].append(extra)  # the file's line 4
    path = tmp_path / "long.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    assert _import("inhouse_csv.yml", [source], tmp_path / "ok") == 0  # the file as made
    capsys.readouterr()
    assert _import("inhouse_csv.yml", [path], tmp_path / "o") == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"{path}: line 4: {width + 1} cells under a header of {width} columns" in line
    assert f"not read; likely {first_cause}" in line


def test_the_labels_entry_the_import_prints_pastes_into_yaml_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Verdicts ``yes``/``no`` (langsmith 0.15.1's records, values renamed): YAML
    reads an unquoted ``yes``/``no`` as a boolean, so imp26's first hint, pasted,
    gave a scale the labels missed (the reviewer's ls_yes.py). The printed entry
    quotes each label as JSON; pasted into the config as printed (scores filled in),
    the build scores every verdict by it (checked against the records)."""
    rename = {"pass": "yes", "fail": "no", "unsure": "no"}
    records = [json.loads(x) for x in LANGSMITH_CATEGORICAL.read_text().splitlines()]
    verdicts = {}
    for r in records:
        if r["feedback_source"]["type"] == "model":
            r["value"] = rename[r["value"]]
            verdicts[r["run_id"]] = {"yes": 1.0, "no": 0.0}[r["value"]]
    path = tmp_path / "yes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _import("langsmith_feedback.yml", [path], tmp_path / "o") == 0
    [line] = [x for x in capsys.readouterr().err.splitlines() if "'verdict'" in x]
    entry = line.split("rating_scales: - ")[1]
    assert entry.count("<score>") == 2 and entry.index("no") < entry.index("yes")
    pasted = entry.replace("<score>", "0", 1).replace("<score>", "1", 1)  # no: 0, yes: 1
    text = (CONFIGS / "langsmith_feedback.yml").read_text(encoding="utf-8")
    config = tmp_path / "map.yml"
    config.write_text(text.replace("rating_scales:\n", f"rating_scales:\n  - {pasted}\n", 1))
    out = tmp_path / "o2"
    assert main(["import", "mapping", "--config", str(config), str(path), "--out", str(out)]) == 0
    result = build(out, tmp_path / "w.duckdb", quiet=True)
    fct = query(result.db_path, "select prompt_id, judge_score from fct_judge_ratings")
    assert dict(fct.itertuples(index=False, name=None)) == verdicts and len(fct) == len(verdicts)
