"""A GLM fit that errors or warns is named in the build's summary and in the report
(issue 29): glm/runner.py records it as a glm_fits row (status error or warning), not
as a dbt failure, so nothing else would say it.

dbt is replaced by a stand-in that writes glm_fits as glm/runner.py and the glm_fits
mart do (the columns the mart's contract names); the validation by a passing report.
What is tested is what reads glm_fits: the build, the CLI's closing summary, the HTML
and Markdown reports. The runner's own error row is covered below on a real call.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

import judge_bias.warehouse.build as build_mod
from judge_bias.cli import main
from judge_bias.report import write_report
from judge_bias.warehouse.glm_fit_status import NOTE_WIDTH, FitProblem, glm_fit_problems
from judge_bias.warehouse.snapshot import MartDocs
from judge_bias.warehouse.validation import ValidationReport

FITS = [
    # model, dimension, status, notes
    ("grader_model", "quality", "error", "ValueError: planted failure in the sampler"),
    ("pairwise", "pairwise", "warning", "3 divergent transitions; r_hat_max 1.08 > 1.01"),
    ("items", "quality", "ok", ""),
    ("hierarchical", "quality", "skipped", "over the memory budget"),
    ("gam", "quality", "not requested", "not in glm_models (grader_model)"),
]


@contextmanager
def _fake_phases(args: list[str], db: Path, *_: object, **__: object):
    """build.dbt_phases: the first phase, then the second when asked."""
    _fake_dbt(db)
    yield lambda args: _fake_dbt(db)


def _fake_dbt(db: Path) -> None:
    # the first of the build's two dbt phases leaves run_results.json (build.py copies it)
    target = build_mod.target_dir(db)
    target.mkdir(parents=True, exist_ok=True)
    (target / "run_results.json").write_text('{"results": []}')
    con = duckdb.connect(str(db))
    try:
        con.register("fits", pd.DataFrame(FITS, columns=["model", "dimension", "status", "notes"]))
        con.execute("create or replace table glm_fits as select * from fits")
    finally:
        con.close()


@pytest.fixture()
def built(demo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setattr(build_mod, "dbt_phases", _fake_phases)
    monkeypatch.setattr(
        build_mod, "validate", lambda db, on_load=False: ValidationReport(findings=[])
    )
    monkeypatch.setattr(build_mod, "mart_docs", lambda manifest: {"glm_fits": MartDocs()})
    db = tmp_path / "wh.duckdb"
    code = main(["build", "--data", str(demo_copy), "--db", str(db)])
    assert code == 0
    return db, capsys.readouterr().out


def test_the_build_summary_names_failed_and_warning_fits(built) -> None:
    db, out = built
    closing = out[out.index("validation:") :]  # the CLI's closing summary
    for text in (
        "warning: GLM fit grader_model on quality: failed (ValueError: planted failure",
        "warning: GLM fit pairwise on pairwise: warning (3 divergent transitions",
    ):
        assert text in closing, out
    assert "items on quality" not in out and "hierarchical on" not in out
    assert "gam on" not in out


def test_the_report_names_them_beside_not_supported(built, tmp_path: Path) -> None:
    db, _ = built
    html = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    section = html[html.index('id="significant"') :]
    section = section[: section.index("</section>")]
    assert (
        '<p class="failed-fits">GLM fits failed: <b>grader_model</b> on quality '
        "(ValueError: planted failure in the sampler). GLM fits with warnings: "
        "<b>pairwise</b> on pairwise (3 divergent transitions; r_hat_max 1.08 &gt; 1.01).</p>"
    ) in section
    md = write_report(db, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "GLM fits failed" in md and "grader_model" in md


def test_no_line_without_a_problem(tmp_path: Path) -> None:
    db = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(db))
    assert glm_fit_problems(con) == []  # no glm_fits at all
    con.execute("create table glm_fits (model text, dimension text, status text, notes text)")
    con.execute("insert into glm_fits values ('items', 'q', 'ok', ''), ('x', 'q', 'skipped', 'n')")
    assert glm_fit_problems(con) == []
    con.close()


def _two_graders_two_models():
    """The GLM inputs of one dimension q (scores 1-3): two graders rate two models, 3
    rows per score."""
    from judge_bias.glm.runner import Inputs

    counts = pd.DataFrame(
        [("q", g, "llm", m, float(s), 3) for g in ("g1", "g2") for m in ("m1", "m2")
         for s in (1, 2, 3)],
        columns=["dimension", "grader", "grader_type", "model", "score", "n"],
    )  # fmt: skip
    return Inputs(
        rating_counts=counts,
        item_counts=counts.assign(item="i").iloc[:0],
        pairwise_counts=pd.DataFrame(),
        scales=pd.DataFrame({"dimension": "q", "score": [1.0, 2.0, 3.0]}),
        families={},
        agreement_rows=pd.DataFrame(),
        excluded=pd.DataFrame(columns=["dimension", "reason", "n"]),
    )


def test_a_sampler_error_becomes_an_error_row_that_is_named(monkeypatch, tmp_path) -> None:
    """The runner side on a real call: run_batch raising gives status error with the
    exception in notes; glm_fit_problems reads that row back from a glm_fits table."""
    import judge_bias.glm.runner as runner
    from judge_bias.glm.runner import GlmConfig, run_glms

    def boom(*args: object, **kwargs: object) -> list:
        raise FloatingPointError("planted: the sampler diverged at once")

    monkeypatch.setattr(runner, "run_batch", boom)
    monkeypatch.setenv("JUDGE_BIAS_JAX_CACHE", str(tmp_path / "jax-cache"))
    inputs = _two_graders_two_models()
    out = run_glms(inputs, GlmConfig(models=("grader_model",)))
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    con.register("fits", out[out["output"] == "fits"][["model", "dimension", "status", "notes"]])
    con.execute("create table glm_fits as select * from fits")
    problems = glm_fit_problems(con)
    con.close()
    assert [(p.model, p.dimension, p.status) for p in problems] == [("grader_model", "q", "error")]
    assert "FloatingPointError: planted" in problems[0].note


def test_a_long_note_is_cut_at_a_word():
    """A note past NOTE_WIDTH ends at the last whole word with '...' (it was cut
    mid-word: "if ev..."), a short one is whole on one line."""
    words = "r_hat up to 1.0103 (> 1.01 on 1 of 40 parameters; 0.3 expected by chance"
    long = "; ".join([words] * 6)
    note = FitProblem("m", "d", "warning", long).note
    assert len(note) <= NOTE_WIDTH and note.endswith("...")
    assert long.startswith(note[:-3]) and long[len(note) - 3] == " "
    assert FitProblem("m", "d", "warning", "a\n  b").note == "a b"
    # an R-hat sentence (~130 characters) after a fit's notes still fits whole
    assert NOTE_WIDTH == 240
    # no separator left before the '...'
    cut = FitProblem("m", "d", "warning", "x" * 200 + "; " + "y" * 60).note
    assert cut == "x" * 200 + "..."


def test_a_log_likelihood_of_minus_infinity_is_noted_in_glm_fits(monkeypatch, tmp_path) -> None:
    """The runner's wiring on a real fit (mend23b R1): pointwise's terms computed with
    one cell's log-likelihood -inf under one draw give the fit's row a warning status,
    the note naming the rows (zero_probability_note) and elpd_loo undefined (NaN, stored
    NULL), and its comparison row elpd NULL too. Fails when the runner does not append
    the note, and when elpd is -inf."""
    import judge_bias.glm.runner as runner
    from judge_bias.glm.fit import FitSettings
    from judge_bias.glm.runner import GlmConfig, run_glms

    real = runner.pointwise

    def with_minus_infinity(chunks, reff):
        chunks = [np.array(c, dtype=np.float64) for c in chunks]
        chunks[0][0, 0] = -np.inf  # draw 0, the first cell
        return real(chunks, reff)

    monkeypatch.setattr(runner, "pointwise", with_minus_infinity)
    monkeypatch.setattr(runner, "AGREEMENT_MODELS", ())  # its agreement rows: not here
    monkeypatch.setenv("JUDGE_BIAS_JAX_CACHE", str(tmp_path / "jax-cache"))
    inputs = _two_graders_two_models()
    settings = FitSettings(draws=100, warmup=100, chains=1)
    out = run_glms(inputs, GlmConfig(models=("grader_model",), settings=settings))
    fits = out[(out["output"] == "fits") & (out["model"] == "grader_model")]
    assert fits["status"].tolist() == ["warning"]
    first_cell = int(inputs.rating_counts["n"].iloc[0])  # the rows of the cell given -inf
    note = (
        f"{first_cell} rows have a log-likelihood of -inf under at least one posterior "
        "draw (numerical underflow or zero probability): elpd is undefined"
    )
    assert note in fits["notes"].iloc[0]
    comparison = out[(out["output"] == "comparison") & (out["model"] == "grader_model")]
    assert len(comparison) == 1
    assert comparison["elpd_loo"].isna().all() and comparison["elpd_waic"].isna().all()
