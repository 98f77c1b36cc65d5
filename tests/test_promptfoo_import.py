"""The promptfoo import on files promptfoo 0.121.20 wrote itself (tests/fixtures/promptfoo,
README there): an eval of two local providers graded by llm-rubric and
model-graded-closedqa (local graders), with 16 manual grades stored by promptfoo's
own server. Counts reconcile against a plain json parse written here, and the
warehouse's judge-human Spearman equals scipy's on the raw file."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from judge_bias.cli import main
from tests.conftest import query
from tests.importing import assert_reconciled, csv_records, import_and_build

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo"
RATED = FIXTURES / "rated.json"
MANUAL = "Manual result (overrides all other grading results)"
GRADED = {"llm-rubric", "model-graded-closedqa"}  # the model-graded types the config uses


def raw_rows(path: Path = RATED) -> list[dict]:
    """The result rows of a promptfoo results file, read with json alone."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return json.loads(path.read_text(encoding="utf-8"))["results"]["results"]


def raw_pairs(rows: list[dict], assertion_type: str) -> list[tuple[float, float]]:
    """(judge score, manual score) of every manually graded row, from the raw records."""
    pairs = []
    for row in rows:
        grading = row["gradingResult"]
        if grading["reason"] != MANUAL:
            continue
        [comp] = [
            c for c in grading["componentResults"] if c["assertion"]["type"] == assertion_type
        ]
        pairs.append((comp["score"], grading["score"]))
    return pairs


@pytest.fixture(scope="module")
def rated_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rated.json's rows as promptfoo's JSONL writer lays them out (one compact
    JSON record a line): promptfoo writes JSONL only while an eval runs, before
    any manual grade exists."""
    path = tmp_path_factory.mktemp("jsonl") / "rated.jsonl"
    lines = [json.dumps(r, separators=(",", ":")) for r in raw_rows()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def promptfoo_build(tmp_path_factory: pytest.TempPathFactory):
    return import_and_build("promptfoo", [RATED], tmp_path_factory)


def contract_files(out: Path) -> dict[str, list[list[str]]]:
    """Every CSV an import wrote, as sorted records (csv module, header first)."""
    files = {}
    for path in sorted(out.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            header, *records = list(csv.reader(fh))
        files[path.name] = [header, *sorted(records)]
    return files


def test_counts_reconcile_with_the_raw_file(promptfoo_build) -> None:
    out, result = promptfoo_build
    rows = raw_rows()
    graded = [c for r in rows for c in r["gradingResult"]["componentResults"]
              if c["assertion"]["type"] in GRADED]  # fmt: skip
    manual = [r for r in rows if r["gradingResult"]["reason"] == MANUAL]
    assert (len(rows), len(graded), len(manual)) == (20, 40, 16)
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (len(graded), 0)
    # each manual grade is written for each of the row's two judged dimensions
    assert counts["human_annotations"] == (2 * len(manual), 0)
    assert counts["completions"] == (len(rows), 0)
    with (out / "human_annotations.csv").open(newline="", encoding="utf-8") as fh:
        humans = list(csv.DictReader(fh))
    # one manual grade is a "set score" of 0.5 with no human component
    assert sorted({h["label"] for h in humans}) == ["0", "0.5", "1"]
    assert {h["rationale"] for h in humans} >= {"Lyon is wrong", "Pluto is not a planet"}


@pytest.mark.parametrize(
    ("judge", "dimension", "assertion_type"),
    [("local-alpha", "correctness", "llm-rubric"),
     ("local-gamma", "model-graded-closedqa", "model-graded-closedqa")],
)  # fmt: skip
def test_judge_human_spearman_equals_the_raw_file(
    promptfoo_build, judge: str, dimension: str, assertion_type: str
) -> None:
    _, result = promptfoo_build
    judged, human = zip(*raw_pairs(raw_rows(), assertion_type), strict=True)
    expected = spearmanr(judged, human).statistic
    got = query(
        result.db_path,
        f"select spearman, n from agreement_judge_human "
        f"where judge = '{judge}' and dimension = '{dimension}'",
    )
    assert got["n"].item() == len(judged) == 16
    assert got["spearman"].item() == pytest.approx(expected, abs=1e-9)


def test_the_grading_provider_is_the_judge(promptfoo_build) -> None:
    _, result = promptfoo_build
    fct = query(
        result.db_path,
        "select judge, model, dimension, count(*) n, sum(is_self::int) n_self "
        "from fct_judge_ratings group by all order by all",
    )
    # llm-rubric is graded by defaultTest's provider (local-alpha), closedqa by the
    # assertion's own (local-gamma); local-alpha grading itself is a self-judgment
    assert [tuple(r) for r in fct.itertuples(index=False)] == [
        ("local-alpha", "local-alpha", "correctness", 10, 10),
        ("local-alpha", "local-beta", "correctness", 10, 0),
        ("local-gamma", "local-alpha", "model-graded-closedqa", 10, 0),
        ("local-gamma", "local-beta", "model-graded-closedqa", 10, 0),
    ]


def test_jsonl_imports_as_the_json_does(tmp_path: Path, rated_jsonl: Path) -> None:
    """The JSONL layout of rated.json writes the very files the JSON does (so its
    build and figures are the JSON's); results.jsonl, written by `promptfoo eval -o
    results.jsonl` before the manual grades, has the same judge ratings and no human
    labels."""
    files = {}
    for path in (RATED, rated_jsonl, FIXTURES / "results.jsonl"):
        out = tmp_path / path.name
        assert main(["import", "promptfoo", str(path), "--out", str(out)]) == 0
        files[path.name] = contract_files(out)
    jsonl, whole = files["rated.jsonl"], files["rated.json"]
    # a JSONL file carries no config: its dataset is "promptfoo", not the description
    assert jsonl.pop("prompts.csv") != whole.pop("prompts.csv")
    assert jsonl == whole
    ratings = files["rated.json"]["judge_ratings.csv"]
    assert files["results.jsonl"]["judge_ratings.csv"] == ratings and len(ratings) == 41
    assert csv_records(tmp_path / "results.jsonl" / "human_annotations.csv") == 0


def as_version_2(data: dict) -> dict:
    """A results file as promptfoo wrote it before results version 3 (0.43.1's and
    0.80.3's src/types: EvaluateResult has provider, prompt, vars, response,
    success, score, gradingResult, namedScores, and no testIdx, promptIdx, testCase
    nor promptId; EvaluateSummary is {version, timestamp, results, table, stats})."""
    v3_only = {"id", "testIdx", "promptIdx", "testCase", "promptId", "description", "metadata"}
    rows = [{k: v for k, v in r.items() if k not in v3_only} for r in data["results"]["results"]]
    summary = {"version": 2, "timestamp": data["results"]["timestamp"], "results": rows,
               "table": {"head": {"prompts": [], "vars": []}, "body": []},
               "stats": data["results"]["stats"]}  # fmt: skip
    return {"results": summary, "config": data["config"], "shareableUrl": None}


def test_a_version_2_results_file_imports_as_version_3_does(tmp_path: Path) -> None:
    """promptfoo before results version 3 records no testIdx: a test is its vars.
    The judge of defaultTest comes from the config (no testCase on the row). Every
    rating, keyed by the test's prompt text, is the version 3 file's."""
    data = json.loads(RATED.read_text(encoding="utf-8"))
    v2 = tmp_path / "results_v2.json"
    v2.write_text(json.dumps(as_version_2(data)), encoding="utf-8")
    got = {}
    for path in (RATED, v2):
        out = tmp_path / path.stem
        assert main(["import", "promptfoo", str(path), "--out", str(out)]) == 0
        with (out / "prompts.csv").open(newline="", encoding="utf-8") as fh:
            texts = {r["prompt_id"]: r["prompt_text"] for r in csv.DictReader(fh)}
        with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
            got[path.name] = sorted(
                (texts[r["prompt_id"]], r["judge"], r["model"], r["dimension"], r["label"])
                for r in csv.DictReader(fh)
            )
        assert len(texts) == 10  # ten tests, by their vars
    raw = sorted(
        (r["prompt"]["raw"], c["assertion"].get("provider", {}).get("label", "local-alpha"),
         r["provider"]["label"], c["assertion"].get("metric", c["assertion"]["type"]),
         str(c["score"]))
        for r in raw_rows() for c in r["gradingResult"]["componentResults"]
        if c["assertion"]["type"] in GRADED
    )  # fmt: skip
    assert got["results_v2.json"] == got["rated.json"] == raw


def test_promptfoo_0_80_output_reconciles_with_a_plain_parse(tmp_path: Path) -> None:
    """promptfoo 0.80.3's own -o results.yaml (results version 2) of the fixture
    config: every model-graded component, by its test's prompt, judge, model and
    metric, read with yaml alone; its -o results.csv is refused in one line."""
    import yaml

    path = FIXTURES / "results_0.80.3.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["results"]["version"] == 2
    raw = sorted(
        (r["prompt"]["raw"], c["assertion"].get("provider", {}).get("label", "local-alpha"),
         r["provider"]["label"], c["assertion"].get("metric", c["assertion"]["type"]),
         float(c["score"]))
        for r in data["results"]["results"] for c in r["gradingResult"]["componentResults"]
        if c["assertion"]["type"] in GRADED
    )  # fmt: skip
    assert len(raw) == 40
    out = tmp_path / "out"
    assert main(["import", "promptfoo", str(path), "--out", str(out)]) == 0
    with (out / "prompts.csv").open(newline="", encoding="utf-8") as fh:
        texts = {r["prompt_id"]: r["prompt_text"] for r in csv.DictReader(fh)}
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        got = sorted(
            (texts[r["prompt_id"]], r["judge"], r["model"], r["dimension"], float(r["label"]))
            for r in csv.DictReader(fh)
        )
    assert got == raw and len(texts) == 10
    table = FIXTURES / "results_0.80.3.csv"
    assert main(["import", "promptfoo", str(table), "--out", str(tmp_path / "csv")]) == 2


PERTEST = FIXTURES / "pertest_0.80.3.json"  # promptfoo 0.80.3 on pertest_config.yaml


def _judges(out: Path) -> list[tuple[str, str]]:
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        return sorted((r["prompt_id"], r["judge"]) for r in csv.DictReader(fh))


def test_a_version_2_test_keeps_its_own_grader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promptfoo 0.80.3's own results (version 2: no testCase) of a config where one
    test sets options.provider: that test's rating is its grader's, read from the
    config YAML (not from the results file's config) by the test's key var. Tests
    in a file:// reference, or two tests of identical vars and different graders,
    are counted on one line naming the grader assumed (defaultTest's)."""
    import yaml

    config = yaml.safe_load((FIXTURES / "pertest_config.yaml").read_text(encoding="utf-8"))
    default = config["defaultTest"]["options"]["provider"]["label"]
    grader = {
        t["vars"]["key"]: t.get("options", {}).get("provider", {}).get("label", default)
        for t in config["tests"]
    }
    data = json.loads(PERTEST.read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    expected = sorted((f"test{i}", grader[r["vars"]["key"]]) for i, r in enumerate(rows))
    assert len(set(grader.values())) == 2 and data["results"]["version"] == 2
    assert main(["import", "promptfoo", str(PERTEST), "--out", str(tmp_path / "o")]) == 0
    assert _judges(tmp_path / "o") == expected
    assert "assumed" not in capsys.readouterr().err
    # a test of no vars (each row includes its vars) does not shadow the exact ones
    varless = tmp_path / "varless.json"
    tests = [*data["config"]["tests"], {"options": {"provider": "openai:gpt-4o"}}]
    varless.write_text(json.dumps({**data, "config": {**data["config"], "tests": tests}}))
    assert main(["import", "promptfoo", str(varless), "--out", str(tmp_path / "v")]) == 0
    assert _judges(tmp_path / "v") == expected
    for name, tests in (
        ("file.json", "file://tests.yaml"),
        ("twice.json", [*data["config"]["tests"], {"vars": rows[1]["vars"]}]),
    ):
        # without its table (whose cell names the test that ran: see the table test)
        results = {**data["results"], "table": {**data["results"]["table"], "body": []}}
        path = tmp_path / name
        path.write_text(
            json.dumps({**data, "results": results, "config": {**data["config"], "tests": tests}})
        )
        assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / path.stem)]) == 0
        assert _judges(tmp_path / path.stem) == [("test0", default), ("test1", default)]
        [line] = [x for x in capsys.readouterr().err.splitlines() if "assumed" in x]
        assert f"grader {default}" in line and name in line
        assert ("2 result(s)" if name == "file.json" else "1 result(s) match tests") in line


SAMEVARS = FIXTURES / "samevars_0.80.3.json"  # promptfoo 0.80.3 on samevars_config.yaml
SLOW = FIXTURES / "slowgrader_0.80.3.json"  # promptfoo 0.80.3 on slowgrader_config.yaml
FIRST_N = FIXTURES / "firstn_0.80.3.json"  # on firstn_config.yaml, --filter-first-n 2


def _by_score(data: dict) -> dict[float, str]:
    """Each grader's label by the score it answers (delay_grader.js and
    score_grader.js answer the score in their config): a score names its grader."""
    config = data["config"]
    graders = [t.get("options", {}).get("provider") for t in config["tests"]]
    graders = [g or config["defaultTest"]["options"]["provider"] for g in graders]
    return {g["config"]["score"]: g["label"] for g in graders}


def _import_ratings(path: Path, out: Path) -> list[tuple[str, str, float]]:
    assert main(["import", "promptfoo", str(path), "--out", str(out)]) == 0
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        return sorted((r["model"], r["judge"], float(r["label"])) for r in csv.DictReader(fh))


def test_version_2_tests_of_identical_vars_get_their_graders_from_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promptfoo 0.80.3 writes a version-2 row as it finishes, not in test order:
    with the first test's grader slow (slowgrader_config.yaml, delay 400 ms), the
    second test's rows come first. The results' table keeps each row's test
    (table.body[rowIndex].test): every rating's judge is the grader whose score it
    is (fmt25's order rule credited each grader the other's scores). With
    --filter-first-n 2 of three tests of identical vars, --repeat 3: six rows of
    graders a and b, none of c (the order rule read them A A B B C C)."""
    for path, n in ((SLOW, 4), (FIRST_N, 6)):
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["results"]["results"]
        by_score = _by_score(data)
        expected = sorted(
            (r["provider"]["label"], by_score[c["score"]], c["score"])
            for r in rows for c in r["gradingResult"]["componentResults"]
        )  # fmt: skip
        tests = data["config"]["tests"]
        assert len(expected) == n and data["results"]["version"] == 2
        assert all(t["vars"] == tests[0]["vars"] for t in tests) and len(by_score) == len(tests)
        got = _import_ratings(path, tmp_path / path.stem)
        assert got == expected
        assert "assumed" not in capsys.readouterr().err
    # the slow grader's rows came last (not in the config's order)
    slow = json.loads(SLOW.read_text(encoding="utf-8"))
    first = slow["results"]["results"][0]["gradingResult"]["componentResults"][0]["score"]
    assert _by_score(slow)[first] == slow["config"]["tests"][1]["options"]["provider"]["label"]
    # grader c of the config ran no test: no rating is its
    assert "grader-c" not in {j for _, j, _ in _import_ratings(FIRST_N, tmp_path / "c")}
    # cells alike (same gradingResult and latency) of different graders: assumed, counted
    data = json.loads(FIRST_N.read_text(encoding="utf-8"))
    grading = data["results"]["results"][0]["gradingResult"]
    for row in data["results"]["results"]:
        row["gradingResult"] = grading
    for line in data["results"]["table"]["body"]:
        for cell in line["outputs"]:
            cell["gradingResult"] = grading
    alike = tmp_path / "alike.json"
    alike.write_text(json.dumps(data), encoding="utf-8")
    default = data["config"]["defaultTest"]["options"]["provider"]["label"]
    assert {j for _, j, _ in _import_ratings(alike, tmp_path / "alike")} == {default}
    assert "6 result(s) match tests of different graders" in capsys.readouterr().err


def test_version_2_rows_take_their_test_index_from_the_table(tmp_path: Path) -> None:
    """slowgrader_0.80.3.json with its rows in another finishing order (promptfoo
    writes each row as it finishes: local-alpha's row of the first test first,
    local-beta's of the second): the n-th row of each provider was the n-th test
    for fmt25, so test0 held alpha's rating by one grader and beta's by the other.
    The table's line of each row's cell is its test (table.body[i]: the config's
    test i): each prompt_id holds one test's ratings, by its own grader."""
    data = json.loads(SLOW.read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    by_score = _by_score(data)
    tests = [t["options"]["provider"]["label"] for t in data["config"]["tests"]]

    def grader(row: dict) -> str:
        return by_score[row["gradingResult"]["componentResults"][0]["score"]]

    alpha = sorted((r for r in rows if r["provider"]["label"] == "local-alpha"), key=grader)
    beta = sorted((r for r in rows if r["provider"]["label"] == "local-beta"), key=grader)
    data["results"]["results"] = [alpha[0], beta[1], alpha[1], beta[0]]
    assert grader(alpha[0]) != grader(beta[1])  # the first row of each is another test
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    expected = sorted(
        (f"test{tests.index(grader(r))}", r["provider"]["label"], grader(r)) for r in rows
    )
    assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / "o")]) == 0
    with (tmp_path / "o" / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        got = sorted((r["prompt_id"], r["model"], r["judge"]) for r in csv.DictReader(fh))
    assert got == expected


def test_version_2_rows_only_partly_in_the_table_are_numbered_by_vars_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """slowgrader_0.80.3.json with one table cell's latency changed: that row's cell
    is in no line, so the table does not number the tests (never mixed); each
    provider's n-th row is the n-th test of the vars (all four rows have one vars),
    as without a table, and stderr says the table was not used."""
    data = json.loads(SLOW.read_text(encoding="utf-8"))
    data["results"]["table"]["body"][0]["outputs"][0]["latencyMs"] = 987654
    rows = data["results"]["results"]
    assert len({json.dumps(r["vars"], sort_keys=True) for r in rows}) == 1
    path = tmp_path / "partly.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    seen: Counter[str] = Counter()
    expected = []
    for r in rows:  # in the file's order
        model = r["provider"]["label"]
        [component] = r["gradingResult"]["componentResults"]
        expected.append((f"test{seen[model]}", model, float(component["score"])))
        seen[model] += 1
    assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / "o")]) == 0
    with (tmp_path / "o" / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        got = sorted((r["prompt_id"], r["model"], float(r["label"])) for r in csv.DictReader(fh))
    assert got == sorted(expected)
    [line] = [x for x in capsys.readouterr().err.splitlines() if "results.table names" in x]
    assert f"{path.name}: results.table names one test for 3 of 4 version-2 row(s)" in line


def test_version_2_tests_of_identical_vars_without_the_table_are_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """samevars_0.80.3.json (--repeat 2, two providers; table.body emptied): two
    tests of identical vars, each with its own grader, and a third graded by
    defaultTest's. Without the table no row names its test (the rows' order is
    the order they finished): the identical-vars rows are credited to defaultTest's
    grader and counted on stderr; the third test's rows to its own."""
    data = json.loads(SAMEVARS.read_text(encoding="utf-8"))
    config = data["config"]
    assert config["tests"][0]["vars"] == config["tests"][1]["vars"]
    assert data["results"]["table"]["body"] == []
    default = config["defaultTest"]["options"]["provider"]["label"]
    same = [r for r in data["results"]["results"] if r["vars"] == config["tests"][0]["vars"]]
    expected = sorted(
        (r["provider"]["label"], default, c["score"])
        for r in data["results"]["results"] for c in r["gradingResult"]["componentResults"]
    )  # fmt: skip
    assert len(same) == 8 and len(expected) == 12
    assert [(m, j) for m, j, _ in _import_ratings(SAMEVARS, tmp_path / "out")] == [
        (m, j) for m, j, _ in expected
    ]
    [line] = [x for x in capsys.readouterr().err.splitlines() if "assumed" in x]
    assert "8 result(s) match tests of different graders" in line and default in line


def test_version_2_repeats_are_tests_of_their_own(tmp_path_factory) -> None:
    """promptfoo 0.80.3's own run of two tests with --repeat 2 and two providers
    (repeat_0.80.3.json, cut to the first two tests of /tmp's 10): version 3's
    evaluator numbers each repeat of a test as a test of its own (testIdx per
    test, then repeat), so row i of the file (2 providers per test run) is
    test i // 2. Every rating is read and accepted: no repeat merged away as a
    duplicate key."""
    path = FIXTURES / "repeat_0.80.3.json"
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    expected = sorted(
        (f"test{i // 2}", r["provider"]["label"],
         c["assertion"].get("metric", c["assertion"]["type"]), float(c["score"]))
        for i, r in enumerate(rows) for c in r["gradingResult"]["componentResults"]
        if c["assertion"]["type"] in GRADED
    )  # fmt: skip
    assert len(rows) == 8 and len({json.dumps(r["vars"]) for r in rows}) == 2
    out, result = import_and_build("promptfoo", [path], tmp_path_factory)
    with (out / "judge_ratings.csv").open(newline="", encoding="utf-8") as fh:
        got = sorted(
            (r["prompt_id"], r["model"], r["dimension"], float(r["label"]))
            for r in csv.DictReader(fh)
        )
    assert got == expected and len(got) == 16
    assert assert_reconciled(out, result)["judge_ratings"] == (16, 0)


def test_two_files_of_one_name_keep_their_prompts_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs' -o results.yaml (version 2: no evalId, so each is named by its
    stem): the second file's prompt ids are results-2/..., said on stderr, and
    every model-graded component of both (read with yaml) is a rating."""
    import yaml

    text = (FIXTURES / "results_0.80.3.yaml").read_text(encoding="utf-8")
    paths = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        paths.append(tmp_path / run / "results.yaml")
        paths[-1].write_text(text, encoding="utf-8")
    rows = yaml.safe_load(text)["results"]["results"]
    graded = [c for r in rows for c in r["gradingResult"]["componentResults"]
              if c["assertion"]["type"] in GRADED]  # fmt: skip
    tests = {json.dumps(r["vars"], sort_keys=True) for r in rows}
    assert main(["import", "promptfoo", *map(str, paths), "--out", str(tmp_path / "o")]) == 0
    assert f"{paths[1]} as results-2/" in capsys.readouterr().err
    ratings = read_rows(tmp_path / "o" / "judge_ratings.csv")
    assert len(ratings) == 2 * len(graded)
    ids = {r["prompt_id"] for r in read_rows(tmp_path / "o" / "prompts.csv")}
    assert ids == {f"{s}/test{i}" for s in ("results", "results-2") for i in range(len(tests))}
    assert {r["prompt_id"] for r in ratings} == ids


def test_one_eval_given_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One evalId in two files (the same eval's -o file copied, or beside its
    export) is refused in one line naming both files, not imported twice under
    results-2/ prompt ids (its ratings would count twice) nor merged."""
    text = (FIXTURES / "rated.json").read_text(encoding="utf-8")
    eval_id = json.loads(text)["evalId"]
    paths = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        paths.append(tmp_path / run / "rated.json")
        paths[-1].write_text(text, encoding="utf-8")
    out = tmp_path / "o"
    assert main(["import", "promptfoo", *map(str, paths), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"the eval {eval_id} is also in {paths[0]}" in err and str(paths[1]) in err
    assert not (out / "judge_ratings.csv").exists()


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_yaml_output_imports_as_the_json_does(tmp_path: Path) -> None:
    """-o results.yaml (and .yml, .txt) is the JSON file's document in YAML
    (promptfoo's writeOutput: js-yaml dump of {evalId, results, config, ...})."""
    import yaml

    data = json.loads(RATED.read_text(encoding="utf-8"))
    files = {}
    for name in ("rated.json", "rated.yaml", "rated.txt"):
        path = RATED if name == "rated.json" else tmp_path / name
        if path != RATED:
            path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / name[6:])]) == 0
        files[name] = contract_files(tmp_path / name[6:])
    assert files["rated.yaml"] == files["rated.txt"] == files["rated.json"]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        # promptfoo's CSV table: the vars, then one column per prompt (writeOutput)
        ("results.csv", b'question,"[local-alpha] Answer briefly: {{question}}"\r\n'
                        b'"What is 2+2?","[PASS] (1.00) 4"\r\n'),
        ("results.html", b"<html><table><tr><td>[PASS] 4</td></tr></table></html>"),
        ("results.yaml", b"results: [unclosed\n"),
        ("results.json", b'{"evalId": "x", "results": {"version": 4}}'),
    ],
)  # fmt: skip
def test_a_table_or_unreadable_output_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "Traceback" not in line
    if name.endswith((".csv", ".html")):
        # the table it saw in the first part, the output to write in the hint after ": give"
        seen, _, hint = line.partition(": give ")
        assert f"-o {name}" in seen and "not the grader" in seen and "results.json" not in seen
        assert hint.startswith("-o results.json") and "export eval" in hint
    if name.endswith(".json"):
        assert "results version 4" in line


@pytest.mark.parametrize("libyaml", [True, False])
def test_yaml_is_read_by_a_safe_loader(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    libyaml: bool,
) -> None:
    """The YAML output is read by libyaml's safe loader (pyyaml's without it): the
    same rows as the JSON file, and a python tag is refused in one line, not run."""
    import yaml

    if not libyaml:
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    data = json.loads(RATED.read_text(encoding="utf-8"))
    path = tmp_path / "rated.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    for name in (RATED, path):
        assert main(["import", "promptfoo", str(name), "--out", str(tmp_path / name.suffix)]) == 0
    assert contract_files(tmp_path / ".yaml") == contract_files(tmp_path / ".json")
    capsys.readouterr()
    bad = tmp_path / "bad.yaml"
    bad.write_text("results: !!python/object/apply:os.getcwd []\n", encoding="utf-8")
    assert main(["import", "promptfoo", str(bad), "--out", str(tmp_path / "bad")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(bad) in line and "not YAML" in line


def _row(test: int, provider: str, comps: list[dict], manual: float | None = None) -> dict:
    grading = {"pass": True, "score": 1, "reason": "ok", "componentResults": comps}
    if manual is not None:
        grading.update(score=manual, reason=MANUAL)
        grading["pass"] = manual > 0
    return {
        "testIdx": test, "promptIdx": 0, "provider": {"id": provider},
        "prompt": {"raw": f"q{test}", "label": "{{q}}"}, "response": {"output": "a"},
        "testCase": {"options": {"provider": "openai:gpt-4o-mini"}},
        "gradingResult": grading,
    }  # fmt: skip


def test_awkward_valid_files_import_and_build(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One judge, constant scores, pass/fail without a score, a manual grade on a row
    no model graded, a provider error: all import, and the build is green."""
    rubric = {"assertion": {"type": "llm-rubric"}, "pass": True, "score": 1, "reason": "fine"}
    no_score = {"assertion": {"type": "llm-rubric"}, "pass": False, "reason": "no"}
    rows = [_row(i, "openai:gpt-4o", [rubric], manual=1) for i in range(4)]
    rows += [_row(4, "openai:gpt-4o", [no_score]), _row(5, "openai:gpt-4o", [], manual=0)]
    rows.append({**_row(6, "openai:gpt-4o", []), "gradingResult": None})
    path = tmp_path_factory.mktemp("awkward") / "results.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out, result = import_and_build("promptfoo", [path], tmp_path_factory)
    counts = assert_reconciled(out, result)
    assert counts["judge_ratings"] == (5, 0)
    assert counts["human_annotations"] == (5, 0)  # 4 on llm-rubric, 1 on 'manual'
    labels = query(result.db_path, "select judge_score from fct_judge_ratings order by prompt_id")
    assert list(labels["judge_score"]) == [1, 1, 1, 1, 0]


@pytest.mark.parametrize(
    "content",
    [b'{"results": {"version": 3}}', b"[1, 2, 3]", b'{"testIdx": 0}\n', b"\xff\xfe\x00x"],
)
def test_a_file_of_another_shape_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / ("results.jsonl" if content.endswith(b"\n") else "results.json")
    path.write_bytes(content)
    assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "promptfoo" in err[0], err


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("results.jsonl", b""),
        ("results.jsonl", b"\r\n\n"),
        ("results.json", b'{"results": {"results": []}}'),
    ],
)
def test_an_eval_of_no_result_is_named_as_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    """promptfoo writes an empty JSONL file (and results.results = [] in the JSON)
    for an eval of no test case: one line saying the file holds no results, not
    "a row without testIdx and provider" (old message: there is no row at all)."""
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["import", "promptfoo", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "no results" in err[0], err
    assert "testIdx" not in err[0], err
