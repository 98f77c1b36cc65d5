"""The CLI's options say what they do: help text on every option of build,
validate and report; the demo data used by default is said so; --png-dir with a
Markdown report is refused, not silently ignored."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from judge_bias.cli import EXIT_USAGE, main, parser
from judge_bias.warehouse import build as build_mod


def _option_help(verb: str) -> dict[str, str | None]:
    sub = next(a for a in parser()._actions if a.dest == "command")
    verb_parser = sub.choices[verb]  # type: ignore[index]
    return {
        a.option_strings[-1]: a.help
        for a in verb_parser._actions
        if a.option_strings and a.dest not in ("help", "debug")
    }


@pytest.mark.parametrize("verb", ["build", "validate", "report"])
def test_every_option_has_help(verb: str) -> None:
    helps = _option_help(verb)
    assert helps and all(helps.values()), helps


def test_build_without_data_says_it_builds_the_demo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = {}

    def fake_build(data, *_args, **_kwargs):
        seen["data"] = data
        raise build_mod.BuildError("stopped by the test")

    monkeypatch.setattr(build_mod, "build", fake_build)
    assert main(["build"]) == 1
    demo = build_mod.PROJECT_DIR / build_mod.DEFAULT_DATA
    assert Path(seen["data"]) == demo
    assert f"no --data given: building the embedded demo data ({demo})" in capsys.readouterr().out

    seen.clear()
    assert main(["build", "--data", "elsewhere"]) == 1
    assert seen["data"] == "elsewhere"
    assert "demo" not in capsys.readouterr().out


def test_png_dir_with_markdown_report_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "w.duckdb"
    db.touch()
    out = tmp_path / "r.md"
    args = ["report", "--db", str(db), "--out", str(out), "--png-dir", str(tmp_path / "png")]
    assert main(args) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("judge-bias report: --png-dir saves the HTML report's figures")
    assert not out.exists() and not (tmp_path / "png").exists()


def test_import_files_may_follow_the_options() -> None:
    """`judge-bias import play-favorites --out DIR FILE` names FILE (argparse alone
    rejected it as an unrecognised argument); a stray option is still refused."""
    from judge_bias.cli import parse

    assert parse(["import", "play-favorites", "--out", "d", "a.csv", "b.csv"]).files == [
        "a.csv",
        "b.csv",
    ]
    assert parse(["import", "play-favorites", "a.csv", "--out", "d", "b.csv"]).files == [
        "a.csv",
        "b.csv",
    ]
    for argv in (["import", "llmbar", "--out", "d", "a.json", "--bogus"], ["build", "x"]):
        with pytest.raises(SystemExit) as exc:
            parse(argv)
        assert exc.value.code == 2


@pytest.mark.parametrize("publish", [[], ["--publish"]], ids=["validate", "validate --publish"])
def test_validate_on_a_warehouse_without_a_build_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], publish: list[str]
) -> None:
    """The empty warehouse a rolled-back first load leaves (an empty DuckDB file, as
    guard_load writes it) has nothing to validate: one line saying so and what to
    run, exit 2, no validation record. Fails without the check in _built_db (the
    suites ran: "17 critical failures; first: base_inputs__prompts: table exists",
    exit 1), and when it tests the file's size alone (a DuckDB file with no table)."""
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    assert main(["validate", "--db", str(db), *publish]) == EXIT_USAGE
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "holds no build yet" in last and "nothing to validate" in last
    assert f"run judge-bias build --db {db}" in last
    assert not db.with_name("w.validation.json").exists()
    # a warehouse with a table is validated (the suites' own failures, exit 1)
    with duckdb.connect(str(db)) as con:
        con.execute("create table something (x int)")
    assert main(["validate", "--db", str(db)]) == 1
    assert "holds no build yet" not in capsys.readouterr().err
