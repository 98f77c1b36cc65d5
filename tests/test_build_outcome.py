"""Real builds: the gates keep a bad build from publishing, a failed or killed
build keeps the previous record and snapshot and says so, a plain dbt build
makes the record stale, paths are data, a held lock is one line."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from judge_bias.cli import main
from judge_bias.inputs import loading
from judge_bias.report import write_report
from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.build import BuildResult, default_bi_path
from judge_bias.warehouse.provenance import build_record_path, validation_path
from tests.conftest import DEMO_DIR, query
from tests.test_build_record import dead_pid

pytestmark = pytest.mark.dbt


def copy_warehouse(demo_build: BuildResult, folder: Path, stem: str = "w") -> Path:
    """The demo warehouse with its BI snapshot and records, under another name."""
    folder.mkdir(parents=True, exist_ok=True)
    src = demo_build.db_path
    db = folder / f"{stem}.duckdb"
    for source, target in (
        (src, db),
        (default_bi_path(src), default_bi_path(db)),
        (validation_path(src), validation_path(db)),
        (build_record_path(src), build_record_path(db)),
    ):
        shutil.copy(source, target)
    return db


def rewrite_csv(path: Path, change) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = change(list(csv.reader(fh)))
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return rows


def status_lines(page: str) -> list[str]:
    """The red lines at the top of the report, as text."""
    return [html.unescape(x) for x in re.findall(r'<p class="status">(.*?)</p>', page, re.S)]


def section(page: str, key: str) -> str:
    return re.search(rf'<section id="{key}">(.*?)</section>', page, re.S).group(1)


# ------------------------------------------------------------------ the gates


@pytest.fixture(scope="module")
def gated(demo_build: BuildResult, tmp_path_factory: pytest.TempPathFactory):
    """A build over the demo warehouse on data where every pairwise row is rejected,
    70% of the perturbation rows are, and 3 of 123 prompts (a warning); the
    previous build was killed (its record says running, its temporary snapshot is
    left) while another build's temporary snapshot is still being written."""
    root = tmp_path_factory.mktemp("gated")
    data = root / "data"
    shutil.copytree(DEMO_DIR, data)

    def verdicts(rows):
        i = rows[0].index("verdict")
        for r in rows[1:]:
            r[i] = "maybe"
        return rows

    n_bad = {}

    def conditions(rows):
        i = rows[0].index("condition")
        n_bad["perturbation"] = round(0.7 * (len(rows) - 1))
        for r in rows[1 : n_bad["perturbation"] + 1]:
            r[i] = "sideways"
        return rows

    pairwise = rewrite_csv(data / "pairwise_judgments.csv", verdicts)
    perturbation = rewrite_csv(data / "perturbation_judgments.csv", conditions)
    prompts = rewrite_csv(data / "prompts.csv", lambda rows: rows + rows[1:4])

    db = copy_warehouse(demo_build, root / "wh")
    bi = default_bi_path(db)
    record = json.loads(build_record_path(db).read_text())
    record |= {"state": "running", "stage": "dbt build", "pid": dead_pid(), "finished_at": None}
    build_record_path(db).write_text(json.dumps(record), encoding="utf-8")
    killed_tmp = bi.with_name(f".{bi.name}.{dead_pid()}.tmp")
    killed_tmp.write_bytes(b"half a snapshot")
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    live_tmp = bi.with_name(f".{bi.name}.{writer.pid}.tmp")
    live_tmp.write_bytes(b"being written")
    before = write_report(db, root / "before.html").read_text(encoding="utf-8")
    snapshot = bi.read_bytes()
    yield {
        "data": data,
        "db": db,
        "bi": bi,
        "snapshot": snapshot,
        "before": before,
        "killed_tmp": killed_tmp,
        "live_tmp": live_tmp,
        "writer": writer,
        "n_pairwise": len(pairwise) - 1,
        "n_perturbation": len(perturbation) - 1,
        "n_bad_perturbation": n_bad["perturbation"],
        "n_prompts": len(prompts) - 1,
    }
    writer.kill()
    writer.wait()


@pytest.fixture(scope="module")
def gated_run(gated: dict) -> dict:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["build", "--data", str(gated["data"]), "--db", str(gated["db"])])
    after = write_report(gated["db"], gated["db"].with_name("after.html"))
    return {
        "code": code,
        "out": out.getvalue(),
        "err": err.getvalue(),
        "after": after.read_text(encoding="utf-8"),
    }


def test_killed_build_shows_a_red_banner(gated: dict) -> None:
    lines = status_lines(gated["before"])
    assert any("did not finish" in x and "killed during the stage" in x for x in lines), lines


def test_gates_fail_the_build_and_keep_the_snapshot(gated: dict, gated_run: dict) -> None:
    assert gated_run["code"] == 1
    assert gated["bi"].read_bytes() == gated["snapshot"]
    record = json.loads(build_record_path(gated["db"]).read_text())
    assert (record["state"], record["stage"]) == ("validation_failed", "input gates")
    validation = json.loads(validation_path(gated["db"]).read_text())
    assert validation["success"] is False and validation["bi_snapshot"] is None
    failed = " ".join(validation["critical_failures"])
    assert "pairwise_judgments" in failed and "perturbation_judgments" in failed
    assert "'source': 'judge_ratings'" not in failed
    assert "'source': 'prompts'" in " ".join(validation["warnings"])


def _ran(run_results: Path) -> dict[str, str]:
    """unique_id -> resource type of the nodes one dbt command ran."""
    results = json.loads(run_results.read_text())["results"]
    return {r["unique_id"]: r["unique_id"].split(".")[0] for r in results}


def test_gates_stop_the_build_before_the_fits(gated: dict, gated_run: dict) -> None:
    """The gates are checked on the first phase (inputs and quality marts), so a
    failing folder never reaches the fits; their tables from the previous build
    are dropped (the report must not show them beside the new inputs)."""
    ran = {
        uid.split(".")[-1] for uid in _ran(build_mod.target_dir(gated["db"]) / "run_results.json")
    }
    assert {"input_row_counts", "rejected_rows", "int_judge_ratings_checked"} <= ran
    assert not ran & {"int_bias_results", "bias_estimates", "pairwise_bias", "glm_fits"}
    tables = set(
        query(gated["db"], "select table_name from information_schema.tables")["table_name"]
    )
    # the facts are the first phase's too (built on the new inputs: build.FIRST_PHASE_MODELS)
    assert {"input_row_counts", "rejected_rows", "base_inputs__judge_ratings"} <= tables
    accepted = query(
        gated["db"],
        "select (select count(*) from fct_judge_ratings) as facts, rows_accepted "
        "from input_row_counts where source = 'judge_ratings'",
    ).iloc[0]
    assert accepted["facts"] == accepted["rows_accepted"] > 0
    assert not tables & {"bias_estimates", "bias_fits", "pairwise_bias", "agg_judge_model_scores"}


def test_two_phases_run_every_node_once(demo_build: BuildResult) -> None:
    """The gate phase and the rest together run what one `dbt build` runs (every
    model, seed, data test and unit test of the manifest), none twice."""
    target = build_mod.target_dir(demo_build.db_path)
    kinds = ("model", "seed", "test", "unit_test")
    first, second = (
        {uid for uid, kind in _ran(target / name).items() if kind in kinds}
        for name in (build_mod.GATE_RESULTS, "run_results.json")
    )
    manifest = json.loads((target / "manifest.json").read_text())
    expected = {
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] in kinds
        and node["config"].get("materialized") != "ephemeral"
        # dbt lists the tests of a disabled model (int_load_scope without the
        # incremental var) among the nodes, disabled: they do not run
        and node["config"].get("enabled", True)
    } | set(manifest.get("unit_tests", {}))
    assert not first & second
    assert first | second == expected
    assert any(uid.endswith(".input_row_counts") for uid in first)
    # the facts too, on every core (build.FIRST_PHASE_MODELS): all the rest waits on them
    assert any(uid.endswith(".fct_judge_ratings") for uid in first)
    assert not any(uid.endswith(".bias_estimates") for uid in first)


def test_second_phase_runs_duckdb_on_one_thread(demo_build: BuildResult) -> None:
    """The second phase (the last dbt command: dbt_last_run) ran DuckDB on one thread
    (dbt_parse.second_phase_threads, the duckdb_threads hook); the test's environment
    names none, so without the hook it would be DuckDB's default, every core."""
    assert "JUDGE_BIAS_DUCKDB_THREADS" not in os.environ
    last = query(demo_build.db_path, "select command, duckdb_threads from dbt_last_run")
    assert last.to_dict("records") == [{"command": "build", "duckdb_threads": 1}]


def test_last_line_names_the_file_and_top_reason(gated: dict, gated_run: dict) -> None:
    err = gated_run["err"]
    assert "Traceback" not in gated_run["out"] + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("judge-bias build: validation failed: pairwise_judgments.csv: ")
    assert f"{gated['n_pairwise']:,} rows read, all rejected" in last
    assert "invalid_value" in last and "'maybe'" in last
    assert last.endswith("the BI snapshot was not updated")


def test_summary_shows_share_above_max_and_the_warning(gated: dict, gated_run: dict) -> None:
    lines = gated_run["out"].splitlines()
    share = gated["n_bad_perturbation"] / gated["n_perturbation"]
    perturbation = next(x for x in lines if x.startswith("  perturbation_judgments.csv:"))
    assert f"{gated['n_bad_perturbation']:,} rejected ({share:.1%}): FAILED" in perturbation
    assert "above max_rejected_share 0.5" in perturbation
    prompts = next(x for x in lines if x.startswith("  prompts.csv:"))
    assert f"{gated['n_prompts']:,} read, 120 accepted, 3 rejected" in prompts
    assert ": warning," in prompts and "warn_rejected_share 0.01" in prompts
    ratings = next(x for x in lines if x.startswith("  judge_ratings.csv:"))
    assert ratings.endswith(" 0 rejected")


def test_leftovers_of_dead_builds_are_removed(gated: dict, gated_run: dict) -> None:
    assert not gated["killed_tmp"].exists()
    assert gated["live_tmp"].exists()  # its process was alive during the build


def test_report_names_all_rejected_and_the_failed_validation(gated_run: dict) -> None:
    page = gated_run["after"]
    assert any("failed validation" in x for x in status_lines(page))
    # a panel the data does not support is named, with its reason, in one line
    unsupported = re.search(r'<p class="unsupported">(.*?)</p>', page, re.S).group(1)
    assert "pairwise_judgments rows read, all rejected" in html.unescape(unsupported)
    assert "no pairwise_judgments input" not in unsupported
    assert "Validation passed" not in page
    # the facts, kept from the first phase, are not shown as a whole build's
    assert "The build stopped at the input gates" in page
    # nor the sections it did not build as ones the data does not support
    assert html.unescape(unsupported).startswith("Not built: the last build did not reach them")
    assert "Not supported by this data" not in page


def test_report_heads_unbuilt_and_unsupported_apart(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    """After a build that did not finish, a section whose table is missing is "Not
    built", one whose table is empty is the data's answer, "Not supported"; after a
    build that passed both are "Not supported" (fails when every absent section of a
    failed build is "Not built", or none is)."""
    db = copy_warehouse(demo_build, tmp_path / "wh")
    with duckdb.connect(str(db)) as con:
        con.execute("drop table perturbation_bias")
        con.execute("delete from pairwise_bias")

    def headings() -> dict[str, str]:
        page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
        found = re.findall(r'<p class="unsupported">(.*?)</p>', page, re.S)
        return {html.unescape(p).split(":", 1)[0]: html.unescape(p) for p in found}

    passed = headings()
    assert list(passed) == ["Not supported by this data"]
    assert "perturbation_bias is not in this database" in passed["Not supported by this data"]
    record = json.loads(build_record_path(db).read_text())
    record |= {"state": "validation_failed", "message": "1 critical failure"}
    build_record_path(db).write_text(json.dumps(record), encoding="utf-8")
    failed = headings()
    assert sorted(failed) == ["Not built", "Not supported by this data"]
    assert "perturbation_bias is not in this database" in failed["Not built"]
    assert "pairwise" not in failed["Not built"]
    assert "table pairwise_bias has no rows" in failed["Not supported by this data"]
    assert "perturbation" not in failed["Not supported by this data"]


# ------------------------------------------------- a failed build changes nothing


def test_failed_dbt_build_keeps_record_and_snapshot(
    demo_build: BuildResult,
    demo_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    db = copy_warehouse(demo_build, tmp_path / "wh")
    kept = {p: p.read_bytes() for p in (validation_path(db), default_bi_path(db))}
    rewrite_csv(
        demo_copy / "judge_ratings.csv",
        lambda rows: [r[:2] + r[3:] for r in rows],  # column 3 is model
    )
    # The file-level check would stop this before dbt: let the loader inside dbt find it.
    monkeypatch.setattr(loading, "check_inputs", lambda data_dir, dialects=None: [])
    assert main(["build", "--data", str(demo_copy), "--db", str(db)]) == 2
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Python model failed" not in out + err
    (last,) = err.strip().splitlines()  # one line, naming the file and the column
    assert last.startswith(f"judge-bias build: {demo_copy / 'judge_ratings.csv'}: ")
    assert "'model'" in last
    assert {p: p.read_bytes() for p in kept} == kept
    record = json.loads(build_record_path(db).read_text())
    assert (record["state"], record["stage"]) == ("failed", "dbt build")
    page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    lines = status_lines(page)
    assert any("failed during the stage 'dbt build'" in x for x in lines), lines
    assert any(x.startswith("Not validated: the tables were rebuilt") for x in lines), lines
    assert "Validation passed" not in page


# ------------------------------------------ a plain dbt build, then judge-bias validate


def test_plain_dbt_run_makes_the_record_stale_until_validate(
    demo_build: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = copy_warehouse(demo_build, tmp_path / "wh")
    target = tmp_path / "target"
    env = build_mod.dbt_env(db) | {"JUDGE_BIAS_DATA_DIR": str(tmp_path / "not a folder")}
    # DESIGN: `--vars '{data_dir: DIR}'` works alone, and wins over the environment.
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "run", "--select", "base_inputs__models",
         "--vars", json.dumps({"data_dir": str(DEMO_DIR)}), "--target-path", str(target),
         "--log-path", str(tmp_path / "logs")],
        cwd=build_mod.PROJECT_DIR, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert query(db, "select data_dir from dbt_last_run")["data_dir"][0] == str(DEMO_DIR)
    page = write_report(db, tmp_path / "stale.html").read_text(encoding="utf-8")
    assert any(
        x.startswith("Not validated: the tables were rebuilt (dbt run") for x in status_lines(page)
    )
    assert "Validation passed" not in page

    assert main(["validate", "--db", str(db)]) == 0
    capsys.readouterr()
    record = json.loads(validation_path(db).read_text())
    assert record["validated_by"] == "judge-bias validate"
    assert record["data_dir"] == str(DEMO_DIR)
    page = write_report(db, tmp_path / "fresh.html").read_text(encoding="utf-8")
    assert status_lines(page) == []
    assert "Validation passed" in section(page, "provenance")


@pytest.mark.parametrize("value", ["0.8", "1.5", "abc"])
def test_max_rejected_share_var_reaches_the_table_or_stops(tmp_path: Path, value: str) -> None:
    target = tmp_path / "target"
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "compile", "--select", "input_row_counts",
         "--vars", f"{{max_rejected_share: {value}}}", "--target-path", str(target),
         "--log-path", str(tmp_path / "logs")],
        cwd=build_mod.PROJECT_DIR, env=build_mod.dbt_env(tmp_path / "w.duckdb"),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if value == "0.8":
        assert proc.returncode == 0, proc.stdout[-2000:]
        sql = next(target.rglob("input_row_counts.sql")).read_text()
        assert "cast(0.8 as double) as max_rejected_share" in sql
    else:
        assert proc.returncode != 0
        assert f"var max_rejected_share must be a number between 0 and 1, got {value}" in (
            proc.stdout
        )


# ----------------------------------------------------------------- paths are data


def test_paths_with_templates_emoji_quotes_and_spaces(tmp_path: Path, dbt_children: list) -> None:
    """Also: the build's two dbt phases run in one dbt process (build.dbt_phases)."""
    parts = ("inj{{ 7*6 }}", "🦆 emoji", 'it\'s "quoted" ')
    data = tmp_path.joinpath(*parts)
    shutil.copytree(DEMO_DIR, data)
    rows = rewrite_csv(data / "judge_ratings.csv", lambda rows: rows[:-60])
    # where a rendered or re-parsed path would lead: the full demo data
    shutil.copytree(DEMO_DIR, tmp_path.joinpath("inj42", *parts[1:]))
    db = tmp_path / "db {% raw %} inj{{ 7*6 }} 🦆 \"q\" 's'" / "w {{ x }}.duckdb"
    result = build_mod.build(data, db, quiet=True)
    assert result.validation.success and result.bi_path is not None
    assert result.bi_path.exists() and validation_path(db).exists()
    assert query(db, "select count(*) as n from fct_judge_ratings")["n"][0] == len(rows) - 1
    files = query(db, "select source_file from input_row_counts where source_file is not null")
    assert {Path(f).parent for f in files["source_file"]} == {data}
    assert query(db, "select data_dir from dbt_last_run")["data_dir"][0] == str(data)
    assert json.loads(build_record_path(db).read_text())["state"] == "ok"
    assert len(dbt_children) == 1, dbt_children


# ------------------------------------------------------------------- a held lock


def test_a_held_lock_is_one_line_naming_the_holder(
    demo_build: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = copy_warehouse(demo_build, tmp_path / "wh")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); "
         "time.sleep(120)", str(db)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "ready"
        for verb in ("report", "validate"):
            assert main([verb, "--db", str(db)]) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "Traceback" not in err
            assert err.startswith(f"judge-bias {verb}: {db} is locked by another process: ")
            assert f"PID {holder.pid} (" in err
            assert err.strip().endswith(f"or open {default_bi_path(db)} instead")
        assert main(["build", "--data", str(DEMO_DIR), "--db", str(db)]) == 1
        out, err = capsys.readouterr()
        assert (
            err.count("\n") == 1 and f"{db} is locked by another process: PID {holder.pid}" in err
        )
    finally:
        holder.kill()
        holder.wait()
    record = json.loads(build_record_path(db).read_text())
    assert record["state"] == "failed" and record["stage"] == "checking inputs"


def test_exit_without_teardown_runs_what_an_exit_runs(tmp_path):
    """`judge-bias build` ends with dbt_child.exit_without_teardown: its exit code, the
    output buffered, the atexit functions and the other threads' work all kept."""
    mark = tmp_path / "atexit.txt"
    script = f"""
import atexit, pathlib, sys, threading, time
from judge_bias.warehouse.dbt_child import exit_without_teardown
atexit.register(lambda: pathlib.Path({str(mark)!r}).write_text("ran"))
done = []
threading.Thread(target=lambda: (time.sleep(0.3), done.append(1), print("thread"))).start()
sys.stdout.write("buffered ")
exit_without_teardown(3)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 3, out.stderr
    assert out.stdout.split() == ["buffered", "thread"]
    assert mark.read_text() == "ran"
