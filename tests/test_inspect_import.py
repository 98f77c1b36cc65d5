"""The inspect import on logs this test writes with inspect_ai's own eval() and
mockllm models (no network): model-graded scores become judge_ratings with the
grader as judge, a grader grading its own model is a self-judgment, .eval and
.json logs read alike, and the warehouse's scores equal the grades given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import query
from tests.importing import assert_reconciled, import_and_build

# (evaluated model, grader, grades the grader gives, log format)
RUNS = [
    ("mockllm/alpha", "mockllm/alpha", ["GRADE: C", "GRADE: I", "GRADE: C", "GRADE: P"], "eval"),
    ("mockllm/beta", "mockllm/alpha", ["GRADE: I", "GRADE: I", "GRADE: C", "GRADE: X"], "json"),
]
LETTER = {"C": 1.0, "P": 0.5, "I": 0.0}


def write_log(
    log_dir: Path,
    model: str,
    grader: str,
    grades: list[str],
    fmt: str,
    replies: tuple[str, str] | None = None,
) -> Path:
    """One Inspect evaluation of four samples, graded by model_graded_qa and match;
    ``replies``: the model names the evaluated model's and the grader's replies give
    (an OpenAI snapshot such as ``gpt-4o-2024-08-06``), else the called name's model."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match, model_graded_qa
    from inspect_ai.solver import generate

    def output(name: str, text: str) -> ModelOutput:
        out = ModelOutput.from_content(model=name.split("/")[-1], content=text)
        # with usage given, mockllm does not count tokens (tiktoken would download)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    samples = [Sample(input=f"question {i}", target=f"a{i}", id=f"s{i}") for i in range(4)]
    said_model, said_grader = replies or (model, grader)
    subject = get_model(model, custom_outputs=[output(said_model, f"a{i}") for i in (0, 1, 9, 3)])
    judge = get_model(grader, custom_outputs=[output(said_grader, g) for g in grades])
    task = Task(
        dataset=samples, solver=generate(), scorer=[model_graded_qa(partial_credit=True), match()]
    )
    [log] = eval(
        task, model=subject, model_roles={"grader": judge}, log_dir=str(log_dir),
        log_format=fmt, display="none", max_samples=1,
    )  # fmt: skip
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def inspect_build(tmp_path_factory: pytest.TempPathFactory):
    logs = tmp_path_factory.mktemp("logs")
    files = [write_log(logs / str(i), *run) for i, run in enumerate(RUNS)]
    return files, *import_and_build("inspect", files, tmp_path_factory)


def test_grader_is_the_judge_and_scores_are_the_grades(inspect_build) -> None:
    files, out, result = inspect_build
    assert {f.suffix for f in files} == {".eval", ".json"}
    counts = assert_reconciled(out, result)
    # 2 logs x 4 samples x 2 scorers; "GRADE: X" is no grade: Inspect scores it
    # NaN, which the build rejects
    assert counts["judge_ratings"] == (16, 1)
    fct = query(
        result.db_path,
        "select judge, model, prompt_id, dimension, judge_score, is_self "
        "from fct_judge_ratings order by model, prompt_id, dimension",
    )
    graded = fct[fct["dimension"] == "model_graded_qa"]
    assert set(graded["judge"]) == {"alpha"}
    expected = [
        (model.split("/")[1], f"task-s{i}", LETTER[g[-1]], model == grader)
        for model, grader, grades, _ in RUNS
        for i, g in enumerate(grades)
        if g[-1] in LETTER
    ]
    assert (
        list(
            graded[["model", "prompt_id", "judge_score", "is_self"]].itertuples(
                index=False, name=None
            )
        )
        == expected
    )
    matched = fct[fct["dimension"] == "match"]
    assert set(matched["judge"]) == {"scorer:match"}
    # the subject answers a0, a1, a9, a3 to targets a0..a3: sample s2 does not match
    assert list(matched["judge_score"]) == [1.0, 1.0, 0.0, 1.0] * 2
    rejected = query(result.db_path, "select reason from rejected_rows")["reason"]
    assert list(rejected) == [
        "score nan is outside the scale [0.0, 1.0] of dimension 'model_graded_qa'"
    ]


FIXTURES = Path(__file__).parent / "fixtures" / "inspect"
OLD_LOG = FIXTURES / "probe_0.3.60.eval"  # inspect_ai 0.3.60's own log: README there


def _scores_in_zip(path: Path) -> list[tuple[str, int, str, object]]:
    """(sample id, epoch, scorer, value) of every score, read from the .eval zip's
    samples/*.json with the json module alone (not inspect_ai's reader)."""
    import json
    import zipfile

    with zipfile.ZipFile(path) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    return [
        (s["id"], s["epoch"], name, score["value"])
        for s in samples
        for name, score in s["scores"].items()
    ]


def _step_models(path: Path) -> dict[tuple[str, str], list[str]]:
    """(sample id, scorer) -> the models called inside that scorer's step, read from
    the .eval zip's events with the json module alone (not inspect_ai's reader)."""
    import json
    import zipfile

    found: dict[tuple[str, str], list[str]] = {}
    with zipfile.ZipFile(path) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    for sample in samples:
        step = None
        for event in sample["events"]:
            if event["event"] == "step" and event.get("type") == "scorer":
                step = event["name"] if event["action"] == "begin" else None
            elif event["event"] == "model" and step is not None:
                found.setdefault((sample["id"], step), []).append(event["model"])
    return found


def test_a_log_of_inspect_0_3_60_names_its_grader_from_the_transcript(tmp_path: Path) -> None:
    """inspect_ai 0.3.60's model_graded_qa kept no grading messages: the grader
    (``model_graded_qa(model="mockllm/grader")`` in probe_task.py, not the evaluated
    model) is the model called in the scorer's step. main named it
    ``scorer:model_graded_qa``, a code scorer."""
    import csv
    import json
    import zipfile

    from judge_bias.cli import main

    with zipfile.ZipFile(OLD_LOG) as z:
        header = json.loads(z.read("header.json"))
    [grader] = {m for (_, scorer), ms in _step_models(OLD_LOG).items() for m in ms}
    declared = {
        s["name"]: (s.get("params") or {}).get("model") for s in header["results"]["scores"]
    }
    assert grader == declared["model_graded_qa"] != header["eval"]["model"]

    expected = sorted(
        (f"probe-{sid}", epoch, scorer, value)
        for sid, epoch, scorer, value in _scores_in_zip(OLD_LOG)
    )
    assert len(expected) == 24
    out = tmp_path / "out"
    assert main(["import", "inspect", str(OLD_LOG), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    got = sorted((r["prompt_id"], int(r["run_id"]), r["dimension"], r["label"]) for r in rows)
    assert got == expected
    judges = {(r["dimension"], r["judge"]) for r in rows}
    assert judges == {
        ("model_graded_qa", grader),
        ("match", "scorer:match"),
        ("includes", "scorer:includes"),
    }
    # the transcript alone names it (a grader given as a role or by default is in no
    # scorer's params): the log with its results' params removed
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(OLD_LOG))
    for score in log.results.scores if log.results else []:
        score.params = {}
    write_eval_log(log, str(tmp_path / "no_params.eval"))
    assert main(["import", "inspect", str(tmp_path / "no_params.eval"), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        assert {(r["dimension"], r["judge"]) for r in csv.DictReader(fh)} == judges


AWK_LOG = FIXTURES / "awk_0.3.60.eval"  # inspect_ai 0.3.60 on awk_task.py: README there


def test_a_scorer_step_that_called_several_models_credits_none_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """inspect_ai 0.3.60's own log of awk_task.py: model_graded_qa(model=[a, b]) calls
    both graders, two_call calls a grader and then the evaluated model, and
    model_graded_qa(model=c) calls c alone. Only c's scores name their grader by
    the call; the others are credited to the scorer (neither declared one model),
    counted on stderr. fmt25 credited the last model called: b, and the evaluated
    model itself (a false self-judgment)."""
    import csv
    import json
    import zipfile

    from judge_bias.cli import main

    with zipfile.ZipFile(AWK_LOG) as z:
        header = json.loads(z.read("header.json"))
    evaluated = header["eval"]["model"]
    declared = {
        s["name"]: (s.get("params") or {}).get("model") for s in header["results"]["scores"]
    }
    steps = _step_models(AWK_LOG)
    expected = {}
    for (_, scorer), called in steps.items():
        one = declared[scorer] if isinstance(declared[scorer], str) else None
        expected[scorer] = called[0] if len(set(called)) == 1 else one or f"scorer:{scorer}"
    assert {k: sorted(set(v)) for (_, k), v in steps.items()} == {
        "model_graded_qa": ["mockllm/a", "mockllm/b"],
        "two_call": ["mockllm/grader", evaluated],
        "model_graded_qa1": ["mockllm/c"],
    }
    out = tmp_path / "out"
    assert main(["import", "inspect", str(AWK_LOG), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and {(r["dimension"], r["judge"]) for r in rows} == set(expected.items())
    assert evaluated not in {r["judge"] for r in rows}
    err = capsys.readouterr().err
    assert "2 score(s) of model_graded_qa from a step that called several models" in err
    assert "2 score(s) of two_call from a step" in err and "model_graded_qa1" not in err


def test_a_run_that_ended_in_error_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log whose run failed (status error, samples without scores): the importer
    names the status and the error's first line, not only the unscored samples."""
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log

    from judge_bias.cli import main

    log = read_eval_log(str(OLD_LOG))
    log.status = "error"
    log.error = EvalError(  # a message that begins with a blank line
        message="\n  \nConnectionError: no route\ndetails", traceback="", traceback_ansi=""
    )
    for sample in log.samples or []:
        sample.scores = None
    path = tmp_path / "failed.eval"
    write_eval_log(log, str(path))
    assert main(["import", "inspect", str(path), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    [line] = [x for x in err.splitlines() if "ended" in x]
    assert "'error'" in line and line.endswith("ConnectionError: no route")
    assert "8 sample(s) without scores" in err


def test_a_log_with_spans_and_no_grading_messages_names_the_grader(tmp_path: Path) -> None:
    """Later logs put a scorer's model calls in a span (SpanBeginEvent/SpanEndEvent,
    not 0.3.60's steps): with the grading messages removed from the scores' metadata,
    the grader is still the model called in model_graded_qa's span (the grader role,
    mockllm/alpha), and match stays a code scorer."""
    import csv

    from inspect_ai.log import read_eval_log, write_eval_log

    from judge_bias.cli import main

    model, grader, grades, _ = RUNS[1]
    log = read_eval_log(str(write_log(tmp_path / "logs", model, grader, grades, "eval")))
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            score.metadata = None
    path = tmp_path / "stripped.eval"
    write_eval_log(log, str(path))
    out = tmp_path / "out"
    assert main(["import", "inspect", str(path), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        judges = {(r["dimension"], r["judge"]) for r in csv.DictReader(fh)}
    assert judges == {("model_graded_qa", grader), ("match", "scorer:match")}


def test_a_version_1_log_names_the_grader_its_scorer_declared(tmp_path: Path) -> None:
    """inspect_ai 0.3.5's log (version 1: one ``score`` per sample, no transcript,
    replies without a model): the grader is the model the scorer was given
    (``model_graded_qa(model="fixed/grader")`` in probe_task_0_3_5.py), kept in the
    log's results. main named it ``scorer:model_graded_qa``."""
    import csv
    import json

    from judge_bias.cli import main

    path = FIXTURES / "probe_0.3.5.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    expected = sorted((f"probe-{s['id']}", s["epoch"], s["score"]["value"]) for s in raw["samples"])
    assert raw["version"] == 1 and len(expected) == 8
    out = tmp_path / "out"
    assert main(["import", "inspect", str(path), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted((r["prompt_id"], int(r["run_id"]), r["label"]) for r in rows) == expected
    assert {r["judge"] for r in rows} == {"fixed/grader"}


def _import_names(*paths: Path, out: Path) -> tuple[set[tuple[str, str]], dict[str, str]]:
    """The (judge, model) pairs of model_graded_qa's ratings and models.csv's alias ->
    model, after ``judge-bias import inspect`` of the logs."""
    import csv

    from judge_bias.cli import main

    assert main(["import", "inspect", *map(str, paths), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        pairs = {(r["judge"], r["model"]) for r in csv.DictReader(fh) if r["scorer"] != "match"}
    with (out / "models.csv").open(newline="", encoding="utf-8") as fh:
        return pairs, {r["alias"]: r["model"] for r in csv.DictReader(fh)}


@pytest.mark.parametrize(
    ("model", "grader", "replies", "judge"),
    [
        # one name called for both, one snapshot answering it: the log ties them
        ("mockllm/gpt-4o", "mockllm/gpt-4o", ("gpt-4o-2024-08-06",) * 2, "mockllm/gpt-4o"),
        # the name called answered by two snapshots: no tie, two models
        (
            "mockllm/gpt-4o",
            "mockllm/gpt-4o",
            ("gpt-4o-2024-08-06", "gpt-4o-2024-05-13"),
            "gpt-4o-2024-05-13",
        ),
        # another name called for the grader: tied to its own name, not the subject's
        ("mockllm/gpt-4o", "mockllm/judge", ("gpt-4o-2024-08-06", "judge-1"), "mockllm/judge"),
        # one snapshot answering two names called: no tie, the reply's name
        ("mockllm/gpt-4o", "mockllm/judge", ("gpt-4o-2024-08-06",) * 2, "gpt-4o-2024-08-06"),
    ],
)
def test_a_grader_reply_naming_a_snapshot_is_tied_by_the_log(
    tmp_path: Path, model: str, grader: str, replies: tuple[str, str], judge: str
) -> None:
    """An OpenAI grader's reply names the snapshot (``gpt-4o-2024-08-06``), the
    evaluation the name called (``openai/gpt-4o``): imp26 names the judge as the log
    called it when the log's model events tie the two one to one, so a model grading
    itself is a self-judgment without ``--models``; a name answered by two snapshots
    is two models. fmt25 named the judge by the reply (no self-judgment)."""
    grades = ["GRADE: C", "GRADE: I", "GRADE: C", "GRADE: P"]
    path = write_log(tmp_path / "logs", model, grader, grades, "eval", replies)
    pairs, canonical = _import_names(path, out=tmp_path / "out")
    assert pairs == {(judge, model)}
    is_self = model == grader and replies[0] == replies[1]
    assert (canonical[judge] == canonical[model]) is is_self


GRADES = ["GRADE: C", "GRADE: I", "GRADE: C", "GRADE: P"]


def test_two_logs_answering_one_name_with_two_snapshots_tie_nothing(tmp_path: Path) -> None:
    """Log A's mockllm/gpt-4o answered as gpt-4o-2024-08-06, log B's as -05-13: each
    log alone ties its snapshot to the name, but one import of both must not (the
    name is answered by two snapshots: two models). The reviewer's multi.py: imp26's
    first tie, per log, merged them into one judge mockllm/gpt-4o."""
    gpt4o = "mockllm/gpt-4o"
    a = write_log(tmp_path / "a", gpt4o, gpt4o, GRADES, "eval", ("gpt-4o-2024-08-06",) * 2)
    b = write_log(tmp_path / "b", gpt4o, gpt4o, GRADES, "eval", ("gpt-4o-2024-05-13",) * 2)
    pairs, _ = _import_names(a, b, out=tmp_path / "out")
    assert pairs == {("gpt-4o-2024-08-06", gpt4o), ("gpt-4o-2024-05-13", gpt4o)}
    # each log alone: its snapshot tied to the name called
    assert _import_names(a, out=tmp_path / "out_a")[0] == {(gpt4o, gpt4o)}


def test_the_sample_output_alone_ties_the_evaluated_models_name(tmp_path: Path) -> None:
    """With every model event dropped from the transcripts, the only statement of
    the pair is the samples' outputs (``sample.output.model`` gpt-4o-2024-08-06,
    answering ``eval.model`` mockllm/gpt-4o): the grader's reply of that snapshot is
    the evaluated model, a self-judgment. Without the pair, the judge is the reply's
    snapshot name."""
    from inspect_ai.log import read_eval_log, write_eval_log

    gpt4o = "mockllm/gpt-4o"
    path = write_log(tmp_path / "logs", gpt4o, gpt4o, GRADES, "eval", ("gpt-4o-2024-08-06",) * 2)
    log = read_eval_log(str(path))
    for sample in log.samples or []:
        sample.events = [e for e in sample.events if e.event != "model"]
        assert sample.output.model == "gpt-4o-2024-08-06"
    stripped = tmp_path / "stripped.eval"
    write_eval_log(log, str(stripped))
    pairs, canonical = _import_names(stripped, out=tmp_path / "out")
    assert pairs == {(gpt4o, gpt4o)}


def test_a_step_that_called_several_models_falls_back_to_its_declared_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """awk_0.3.60.eval's two_call called mockllm/grader and then the evaluated model;
    with the scorer's params declaring one model (as ``model_graded_qa(model=...)``
    would), its scores are credited to that model, said on stderr; model_graded_qa's
    list of two declares no one model and stays the scorer."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(AWK_LOG))
    assert log.results is not None
    for score in log.results.scores:
        if score.name == "two_call":
            score.params = {**(score.params or {}), "model": "mockllm/declared"}
    path = tmp_path / "declared.eval"
    write_eval_log(log, str(path))
    import csv

    from judge_bias.cli import main

    assert main(["import", "inspect", str(path), "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        judges = {(r["dimension"], r["judge"]) for r in csv.DictReader(fh)}
    assert judges == {
        ("two_call", "mockllm/declared"),
        ("model_graded_qa", "scorer:model_graded_qa"),
        ("model_graded_qa1", "mockllm/c"),
    }
    err = capsys.readouterr().err
    assert "2 score(s) of two_call from a step" in err and "credited to mockllm/declared" in err
