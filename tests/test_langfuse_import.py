"""The langfuse import on records laid out field for field from Langfuse's own schemas
(tests/fixtures/langfuse/make_fixtures.py names the source files): the /scores API
pages with traces and observations, and the UI's CSV/JSON scores export. Counts
reconcile against a plain json/csv parse written here, and the warehouse's
judge-human Spearman equals scipy's on the raw records."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from judge_bias.cli import main
from tests.conftest import query
from tests.importing import assert_reconciled, csv_records, import_and_build

FIXTURES = Path(__file__).parent / "fixtures" / "langfuse"
PAGES = [FIXTURES / "scores_page1.json", FIXTURES / "scores_page2.json"]
TRACES = [FIXTURES / "traces.json", FIXTURES / "observations.json"]


def api_scores() -> list[dict]:
    return [s for p in PAGES for s in json.loads(p.read_text(encoding="utf-8"))["data"]]


def export_scores() -> list[dict]:
    with (FIXTURES / "scores_export.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def spearman_from(scores: list[dict], name: str) -> tuple[float, int]:
    """scipy's Spearman of the EVAL value and the mean ANNOTATION value per trace."""
    judged = {s["traceId"]: float(s["value"]) for s in scores
              if s["source"] == "EVAL" and s["name"] == name and s["traceId"]}  # fmt: skip
    humans: dict[str, list[float]] = {}
    for s in scores:
        if s["source"] == "ANNOTATION" and s["name"] == name and s["traceId"]:
            humans.setdefault(s["traceId"], []).append(float(s["value"]))
    pairs = [(judged[t], sum(v) / len(v)) for t, v in humans.items() if t in judged]
    x, y = zip(*pairs, strict=True)
    return spearmanr(x, y).statistic, len(pairs)


@pytest.fixture(scope="module")
def api_build(tmp_path_factory: pytest.TempPathFactory):
    return import_and_build(
        "langfuse", [*PAGES, *TRACES], tmp_path_factory, "--judge", "helpful=gpt-4o-mini"
    )


def test_api_pages_reconcile_with_the_raw_records(api_build) -> None:
    out, result = api_build
    scores = api_scores()
    meta = json.loads(PAGES[0].read_text(encoding="utf-8"))["meta"]
    assert len(scores) == meta["totalItems"] == 64
    item = [s for s in scores if s["traceId"] or s["sessionId"]]
    evals = [s for s in item if s["source"] == "EVAL"]
    annotations = [s for s in item if s["source"] == "ANNOTATION"]
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (len(evals), 0) == (30, 0)
    assert counts["human_annotations"] == (len(annotations), 0) == (29, 0)


def test_the_judge_is_the_execution_traces_model_else_the_mapping(api_build) -> None:
    _, result = api_build
    fct = query(
        result.db_path,
        "select dimension, judge, count(*) n, sum(is_self::int) n_self "
        "from fct_judge_ratings group by all order by all",
    )
    # correctness and tone: the GENERATION model of each score's executionTraceId;
    # helpful has no execution trace: --judge helpful=gpt-4o-mini. gpt-4o judging
    # the traces gpt-4o answered (every other trace) is a self-judgment.
    assert [tuple(r) for r in fct.itertuples(index=False)] == [
        ("correctness", "gpt-4o", 10, 5),
        ("helpful", "gpt-4o-mini", 10, 0),
        ("tone", "claude-3-5-haiku-20241022", 10, 0),
    ]


def test_api_judge_human_spearman_equals_the_raw_records(api_build) -> None:
    _, result = api_build
    expected, n = spearman_from(api_scores(), "correctness")
    got = query(
        result.db_path,
        "select spearman, n from agreement_judge_human "
        "where judge = 'gpt-4o' and dimension = 'correctness'",
    )
    assert got["n"].item() == n == 8
    assert got["spearman"].item() == pytest.approx(expected, abs=1e-9)


@pytest.fixture(scope="module")
def export_build(tmp_path_factory: pytest.TempPathFactory):
    return import_and_build("langfuse", [FIXTURES / "scores_export.csv", *TRACES], tmp_path_factory)


def test_ui_csv_export_builds_and_agrees_with_the_raw_file(export_build) -> None:
    out, result = export_build
    rows = export_scores()
    item = [r for r in rows if r["traceId"] or r["sessionId"]]
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (sum(r["source"] == "EVAL" for r in item), 0)
    assert counts["human_annotations"] == (sum(r["source"] == "ANNOTATION" for r in item), 0)
    # the UI export has no executionTraceId: without --judge each evaluator is
    # its own judge; annotators are named by authorUserName
    judges = query(result.db_path, "select distinct judge from fct_judge_ratings order by 1")
    assert list(judges["judge"]) == [
        "evaluator:correctness", "evaluator:helpful", "evaluator:tone",
    ]  # fmt: skip
    with (out / "human_annotations.csv").open(newline="", encoding="utf-8") as fh:
        assert {r["annotator_id"] for r in csv.DictReader(fh)} == {"Ann One", "Ann Two"}
    expected, n = spearman_from(rows, "correctness")
    got = query(
        result.db_path,
        "select spearman, n from agreement_judge_human "
        "where judge = 'evaluator:correctness' and dimension = 'correctness'",
    )
    assert (got["n"].item(), got["spearman"].item()) == (n, pytest.approx(expected, abs=1e-9))


def test_every_export_layout_gives_the_same_labels(tmp_path: Path) -> None:
    """API pages, UI CSV and UI JSON: the same label for every score id."""
    labels = {}
    for name, files in {
        "api": PAGES, "csv": [FIXTURES / "scores_export.csv"],
        "json": [FIXTURES / "scores_export.json"],
    }.items():  # fmt: skip
        out = tmp_path / name
        assert main(["import", "langfuse", *map(str, files), "--out", str(out)]) == 0
        got = {}
        for kind in ("judge_ratings", "human_annotations"):
            with (out / f"{kind}.csv").open(newline="", encoding="utf-8") as fh:
                got |= {
                    r["score_id"]: (r["dimension"], float_or(r["label"]))
                    for r in csv.DictReader(fh)
                }
        labels[name] = got
    assert labels["api"] == labels["csv"] == labels["json"] and len(labels["api"]) == 59


def float_or(text: str) -> object:
    try:
        return float(text)
    except ValueError:
        return text


def _score(i: int, source: str, value: int, **extra: object) -> dict:
    return {
        "id": f"{source}-{i}", "traceId": f"t{i}", "name": "ok", "source": source,
        "dataType": "BOOLEAN", "value": value, "stringValue": ["False", "True"][value],
        **extra,
    }  # fmt: skip


def test_booleans_only_one_constant_judge_build(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One judge that says True to everything, booleans only, no traces given: every
    row imports (model 'unknown', counted) and the build is green."""
    scores = [_score(i, "EVAL", 1) for i in range(5)]
    scores += [_score(i, "ANNOTATION", i % 2, authorUserId="u1") for i in range(5)]
    path = tmp_path_factory.mktemp("awkward") / "scores.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in scores) + "\n", encoding="utf-8")
    out, result = import_and_build("langfuse", [path], tmp_path_factory, "--judge", "ok=gpt-4o")
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (5, 0) and counts["human_annotations"] == (5, 0)
    fct = query(result.db_path, "select judge, model, judge_score from fct_judge_ratings")
    assert set(fct["judge"]) == {"gpt-4o"} and set(fct["model"]) == {"unknown"}
    assert list(fct["judge_score"]) == [1] * 5


def test_ui_table_exports_as_csv_name_the_models_as_the_api_pages_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The UI's observations and traces table exports as CSV (make_fixtures.py's
    write_table_exports, from the same records as observations.json and traces.json)
    beside the scores CSV: every file written equals the one the API pages give, and
    each rating's model is its trace's GENERATION model read from the CSV with the
    csv module alone (main refused both files: "the CSV has no id, source, ...", so a
    UI-only export left every model 'unknown'). A sessions export is refused in one
    line naming the three exports read."""
    scores = FIXTURES / "scores_export.csv"
    tables = [FIXTURES / "observations_export.csv", FIXTURES / "traces_export.csv"]
    judge = ["--judge", "correctness=gpt-4o", "--judge", "tone=gpt-4o"]
    for name, files in (("csv", tables), ("api", TRACES)):
        args = ["import", "langfuse", str(scores), *map(str, files), "--out", str(tmp_path / name)]
        assert main([*args, *judge]) == 0
    for kind in ("judge_ratings", "human_annotations", "prompts", "completions", "models"):
        api, ui = (
            (tmp_path / d / f"{kind}.csv").read_text(encoding="utf-8") for d in ("api", "csv")
        )
        assert ui == api, kind
    with tables[0].open(newline="", encoding="utf-8") as fh:
        model_of = {
            o["traceId"]: o["model"] for o in csv.DictReader(fh) if o["type"] == "GENERATION"
        }
    with (tmp_path / "csv" / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        rated = [(r["prompt_id"].split(":")[0], r["model"]) for r in csv.DictReader(fh)]
    assert len(rated) == 30 and all(model == model_of[trace] for trace, model in rated)
    with (tmp_path / "csv" / "prompts.csv").open(newline="", encoding="utf-8") as fh:
        texts = {r["prompt_id"]: r["prompt_text"] for r in csv.DictReader(fh)}
    assert json.loads(texts["trace-00"]) == {"question": "Question 0: what is 0 + 0?"}
    sessions = tmp_path / "sessions.csv"
    sessions.write_text('"id","userIds","countTraces"\n"s1","[]","2"\n', encoding="utf-8")
    assert main(["import", "langfuse", str(sessions), "--out", str(tmp_path / "s")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()[-1:]
    assert "observations (id, traceId, type, startTime)" in line and str(sessions) in line


def _rewrite_csv(source: Path, path: Path, edit) -> None:
    """The CSV ``source`` with ``edit(rows)`` applied to its rows (header first),
    written back as Langfuse's writer quotes it (every cell quoted)."""
    with source.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    edit(rows)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


@pytest.mark.parametrize(
    "name", ["observations_export.csv", "traces_export.csv", "scores_export.csv"]
)
def test_a_short_csv_row_is_a_one_line_error_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A row cut short (csv fills the missing cells with None; no Langfuse writer
    gives one): a one-line error naming the file's line, not a TypeError traceback
    (the table exports) nor silently null cells (the scores export)."""
    path = tmp_path / f"short_{name}"

    def edit(rows: list[list[str]]) -> None:
        rows[3] = rows[3][:3]

    _rewrite_csv(FIXTURES / name, path, edit)
    with path.open(newline="", encoding="utf-8") as fh:
        width = len(next(csv.reader(fh)))
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}: line 4: 3 cell(s)" in err[0], err
    assert f"header of {width} columns" in err[0]


def _old_writer_cell(value: str) -> str:
    """A cell written by JSON.stringify and returned as it is when it already starts
    and ends with a quote (else quoted with quotes doubled): a quote inside a text is
    escaped with a backslash (``\\"``), not doubled as RFC 4180 wants, the kind of
    broken quote escaping langfuse/langfuse#2937 reports of a CSV export. Which
    Langfuse versions wrote it is not confirmed: the cell is a way a row gets one
    cell longer than its header."""
    text = json.dumps(value, ensure_ascii=False)
    return text if text.startswith('"') and text.endswith('"') else '"' + text + '"'


def _scores_csv_with_split_comment(path: Path, bad: int) -> tuple[list[dict], list[str]]:
    """The scores export with score ``bad``'s comment holding a quote and a comma,
    every cell written by _old_writer_cell: that row (file line bad + 2) is one cell
    longer than the header. Returns the rows and the file's lines."""
    rows = export_scores()
    header = list(rows[0])
    lines = [",".join(_old_writer_cell(h) for h in header)]
    for i, row in enumerate(rows):
        if i == bad:
            row = {**row, "comment": 'He said "fine, mostly" and left.'}
        lines.append(",".join(_old_writer_cell(row[h]) for h in header))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with path.open(newline="", encoding="utf-8") as fh:
        widths = [len(r) for r in csv.reader(fh)]
    assert widths[bad + 1] == len(header) + 1 and set(widths) == {len(header), len(header) + 1}
    return rows, lines


def test_a_long_csv_row_is_written_through_and_rejected_with_its_cells(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scores-export row one cell longer than its header (a comment split at its
    comma): none of its values is trusted, so it is written through to
    judge_ratings.csv with its score id and an empty label, and the build rejects
    it (missing_value) with the row's cells in its raw values; stderr says how many
    rows were read, whole and written through. Every other score is imported as from
    the file without that row (session 25 refused the file; imp26's first fix left
    the row out, a silent loss in the build's counts)."""
    tmp = tmp_path_factory.mktemp("long")
    bad = 2  # the third score: file line 4
    path = tmp / "scores_export.csv"
    rows, lines = _scores_csv_with_split_comment(path, bad)
    out, result = import_and_build("langfuse", [path], tmp_path_factory)
    [line] = [x for x in capsys.readouterr().err.splitlines() if "more cells" in x]
    width = len(rows[0])
    assert f"{path}: {len(rows)} row(s) read, {len(rows) - 1} whole, 1 of more cells" in line
    assert f"(line 4 ({width + 1} cells)), written through to judge_ratings.csv" in line
    counts = assert_reconciled(out, result)
    item = [r for r in rows if r["traceId"] or r["sessionId"]]
    # the row written through in place of its score (an EVAL score), and rejected
    assert rows[bad]["source"] == "EVAL" and item.count(rows[bad]) == 1
    assert counts["judge_ratings"] == (sum(r["source"] == "EVAL" for r in item), 1)
    rejected = query(
        result.db_path,
        "select reason_code, raw_values from rejected_rows where source = 'judge_ratings'",
    )
    [(code, raw)] = rejected.itertuples(index=False)
    assert code == "missing_value" and rows[bad]["id"] in raw and "mostly" in raw

    kept = tmp / "kept.csv"  # the reference: the same file without that row
    kept.write_text("\n".join(lines[: bad + 1] + lines[bad + 2 :]) + "\n", encoding="utf-8")
    assert main(["import", "langfuse", str(kept), "--out", str(tmp / "k")]) == 0
    got = csv_rows(out / "judge_ratings.csv")
    assert [r for r in got if r["score_id"] != rows[bad]["id"]] == csv_rows(
        tmp / "k" / "judge_ratings.csv"
    )
    for kind in ("human_annotations", "prompts", "completions", "rating_scales", "models"):
        assert (out / f"{kind}.csv").read_text() == (tmp / "k" / f"{kind}.csv").read_text()


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("name", ["scores_export.csv", "traces_export.csv"])
def test_a_csv_whose_rows_are_mostly_long_is_refused_naming_the_likely_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Every row one cell too long (a trailing comma per line: the reviewer's
    trailing.csv): imp26's first fix read no row and exited 0. Now a one-line
    error naming the line, the cell counts and the likely causes (as likely)."""
    path = tmp_path / name

    def edit(rows: list[list[str]]) -> None:
        for row in rows[1:]:
            row.append("")

    _rewrite_csv(FIXTURES / name, path, edit)
    with path.open(newline="", encoding="utf-8") as fh:
        width = len(next(csv.reader(fh)))
        n = sum(1 for _ in csv.reader(fh))
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 2
    [err] = capsys.readouterr().err.strip().splitlines()
    assert f"{path}: line 2: {width + 1} cells under a header of {width} columns" in err
    assert f"as {n} of {n} rows: not read; likely a trailing comma at the line" in err
    assert "or a quote escaped with a backslash" in err


@pytest.mark.parametrize(
    ("extra", "likely"),
    [("x", 'a quote escaped with a backslash (\\")'), ("", "a trailing comma at the line's end")],
)
def test_a_long_traces_export_row_says_its_trace_loses_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, likely: str
) -> None:
    """One long row among the traces export's: that trace is not read, and the
    stderr line says a score on it finds neither its model nor its text, naming
    first a trailing comma when the extra cell is empty (as the refusal does), else
    a backslash-escaped quote."""
    path = tmp_path / "traces_export.csv"

    def edit(rows: list[list[str]]) -> None:
        rows[1].append(extra)

    _rewrite_csv(FIXTURES / "traces_export.csv", path, edit)
    with path.open(newline="", encoding="utf-8") as fh:
        n = sum(1 for _ in csv.reader(fh)) - 1
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 0
    [line] = [x for x in capsys.readouterr().err.splitlines() if "more cells" in x]
    assert f"{n} row(s) read, {n - 1} whole, 1 of more cells than the header (line 2 " in line
    assert "nor its trace's prompt and completion text" in line
    assert f"; likely {likely}" in line


def _is_json(cell: str) -> bool:
    try:
        json.loads(cell)
    except ValueError:
        return False
    return True


def test_a_table_csv_string_that_begins_with_a_quote_is_kept_as_written(tmp_path: Path) -> None:
    """Langfuse's table CSV writer (stringifyForCsv) writes a string as it is and
    JSON-encodes dates: a trace input that is the text '"Question 0"' (quotes
    included, which reads as the JSON string "Question 0") stays so, while the
    dates are decoded. Its earlier writer JSON-encoded strings too (the id cell
    quoted): there a quoted cell is the string it encodes."""
    scores = FIXTURES / "scores_export.csv"
    judge = ["--judge", "correctness=gpt-4o"]
    text = '"Question 0"'  # a text in quotes, which reads as a JSON string
    for name, old_writer in (("new", False), ("old", True)):
        path = tmp_path / f"{name}_traces.csv"

        def edit(rows: list[list[str]], old: bool = old_writer) -> None:
            header = rows[0]
            for row in rows[1:]:
                if row[header.index("id")] == "trace-00":
                    row[header.index("input")] = json.dumps(text) if old else text
                if old:  # every string JSON-encoded (numbers, booleans and dates already are)
                    row[:] = [c if not c or _is_json(c) else json.dumps(c) for c in row]

        _rewrite_csv(FIXTURES / "traces_export.csv", path, edit)
        out = tmp_path / name
        assert main(["import", "langfuse", str(scores), str(path), "--out", str(out), *judge]) == 0
        with (out / "prompts.csv").open(newline="", encoding="utf-8") as fh:
            texts = {r["prompt_id"]: r["prompt_text"] for r in csv.DictReader(fh)}
        assert texts["trace-00"] == text
        assert json.loads(texts["trace-01"]) == {"question": "Question 1: what is 1 + 1?"}
    # the dates are decoded: a trace's GENERATIONs from the CSV and from an API page
    # are ordered by time (its model is the latest's), not by the CSV's quoted text
    [first] = json.loads((FIXTURES / "observations.json").read_text(encoding="utf-8"))["data"][:1]
    earlier = {**first, "id": "obs-early", "model": "early-model"}
    earlier["startTime"] = "2025-11-03T09:00:00.000Z"
    assert first["startTime"] > earlier["startTime"] and first["traceId"] == "trace-00"
    page = tmp_path / "early.json"
    page.write_text(json.dumps({"data": [earlier], "meta": {}}), encoding="utf-8")
    obs = FIXTURES / "observations_export.csv"
    args = ["import", "langfuse", str(scores), str(obs), str(page), "--out", str(tmp_path / "d")]
    assert main([*args, *judge]) == 0
    with (tmp_path / "d" / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        models = {r["prompt_id"].split(":")[0]: r["model"] for r in csv.DictReader(fh)}
    assert models["trace-00"] == first["model"] != earlier["model"]


@pytest.mark.parametrize(
    ("name", "content", "extra"),
    [
        ("scores.json", b'{"scores": []}', []),
        ("scores.json", b'{"data": [{"foo": 1}], "meta": {}}', []),
        ("scores.csv", b"name,value\ncorrectness,1\n", []),
        ("scores.json", b"\x89PNG\r\n\x1a\n\x00", []),
        ("scores.jsonl", b'{"id": "a"\n', []),
        ("scores.json", b'{"data": [], "meta": {}}', ["--judge", "correctness"]),
    ],
)
def test_an_unreadable_file_or_option_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, extra: list
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    args = ["import", "langfuse", str(path), "--out", str(tmp_path / "out"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and (str(path) in err[0] or "--judge" in err[0]), err


def test_judge_is_refused_by_importers_that_name_their_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["import", "promptfoo", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")]
    assert main([*args, "--judge", "a=b"]) == 2
    assert "--judge" in capsys.readouterr().err


def test_list_names_both_importers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "Langfuse scores" in lines["langfuse"]
    assert "promptfoo eval results" in lines["promptfoo"]


def test_categories_without_a_config_get_nominal_codes(tmp_path: Path) -> None:
    """A CATEGORICAL score with no config has no value (JSON leaves the key out):
    it is still a score, and its labels get codes in label order, level nominal."""
    scores = [
        {"id": f"c{i}", "traceId": f"t{i}", "name": "tone", "source": src,
         "dataType": "CATEGORICAL", "stringValue": tone, "authorUserId": "u"}
        for i, (src, tone) in enumerate([("EVAL", "warm"), ("ANNOTATION", "cold"),
                                         ("EVAL", "cold")])
    ]  # fmt: skip
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"data": scores, "meta": {}}), encoding="utf-8")
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 0
    with (tmp_path / "o" / "rating_scales.csv").open(newline="", encoding="utf-8") as fh:
        scale = [(r["label"], r["score"], r["scale_level"]) for r in csv.DictReader(fh)]
    assert scale == [("cold", "0", "nominal"), ("warm", "1", "nominal")]


def test_unknown_sources_are_counted_and_ids_are_optional(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = {"traceId": "t1", "name": "ok", "dataType": "NUMERIC", "value": 1}
    scores = [{**base, "source": "EVAL"}, {**base, "source": "EVAL", "traceId": "t2"},
              {**base, "source": "MAGIC", "id": "m"}]  # fmt: skip
    path = tmp_path / "scores.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in scores), encoding="utf-8")
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 0
    assert csv_records(tmp_path / "o" / "judge_ratings.csv") == 2
    assert "1 score(s) of source 'MAGIC' skipped" in capsys.readouterr().err


def as_v3(score: dict) -> dict:
    """A v2 score as GET /api/public/v3/scores?fields=subject,annotation,details
    returns it (langfuse 5.0.4's generated client, api/scores/types: BaseScoreV3 id,
    projectId, name, source, timestamp, environment, createdAt, updatedAt, comment,
    configId, metadata, authorUserId, queueId, subject {kind, id[, traceId]};
    NumericScoreV3 value a number, BooleanScoreV3 a boolean, CategoricalScoreV3 a
    string): no traceId, observationId, sessionId, datasetRunId, executionTraceId
    nor stringValue."""
    base = ("id", "projectId", "name", "source", "timestamp", "environment", "createdAt",
            "updatedAt", "comment", "configId", "metadata", "authorUserId", "queueId",
            "dataType")  # fmt: skip
    v3 = {k: score.get(k) for k in base}
    if score["observationId"]:
        v3["subject"] = {"kind": "observation", "id": score["observationId"],
                         "traceId": score["traceId"]}  # fmt: skip
    elif score["traceId"]:
        v3["subject"] = {"kind": "trace", "id": score["traceId"]}
    elif score["sessionId"]:
        v3["subject"] = {"kind": "session", "id": score["sessionId"]}
    else:
        v3["subject"] = {"kind": "experiment", "id": score["datasetRunId"]}
    v3["value"] = {"NUMERIC": score["value"], "BOOLEAN": score.get("stringValue") == "True"}.get(
        score["dataType"], score.get("stringValue")
    )
    return v3


def _rows(out: Path, kind: str, drop: tuple[str, ...] = ()) -> list[tuple]:
    with (out / f"{kind}.csv").open(newline="", encoding="utf-8") as fh:
        return sorted(tuple(v for k, v in r.items() if k not in drop) for r in csv.DictReader(fh))


def test_v3_score_pages_import_as_the_v2_pages_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same scores as v3 pages: every human label, every judge label, item,
    model and scale is the v2 pages'. v3 carries no executionTraceId, so the EVAL
    judges are named by --judge (else evaluator:<name>), not by their trace. The
    first score is made an observation's (subject kind observation, with its
    traceId) in both layouts: its item is <traceId>:<observationId>, its model the
    observation's (observations.json read with json)."""
    v2_pages, v3_pages = [], []
    for k, page in enumerate(PAGES):
        data = json.loads(page.read_text(encoding="utf-8"))
        if k == 0:
            data["data"][0]["observationId"] = "obs-00"
        path = tmp_path / f"v3_page{k}.json"
        meta = {"limit": 33} | ({"cursor": "eyJ2IjoxfQ"} if k == 0 else {})
        path.write_text(json.dumps({"data": [as_v3(s) for s in data["data"]], "meta": meta}))
        v3_pages.append(path)
        v2_pages.append(tmp_path / f"v2_page{k}.json")
        v2_pages[-1].write_text(json.dumps(data))
    first = json.loads(PAGES[0].read_text(encoding="utf-8"))["data"][0]
    observations = json.loads((FIXTURES / "observations.json").read_text(encoding="utf-8"))
    [obs] = [o for o in observations["data"] if o["id"] == "obs-00"]
    assert obs["traceId"] == first["traceId"] and first["source"] == "EVAL"
    judges = ["--judge", "helpful=gpt-4o-mini"]
    for name, pages in (("v2", v2_pages), ("v3", v3_pages)):
        files = [*map(str, pages), *map(str, TRACES)]
        assert main(["import", "langfuse", *files, "--out", str(tmp_path / name), *judges]) == 0
    err = capsys.readouterr().err
    assert "dataset-run" in err  # the one experiment score, in both layouts
    v2, v3 = tmp_path / "v2", tmp_path / "v3"
    assert _rows(v3, "human_annotations") == _rows(v2, "human_annotations")
    # v3 drops a category's configured number (value is the category): the
    # categorical scales keep their labels, coded 0, 1, ... as nominal
    cats = {s["name"] for s in api_scores() if s["dataType"] == "CATEGORICAL"}
    for (dim, label, *rest), (dim2, label2, *rest2) in zip(
        _rows(v3, "rating_scales"), _rows(v2, "rating_scales"), strict=True
    ):
        assert (dim, label) == (dim2, label2)
        assert rest[-1] == "nominal" if dim in cats else rest == rest2
    assert _rows(v3, "judge_ratings", ("judge",)) == _rows(v2, "judge_ratings", ("judge",))
    with (v3 / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        v3_judges = {(r["dimension"], r["judge"]) for r in csv.DictReader(fh)}
    assert ("helpful", "gpt-4o-mini") in v3_judges
    assert {j for _, j in v3_judges} - {"gpt-4o-mini"} == {
        f"evaluator:{d}" for d, j in v3_judges if j != "gpt-4o-mini"
    }
    assert len(_rows(v3, "judge_ratings")) == len(_rows(v2, "judge_ratings")) > 0
    with (v3 / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        scored = [r for r in csv.DictReader(fh) if r["prompt_id"] == f"{obs['traceId']}:obs-00"]
    assert [(r["model"], r["dimension"], float(r["label"])) for r in scored] == [
        (obs["model"], first["name"], first["value"])
    ]


def test_v3_scores_without_their_subject_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fetched without fields=subject, a v3 score names no trace: refused."""
    scores = [{k: v for k, v in as_v3(s).items() if k != "subject"} for s in api_scores()]
    path = tmp_path / "v3.json"
    path.write_text(json.dumps({"data": scores, "meta": {"limit": 50}}), encoding="utf-8")
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "fields=subject" in line


def test_v1_scores_before_data_types_are_numeric(tmp_path: Path) -> None:
    """Langfuse 2.x before score data types (June 2024): no dataType (the
    migration that added it defaults to NUMERIC, packages/shared/prisma/migrations)
    and human scores of source REVIEW (renamed ANNOTATION)."""
    scores = [
        {"id": f"{src}-{i}", "timestamp": "2024-03-01T00:00:00.000Z", "name": "quality",
         "value": v, "source": src, "comment": None, "traceId": f"t{i}", "observationId": None}
        for i, v in enumerate((0.2, 0.9, 0.5)) for src in ("EVAL", "REVIEW")
    ]  # fmt: skip
    path = tmp_path / "scores_v1.json"
    path.write_text(json.dumps({"data": scores, "meta": {"page": 1}}), encoding="utf-8")
    assert main(["import", "langfuse", str(path), "--out", str(tmp_path / "o")]) == 0
    got = {
        kind: sorted((r["prompt_id"], float(r["label"])) for r in _dicts(tmp_path / "o", kind))
        for kind in ("judge_ratings", "human_annotations")
    }
    want = sorted((s["traceId"], s["value"]) for s in scores if s["source"] == "EVAL")
    assert got["judge_ratings"] == got["human_annotations"] == want


def _dicts(out: Path, kind: str) -> list[dict[str, str]]:
    with (out / f"{kind}.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
