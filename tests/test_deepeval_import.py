"""The deepeval import on test runs DeepEval 4.3.1 itself wrote
(tests/fixtures/deepeval/make_fixture.py: evaluate() with two local
DeepEvalBaseLLM judges, G-Eval metrics and Exact Match, one run per model under
test). The counts, scores, thresholds and pass/fail reconcile with a plain json
parse written here; the built warehouse's mean judge score per judge, model and
dimension equals the raw files' mean, and a judge grading its own model is a
self-judgment."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest

from judge_bias.cli import main
from tests.conftest import query
from tests.importing import assert_reconciled, import_and_build

FIXTURES = Path(__file__).parent / "fixtures" / "deepeval"
RUNS = sorted(FIXTURES.glob("latest_test_run_*.json"))


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def raw_scores() -> list[tuple[str, str, str, str, float, float, bool]]:
    """(judge, model, case, metric, score, threshold, success) from the files."""
    rows = []
    for path in RUNS:
        run = json.loads(path.read_text(encoding="utf-8"))["testRunData"]
        for case in run["testCases"]:
            model = (case.get("metadata") or {}).get("model") or run["hyperparameters"]["model"]
            for m in case["metricsData"]:
                if "evaluationModel" in m:
                    rows.append((m["evaluationModel"], model, case["name"], m["name"],
                                 m["score"], m["threshold"], m["success"]))  # fmt: skip
    return rows


def test_scores_reconcile_with_a_plain_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(RUNS) == 2
    assert main(["import", "deepeval", *map(str, RUNS), "--out", str(tmp_path)]) == 0
    raw = raw_scores()
    assert len(raw) == 2 * 4 * 4  # 2 runs x 4 cases x (2 judges x 2 G-Eval metrics)
    got = [
        (r["judge"], r["model"], r["test_case"], r["dimension"], float(r["label"]),
         float(r["threshold"]), r["success"] == "true")
        for r in read_csv(tmp_path / "judge_ratings.csv")
    ]  # fmt: skip
    assert sorted(got) == sorted(raw)
    # Exact Match has no evaluation model: counted, not written
    assert "8 score(s) of metrics without an evaluation model" in capsys.readouterr().err
    prompts = read_csv(tmp_path / "prompts.csv")
    assert len(prompts) == 4  # the same four inputs in both runs share their prompt ids
    scales = {(r["dimension"], r["label"]) for r in read_csv(tmp_path / "rating_scales.csv")}
    assert scales == {(d, s) for d in ("Correctness [GEval]", "Helpfulness [GEval]") for s in "01"}


def test_model_tag_and_a_run_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = json.loads(RUNS[0].read_text(encoding="utf-8"))
    run["testRunData"]["hyperparameters"] = {"llm": "my-model"}
    path = tmp_path / "latest_test_run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "deepeval", str(path), "--out", str(out)]) == 0
    assert {r["model"] for r in read_csv(out / "judge_ratings.csv")} == {""}
    assert "4 test case(s) without a 'model'" in capsys.readouterr().err
    assert main(["import", "deepeval", str(path), "--out", str(out), "--model-tag", "llm"]) == 0
    assert {r["model"] for r in read_csv(out / "judge_ratings.csv")} == {"my-model"}


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b'{"testRunLink": "https://app.confident-ai.com/x"}',
        b'{"testRunData": []}',
        b'{"goldens": [{"input": "q"}]}',  # a dataset, not a test run
    ],
)
def test_an_unreadable_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / ".latest_test_run.json"
    path.write_bytes(content)
    assert main(["import", "deepeval", str(path), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "unexpected" not in line


DEEPEVAL2 = sorted(FIXTURES.glob("deepeval2_test_run_*.json"))


def test_deepeval2_runs_name_the_model_from_additional_metadata(tmp_path: Path) -> None:
    """DeepEval 2.5.5's own files (make_fixture.py under 2.x): the run with no
    hyperparameters names the model only in each case's additionalMetadata."""
    assert len(DEEPEVAL2) == 2
    raw = []
    for path in DEEPEVAL2:
        run = json.loads(path.read_text(encoding="utf-8"))
        for case in run["testCases"]:
            model = (case.get("additionalMetadata") or run.get("hyperparameters"))["model"]
            raw += [(m["evaluationModel"], model, case["name"], m["name"], m["score"])
                    for m in case["metricsData"] if "evaluationModel" in m]  # fmt: skip
    assert len(raw) == 2 * 4 * 4 and {r[1] for r in raw} == {"gpt-4o", "llama-3-8b"}
    assert main(["import", "deepeval", *map(str, DEEPEVAL2), "--out", str(tmp_path)]) == 0
    got = [(r["judge"], r["model"], r["test_case"], r["dimension"], float(r["label"]))
           for r in read_csv(tmp_path / "judge_ratings.csv")]  # fmt: skip
    assert sorted(got) == sorted(raw)


def test_an_evaluation_result_dump_is_read_by_field_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate()'s EvaluationResult saved with model_dump() (DeepEval 2.5.5):
    test_results, metrics_data, evaluation_model: the field names, not the aliases.
    It records no model under test: written empty and counted."""
    path = FIXTURES / "evaluation_result_llama-3-8b.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    raw = [(m["evaluation_model"], case["name"], m["name"], m["score"], m["threshold"])
           for case in data["test_results"] for m in case["metrics_data"]
           if m["evaluation_model"]]  # fmt: skip
    assert len(raw) == 16
    assert main(["import", "deepeval", str(path), "--out", str(tmp_path)]) == 0
    rows = read_csv(tmp_path / "judge_ratings.csv")
    got = [(r["judge"], r["test_case"], r["dimension"], float(r["label"]), float(r["threshold"]))
           for r in rows]  # fmt: skip
    assert sorted(got) == sorted(raw)
    assert {r["model"] for r in rows} == {""}
    assert "4 test case(s) without a 'model'" in capsys.readouterr().err


def test_a_deepeval_0_20_run_reads_metrics_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DeepEval 0.20 (deepeval/test_run/api.py of 0.20.58: APITestCase.metricsMetadata,
    MetricsMetadata.metric/score/threshold/success/reason/evaluationModel;
    test_run.py: TestRun.configurations from get_hyperparameters(), saved with
    dict(by_alias=True, exclude_none=True))."""
    cases = [
        {"name": f"test_case_{i}", "input": f"q{i}", "actualOutput": f"a{i}", "success": True,
         "runDuration": 1.0, "metricsMetadata": [
             {"metric": "Answer Relevancy", "score": 0.25 * i, "threshold": 0.5,
              "success": i > 1, "reason": "r", "evaluationModel": "gpt-4-turbo"},
             {"metric": "Exact Match", "score": 1.0, "threshold": 1.0, "success": True}]}
        for i in range(4)
    ]  # fmt: skip
    run = {"testFile": "test_x.py", "deployment": True, "testCases": cases,
           "metricScores": [], "configurations": {"model": "gpt-3.5-turbo"}}  # fmt: skip
    path = tmp_path / "20240301_101010"
    path.write_text(json.dumps(run), encoding="utf-8")
    assert main(["import", "deepeval", str(path), "--out", str(tmp_path / "out")]) == 0
    got = [(r["judge"], r["model"], r["dimension"], float(r["label"]), r["success"])
           for r in read_csv(tmp_path / "out" / "judge_ratings.csv")]  # fmt: skip
    want = [("gpt-4-turbo", "gpt-3.5-turbo", "Answer Relevancy", 0.25 * i,
             "true" if i > 1 else "false") for i in range(4)]  # fmt: skip
    assert got == want
    assert "4 score(s) of metrics without an evaluation model" in capsys.readouterr().err


def test_a_deepeval_0_20_40_run_records_no_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DeepEval 0.20.0-0.20.40 (deepeval/api.py of 0.20.0, test_run/api.py of 0.20.40:
    MetricsMetadata is metric, score and minimumScore): no judge model is recorded,
    so nothing is imported and the line says so and names --judge; with --judge
    METRIC=MODEL every score is read, minimumScore as its threshold."""
    cases = [
        {"name": f"test_case_{i}", "input": f"q{i}", "actualOutput": f"a{i}",
         "expectedOutput": f"e{i}", "success": i > 1, "threshold": 0.5, "runDuration": 1.0,
         "metricsMetadata": [{"metric": "Answer Relevancy", "score": 0.25 * i,
                              "minimumScore": 0.5}]}
        for i in range(4)
    ]  # fmt: skip
    run = {"testFile": "test_x.py", "testCases": cases, "metricScores": [],
           "configurations": {"model": "gpt-3.5-turbo"}}  # fmt: skip
    path = tmp_path / "20240101_101010"
    path.write_text(json.dumps(run), encoding="utf-8")
    assert main(["import", "deepeval", str(path), "--out", str(tmp_path / "a")]) == 0
    [line] = [x for x in capsys.readouterr().err.splitlines() if "deepeval:" in x]
    assert "4 score(s)" in line and "records no judge model" in line
    assert "Answer Relevancy (4)" in line and "--judge" in line and "code" not in line
    assert read_csv(tmp_path / "a" / "judge_ratings.csv") == []
    args = ["--judge", "Answer Relevancy=gpt-4", "--out", str(tmp_path / "b")]
    assert main(["import", "deepeval", str(path), *args]) == 0
    got = [(r["judge"], r["model"], r["dimension"], float(r["label"]), float(r["threshold"]))
           for r in read_csv(tmp_path / "b" / "judge_ratings.csv")]  # fmt: skip
    want = [("gpt-4", "gpt-3.5-turbo", m["metric"], m["score"], m["minimumScore"])
            for c in cases for m in c["metricsMetadata"]]  # fmt: skip
    assert got == want


@pytest.fixture(scope="module")
def deepeval_build(tmp_path_factory: pytest.TempPathFactory):
    return import_and_build("deepeval", RUNS, tmp_path_factory)


@pytest.mark.dbt
def test_builds_and_the_mean_scores_are_the_raw_files(deepeval_build) -> None:
    out, result = deepeval_build
    assert assert_reconciled(out, result)["judge_ratings"] == (32, 0)
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for judge, model, _, metric, score, _, _ in raw_scores():
        sums[(judge, model, metric)].append(score)
    got = query(
        result.db_path,
        "select judge, model, dimension, mean_judge_score_norm, n from agg_judge_model_scores "
        "where dimension <> 'all'",
    )
    assert len(got) == len(sums) == 8
    for row in got.itertuples():
        scores = sums[(row.judge, row.model, row.dimension)]
        assert row.n == len(scores) == 4
        # the scale is 0-1, so the normalised score is the score
        assert row.mean_judge_score_norm == pytest.approx(sum(scores) / len(scores), abs=1e-12)
    self_rows = query(result.db_path, "select judge, model from fct_judge_ratings where is_self")
    assert set(map(tuple, self_rows.to_numpy())) == {("gpt-4o", "gpt-4o")}
    assert len(self_rows) == 8  # gpt-4o grading gpt-4o's 4 cases on 2 metrics
