"""The mlflow import on fixtures MLflow 3.17.2 itself wrote (tests/fixtures/mlflow/
make_fixture.py: a local sqlite store with LLM_JUDGE, HUMAN and CODE assessments,
and its search_traces exports as JSON and Parquet, and a JSON list of
Trace.to_dict()). The counts reconcile with a plain json / sqlite3 parse written
here, every source gives the same inputs, and the built warehouse's judge-human
Spearman equals scipy's on the raw file."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from judge_bias.cli import main
from tests.conftest import query
from tests.importing import assert_reconciled, import_and_build

FIXTURES = Path(__file__).parent / "fixtures" / "mlflow"
EXPORTS = ("search_traces.json", "search_traces.parquet", "traces.json")
KINDS = ("judge_ratings", "human_annotations", "prompts", "completions", "rating_scales", "models")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture's sqlite store (committed gzipped: 1 MB of mostly empty tables)."""
    path = tmp_path_factory.mktemp("store") / "mlflow.db"
    with gzip.open(FIXTURES / "mlflow.db.gz") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def as_text(value: object) -> str:
    """A logged value as the CSV should hold it (MLflow's JSON has 4.0 for a logged 4)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def raw_traces() -> list[dict]:
    return json.loads((FIXTURES / "traces.json").read_text(encoding="utf-8"))


def feedback(trace: dict, source_type: str) -> list[dict]:
    return [
        a for a in trace["info"]["assessments"]
        if "feedback" in a and a["source"]["source_type"] == source_type and a.get("valid", True)
    ]  # fmt: skip


def test_counts_reconcile_with_a_plain_parse_and_every_source_agrees(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = raw_traces()
    n_judge = sum(len(feedback(t, "LLM_JUDGE")) for t in traces)
    n_human = sum(len(feedback(t, "HUMAN")) for t in traces)
    n_code = sum(len(feedback(t, "CODE")) for t in traces)
    with sqlite3.connect(store) as db:
        by_type = dict(
            db.execute(
                "select source_type, count(*) from assessments "
                "where assessment_type = 'feedback' and valid group by source_type"
            ).fetchall()
        )
    assert (n_judge, n_human, n_code) == (by_type["LLM_JUDGE"], by_type["HUMAN"], by_type["CODE"])
    # 12 traces x 2 judges x 3 names + 1 failed judge call; 9 traces x 2 humans x 3; 12 x 1
    assert (n_judge, n_human, n_code) == (73, 54, 12)
    # the JSON export again as JSON Lines (to_json(orient="records", lines=True))
    records = json.loads((FIXTURES / "search_traces.json").read_text(encoding="utf-8"))
    jsonl = tmp_path / "search_traces.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    outputs = {}
    sources = (*(str(FIXTURES / e) for e in EXPORTS), str(jsonl), f"sqlite:///{store}", str(store))
    for source in sources:
        out = tmp_path / str(len(outputs))
        assert main(["import", "mlflow", source, "--out", str(out)]) == 0, source
        err = capsys.readouterr().err
        assert f"{n_code} CODE assessment(s) not imported" in err
        assert "12 expectation assessment(s) not imported" in err
        outputs[source] = {k: sorted(map(str, read_csv(out / f"{k}.csv"))) for k in KINDS}
    first = next(iter(outputs.values()))
    assert len(first["judge_ratings"]) == n_judge and len(first["human_annotations"]) == n_human
    for source, written in outputs.items():
        assert written == first, source


def test_labels_judges_and_models_are_the_logged_ones(tmp_path: Path) -> None:
    assert main(["import", "mlflow", str(FIXTURES / "traces.json"), "--out", str(tmp_path)]) == 0
    expected = set()
    for t in raw_traces():
        [model] = {
            json.loads(s["attributes"]["mlflow.llm.model"])
            for s in t["data"]["spans"]
            if "mlflow.llm.model" in s["attributes"]
        }
        for a in feedback(t, "LLM_JUDGE"):
            expected.add((a["source"]["source_id"], model, a["assessment_name"],
                          as_text(a["feedback"].get("value"))))  # fmt: skip
    got = {
        (r["judge"], r["model"], r["dimension"], r["label"])
        for r in read_csv(tmp_path / "judge_ratings.csv")
    }
    assert got == expected
    scales = read_csv(tmp_path / "rating_scales.csv")
    assert {(r["dimension"], r["label"], r["score"]) for r in scales} == {
        ("correct", "true", "1"), ("correct", "false", "0"), ("relevance", "1", "1"),
        ("relevance", "5", "5"), ("tone", "casual", "0"), ("tone", "formal", "1"),
        ("tone", "rude", "2"),
    }  # fmt: skip


def test_model_tag_names_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["import", "mlflow", str(FIXTURES / "traces.json"), "--out", str(tmp_path)]
    assert main([*args, "--model-tag", "app_model"]) == 0
    models = {r["model"] for r in read_csv(tmp_path / "judge_ratings.csv")}
    assert models == {"app-gpt-4o", "app-llama-3-8b", "app-claude-3-5-sonnet"}
    assert main([*args, "--model-tag", "no_such_tag"]) == 0
    assert {r["model"] for r in read_csv(tmp_path / "judge_ratings.csv")} == {""}
    assert "12 rated trace(s) with no tag or metadata 'no_such_tag'" in capsys.readouterr().err
    assert main(["import", "llmbar", str(FIXTURES / "traces.json"), "--out", str(tmp_path),
                 "--model-tag", "x"]) == 2  # fmt: skip


def test_a_tracking_uri_without_the_extra_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    assert main(["import", "mlflow", "http://127.0.0.1:5000", "--out", str(tmp_path)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "pip install 'judge-bias[mlflow]'" in line and "http://127.0.0.1:5000" in line


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("traces.parquet", b"PAR1 not parquet"),
        ("traces.json", b'[{"no": "trace"}]'),
        ("traces.jsonl", b'{"trace_id": "t", "assessments": []}\n{broken\n'),
        ("mlflow.db", b"SQLite format 3\x00" + b"\x00" * 200),
    ],
)
def test_an_unreadable_source_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["import", "mlflow", str(path), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "unexpected" not in line


def test_mlflow_api_reads_the_store_as_the_sql_reader_does(store: Path) -> None:
    """MLflow's own search_traces (the extra's route) against the SQL reader."""
    pytest.importorskip("mlflow", reason="the mlflow extra (requirements-dev.lock) is absent")
    from judge_bias.inputs.importers.mlflow_sources import read_sqlite_store, read_tracking_uri

    def key(trace):
        rows = sorted((a.assessment_id, a.name, a.source_type, a.source_id, repr(a.value),
                       a.rationale, a.valid) for a in trace.assessments)  # fmt: skip
        return trace.trace_id, trace.models, trace.request, trace.response, trace.tags, rows

    api = sorted(map(key, read_tracking_uri(f"sqlite:///{store}")))
    assert api == sorted(map(key, read_sqlite_store(store))) and len(api) == 12


@pytest.fixture(scope="module")
def mlflow_build(tmp_path_factory: pytest.TempPathFactory):
    return import_and_build("mlflow", [FIXTURES / "traces.json"], tmp_path_factory)


@pytest.mark.dbt
def test_builds_and_the_spearman_is_the_raw_files(mlflow_build) -> None:
    out, result = mlflow_build
    counts = assert_reconciled(out, result)
    # the one judge call logged with an error and no value is rejected, with its reason
    assert counts["judge_ratings"] == (73, 1) and counts["human_annotations"] == (54, 0)
    reasons = query(result.db_path, "select reason_code from rejected_rows")["reason_code"]
    assert list(reasons) == ["missing_value"]
    # the recomputation: per trace, the humans' mean relevance against gpt-4o's
    human, judge = defaultdict(list), {}
    for t in raw_traces():
        for a in feedback(t, "HUMAN"):
            if a["assessment_name"] == "relevance":
                human[t["info"]["trace_id"]].append(a["feedback"]["value"])
        for a in feedback(t, "LLM_JUDGE"):
            if a["assessment_name"] == "relevance" and a["source"]["source_id"] == "gpt-4o":
                judge[t["info"]["trace_id"]] = a["feedback"]["value"]
    ids = sorted(set(human) & set(judge))
    expected = spearmanr([sum(human[i]) / len(human[i]) for i in ids], [judge[i] for i in ids])
    got = query(
        result.db_path,
        "select spearman, n from agreement_judge_human "
        "where judge = 'gpt-4o' and dimension = 'relevance'",
    )
    assert int(got["n"].iloc[0]) == len(ids) == 9
    assert got["spearman"].iloc[0] == pytest.approx(expected.statistic, abs=1e-9)


def test_a_judge_named_by_model_uri_is_the_traced_model(tmp_path: Path) -> None:
    """MLflow's judges log source_id = their model URI (``openai:/gpt-4o``)."""
    traces = raw_traces()
    for t in traces:
        for a in feedback(t, "LLM_JUDGE"):
            a["source"]["source_id"] = "openai:/" + a["source"]["source_id"]
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(traces), encoding="utf-8")
    assert main(["import", "mlflow", str(path), "--out", str(tmp_path / "out")]) == 0
    models = {
        r["alias"]: (r["model"], r["family"]) for r in read_csv(tmp_path / "out" / "models.csv")
    }
    assert models["openai:/gpt-4o"] == models["gpt-4o"] == ("gpt-4o", "GPT")
    assert models["openai:/claude-3-5-sonnet"] == ("claude-3-5-sonnet", "Claude")


def test_an_mlflow2_eval_table_points_to_its_mapping_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MLflow 2's eval_results_table.json holds no traces: one line naming the
    ready mapping config that reads it (tests/test_mapping_import.py)."""
    from tests.mapping_fixtures import mlflow2_eval_table

    path = tmp_path / "eval_results_table.json"
    mlflow2_eval_table(path)
    assert main(["import", "mlflow", str(path), "--out", str(tmp_path / "o")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "docs/mapping/mlflow2_eval_table.yml" in line


def _mlflow2_record(i: int, assessments: list[dict] | None) -> dict:
    """A search_traces() row of MLflow 2.17.2 (mlflow/entities/trace.py,
    to_pandas_dataframe_row: request_id, timestamp_ms, status, execution_time_ms,
    request, response, request_metadata, spans, tags; no assessments column before
    2.21), written by to_json(orient="records")."""
    record = {
        "request_id": f"tr-{i}", "timestamp_ms": 1_700_000_000_000 + i, "status": "OK",
        "execution_time_ms": 12, "request": json.dumps({"q": f"q{i}"}),
        "response": json.dumps(f"a{i}"),
        "request_metadata": {"mlflow.traceInputs": json.dumps({"q": f"q{i}"}),
                             "app_model": "gpt-4o-mini"},
        "spans": [], "tags": {"mlflow.traceName": "predict"},
    }  # fmt: skip
    if assessments is not None:
        record["assessments"] = assessments
    return record


def test_mlflow2_traces_without_feedback_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MLflow before 2.21 keeps no assessments: main wrote 0 ratings and said nothing."""
    path = tmp_path / "traces.json"
    path.write_text(json.dumps([_mlflow2_record(i, None) for i in range(3)]), encoding="utf-8")
    assert main(["import", "mlflow", str(path), "--out", str(tmp_path / "o")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "3 trace(s) with no assessment" in line


@pytest.mark.parametrize("as_text", [False, True])
def test_mlflow2_request_metadata_names_the_model(tmp_path: Path, as_text: bool) -> None:
    """MLflow 2.x calls the trace metadata request_metadata: --model-tag reads it,
    as an object or as JSON text (a frame's dict column written as a string)."""
    feedback = {"name": "relevance", "source": {"source_type": "AI_JUDGE",
                "source_id": "openai:/gpt-4o"}, "feedback": {"value": 4}}  # fmt: skip
    records = [_mlflow2_record(i, [feedback]) for i in range(3)]
    path = tmp_path / "traces.json"
    written = [
        {**r, "request_metadata": json.dumps(r["request_metadata"])} if as_text else r
        for r in records
    ]
    path.write_text(json.dumps(written), encoding="utf-8")
    out = tmp_path / "o"
    assert main(["import", "mlflow", str(path), "--out", str(out), "--model-tag", "app_model"]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    want = {(r["request_id"], r["request_metadata"]["app_model"]) for r in records}
    assert {(r["run_id"], r["model"]) for r in rows} == want
