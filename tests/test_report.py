"""The HTML report: self-contained, every panel drawn on the demo build, the generated
text checked against the tables, missing and optional tables handled."""

from __future__ import annotations

import base64
import html
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.agreement import SELF_VS_PEER_NEEDS
from judge_bias.cli import main
from judge_bias.report import (
    HUMAN,
    Warehouse,
    heatmap_data,
    leaderboard_rank_agreement,
    write_report,
)
from judge_bias.warehouse.build import BuildResult
from tests.conftest import query

pytestmark = pytest.mark.dbt

FIGURE_PANELS = (
    "forest",
    "by_dimension",
    "heatmap",
    "robustness",
    "agreement_annotators",
    "agreement_judge_human",
    "self_vs_peer",
    "agreement_counterfactual",
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class _Doc(HTMLParser):
    """Sections (by id) with their img sources, every src/href, and <li> texts by class."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.images: dict[str, list[str]] = {}
        self.section: str | None = None
        self.items: dict[str, list[str]] = {}  # li class -> the <b> texts inside
        self.li: str | None = None
        self.in_b = False
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        for name in ("src", "href"):
            if a.get(name) is not None:
                self.links.append((tag, name, a[name] or ""))
        if tag == "section":
            self.section = a.get("id")
        if tag == "img" and self.section:
            self.images.setdefault(self.section, []).append(a.get("src") or "")
        if tag == "li" and a.get("class"):
            self.li = a["class"]
            self.items.setdefault(self.li, [])
        if tag == "b":
            self.in_b = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self.li = None
        if tag == "b":
            self.in_b = False

    def handle_data(self, data: str) -> None:
        if self.in_b and self.li:
            self.items[self.li].append(data)


def _parse(html: str) -> _Doc:
    doc = _Doc()
    doc.feed(html)
    return doc


@pytest.fixture(scope="module")
def demo_report(demo_build: BuildResult, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    out = tmp_path_factory.mktemp("report")
    path = write_report(demo_build.db_path, out / "report.html", png_dir=out / "png")
    return path.read_text(encoding="utf-8"), out / "png"


def _copy_db(demo_build: BuildResult, tmp_path: Path) -> Path:
    db = tmp_path / "copy.duckdb"
    shutil.copy(demo_build.db_path, db)
    return db


def test_every_panel_has_an_embedded_png(demo_report: tuple) -> None:
    html, png_dir = demo_report
    doc = _parse(html)
    for key in FIGURE_PANELS:
        srcs = doc.images.get(key)
        assert srcs, f"panel {key} has no figure"
        data = base64.b64decode(srcs[0].removeprefix("data:image/png;base64,"))
        assert data.startswith(PNG_MAGIC) and len(data) > 5_000
        assert (png_dir / f"{key}.png").read_bytes() == data
    assert 'id="leaderboard"' in html and 'class="leaderboard"' in html
    # The demo has pairwise and perturbation judgments: their panels are drawn too.
    for key in ("pairwise", "perturbation"):
        section = re.search(rf'<section id="{key}">(.*?)</section>', html, re.S).group(1)
        assert "Panel not drawn" not in section and "<img" in section


def test_report_is_self_contained(demo_report: tuple) -> None:
    html, _ = demo_report
    doc = _parse(html)
    assert doc.links, "expected images and internal links"
    for tag, attr, value in doc.links:
        if attr == "src":
            assert value.startswith("data:image/png;base64,"), (tag, value[:60])
        else:
            assert value.startswith("#"), (tag, value)
    assert not {"script", "link", "iframe"} & doc.tags
    assert "url(" not in html and "@import" not in html


def _main_terms(db: Path, term: str) -> pd.DataFrame:
    return query(
        db,
        "select coalesce(judge, family) as name, estimate, ci_low, ci_high, significant "
        f"from bias_estimates where analysis = 'main' and slice = 'all' and term_type = '{term}'",
    )


def test_significance_text_matches_bias_estimates(
    demo_build: BuildResult, demo_report: tuple
) -> None:
    html, _ = demo_report
    items = _parse(html).items
    for term in ("self", "family"):
        rows = _main_terms(demo_build.db_path, term)
        # Independent of the significant column too: the interval excludes zero.
        assert (rows.significant == ((rows.ci_low > 0) | (rows.ci_high < 0))).all()
        pos = set(rows.name[rows.significant & (rows.estimate > 0)])
        neg = set(rows.name[rows.significant & (rows.estimate < 0)])
        ns = set(rows.name[~rows.significant])
        assert set(items.get(f"sig-{term}-positive", [])) == pos
        assert set(items.get(f"sig-{term}-negative", [])) == neg
        assert set(items.get(f"sig-{term}-not-significant", [])) == ns
        assert pos | neg, "the demo plants significant biases"
    # The judge whose self-bias cannot be estimated is named as such.
    judges = set(query(demo_build.db_path, "select distinct judge from fct_judge_ratings").judge)
    missing = judges - set(_main_terms(demo_build.db_path, "self").name)
    assert set(items.get("sig-self-not-estimable", [])) == missing
    # Self vs peers: exactly the judges with p < 0.05 under the positive frame.
    svp = query(demo_build.db_path, "select * from self_vs_peer_tests where framing = 'positive'")
    assert set(items["sig-self-vs-peer"]) == set(svp.judge[svp.p_self_received < 0.05])


def test_provenance_shows_counts_and_validation(
    demo_build: BuildResult, demo_report: tuple
) -> None:
    html, _ = demo_report
    prov = re.search(r'<section id="provenance">(.*)</section>', html, re.S).group(1)
    v = demo_build.validation
    met = sum(f.success for f in v.findings)
    assert f"Validation passed: {met} of {len(v.findings)} expectations met" in prov
    counts = query(demo_build.db_path, "select * from input_row_counts")
    table = re.search(r"<table>(.*?)</table>", prov, re.S).group(1)
    for r in counts.itertuples():
        cells = f"<td>{r.source}</td><td>{r.rows_read}</td><td>{r.rows_accepted}</td>"
        assert cells in table
    n_rejected = query(demo_build.db_path, "select count(*) as n from rejected_rows").n[0]
    assert ("No input row was rejected" in prov) == (n_rejected == 0)


def test_heatmap_grid_and_human_row(demo_build: BuildResult) -> None:
    con = duckdb.connect(str(demo_build.db_path), read_only=True)
    try:
        grid, norm = heatmap_data(Warehouse(con))
        fact = con.execute("select * from fct_judge_ratings").df()
    finally:
        con.close()
    # Judge rows: plain pandas means over the fact table (NA labels have no score).
    scored = fact.dropna(subset=["judge_score_norm"])
    expected = scored.groupby(["judge", "model"]).judge_score_norm.mean().unstack()
    pd.testing.assert_frame_equal(
        grid.drop(index=HUMAN).sort_index().sort_index(axis=1),
        expected.sort_index().sort_index(axis=1),
        check_names=False,
        atol=1e-12,
    )
    # Human row: each completion x dimension once.
    once = fact.dropna(subset=["human_score_norm"]).drop_duplicates(
        ["prompt_id", "model", "dimension"]
    )
    human = once.groupby("model").human_score_norm.mean()
    np.testing.assert_allclose(grid.loc[HUMAN, human.index], human.to_numpy(), atol=1e-12)
    # Per-row normalisation: each row spans 0..1 and keeps the order of the means.
    np.testing.assert_allclose(norm.min(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(norm.max(axis=1), 1, atol=1e-12)
    for row in grid.index:
        assert (grid.loc[row].rank() == norm.loc[row].rank()).all()


def test_leaderboard_rank_agreement_against_pandas(demo_build: BuildResult) -> None:
    lb = query(demo_build.db_path, "select * from debiased_leaderboard")
    for judge, rows in lb.groupby("judge"):
        got = leaderboard_rank_agreement(rows)
        ranks = rows[["mean_score", "mean_debiased_score", "mean_human_score"]].rank()
        before = np.corrcoef(ranks.mean_score, ranks.mean_human_score)[0, 1]
        after = np.corrcoef(ranks.mean_debiased_score, ranks.mean_human_score)[0, 1]
        assert got == pytest.approx((before, after), abs=1e-12), judge
    assert leaderboard_rank_agreement(lb.head(2)) is None


def test_missing_and_empty_tables_are_explained(demo_build: BuildResult, tmp_path: Path) -> None:
    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    for t in ("bias_estimates", "debiased_leaderboard", "agreement_counterfactual"):
        con.execute(f"drop table {t}")
    con.execute("delete from agreement_judge_human")
    con.close()
    html = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    doc = _parse(html)
    unsupported = re.search(r'<p class="unsupported">(.*?)</p>', html, re.S).group(1)
    for key, reason in (
        ("forest", "table bias_estimates is not in this database"),
        ("by_dimension", "table bias_estimates is not in this database"),
        ("robustness", "table bias_estimates is not in this database"),
        ("leaderboard", "table debiased_leaderboard is not in this database"),
        ("agreement_counterfactual", "table agreement_counterfactual is not in this database"),
        ("agreement_judge_human", "table agreement_judge_human has no rows"),
    ):
        # no empty section: the analysis is named, with its reason, in one line
        assert f'<section id="{key}">' not in html, key
        assert f"({reason})" in unsupported, key
        assert key not in doc.images
    assert "heatmap" in doc.images and "self_vs_peer" in doc.images
    assert "No bias estimates in this database" not in html and "Panel not drawn" not in html
    # the marts that are left still speak in "What is significant"
    assert "Agreement between human annotators" in html.split('id="heatmap"')[0]
    assert "No validation record (copy.validation.json)" in html


def test_panels_with_every_value_null_are_explained_not_drawn(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    """Constant scores (valid data) leave every correlation and counterfactual alpha
    null, with the mart's notes saying why (newuser20: the report drew two empty
    figures, with no text, and matplotlib warned 'No artists with labels found to put
    in legend' on the terminal). Each panel is now listed as unsupported with the
    notes, and the report warns about nothing."""
    import warnings

    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    con.execute(
        "update agreement_judge_human set spearman = null, pearson = null, "
        "kendall_tau_b = null, notes = 'correlations null: the judge''s scores are constant'"
    )
    con.execute(
        "update agreement_counterfactual set alpha_observed = null, alpha_calibrated = null, "
        "notes = 'alpha_observed null: every rating one value'"
    )
    con.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    unsupported = re.search(r'<p class="unsupported">(.*?)</p>', html, re.S).group(1)
    images = _parse(html).images
    for key, note in (
        ("agreement_judge_human", "the judge&#x27;s scores are constant"),
        ("agreement_counterfactual", "alpha_observed null: every rating one value"),
    ):
        assert f'<section id="{key}">' not in html, key
        assert key not in images, key
        assert f"no row of {key} has a value of" in unsupported, key
        assert note in unsupported, key
    # a panel with a value is still drawn
    assert "self_vs_peer" in images and "heatmap" in images


def test_empty_self_vs_peer_says_what_it_needs(demo_build: BuildResult, tmp_path: Path) -> None:
    """One judge, or judges never rating their own model (newuser20), leave
    self_vs_peer_tests empty: the report says what the test needs, not only that the
    table has no rows."""
    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    con.execute("delete from self_vs_peer_tests")
    con.close()
    page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    unsupported = re.search(r'<p class="unsupported">(.*?)</p>', page, re.S).group(1)
    assert (
        "Self versus peers (paired t-tests) (table self_vs_peer_tests has no rows; it needs "
        f"{html.escape(SELF_VS_PEER_NEEDS)})" in unsupported
    )
    # the need as int_self_vs_peer_items' SQL has it: S (the judge's own model, by name),
    # G (other models, same prompt, dimension and frame), R (another judge, positive frame)
    for part in ("name equals a model", "(S)", "same frame, other models", "(G)",
                 "another judge", "positive frame (R)"):  # fmt: skip
        assert part in SELF_VS_PEER_NEEDS, part
    assert "self_vs_peer" not in _parse(page).images


def test_a_panel_with_one_null_row_is_still_drawn(demo_build: BuildResult, tmp_path: Path) -> None:
    """A panel is unsupported only when every value is null (no_value_reason): one
    judge's row nulled leaves the other judges' values, and both panels are drawn."""
    from judge_bias.report.agreement import panel_counterfactual, panel_judge_human

    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    try:
        judge = con.execute(
            "select min(judge) from agreement_judge_human where dimension = 'all'"
        ).fetchone()[0]
        con.execute(
            "update agreement_judge_human set spearman = null, pearson = null, "
            "kendall_tau_b = null where judge = ?",
            [judge],
        )
        con.execute(
            "update agreement_counterfactual set alpha_observed = null, alpha_calibrated = null "
            "where judge = ?",
            [judge],
        )
        for table, col in (("agreement_judge_human where dimension = 'all'", "spearman"),
                           ("agreement_counterfactual", "alpha_observed")):  # fmt: skip
            n_null, n_value = con.execute(
                f"select count(*) filter (where {col} is null), count({col}) from {table}"
            ).fetchone()
            assert n_null > 0 and n_value > 0, table  # one judge null, the others not
        wh = Warehouse(con)
        for make in (panel_judge_human, panel_counterfactual):
            p = make(wh)
            assert p.absent is None and p.figure is not None, p.key
    finally:
        con.close()


def test_no_value_reason_without_its_columns() -> None:
    """A table that has none of the panel's columns (a warehouse older than them) is
    said so, not 'no row of t has a value of ' with an empty list."""
    from judge_bias.report.base import no_value_reason

    df = pd.DataFrame({"judge": ["a"], "notes": ["x"]})
    assert no_value_reason("t", df, ("spearman", "pearson")) == (
        "t has none of the columns spearman, pearson"
    )
    assert no_value_reason("t", df.assign(spearman=[0.5]), ("spearman", "pearson")) is None


def test_pairwise_and_perturbation_panels_when_tables_exist(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    db = _copy_db(demo_build, tmp_path)
    judges = sorted(query(db, "select distinct judge from fct_judge_ratings").judge)
    rng = np.random.default_rng(7)
    rows = []
    for i, j in enumerate(judges):
        for opponent in ("all", "someone"):
            eo = 0.12 - 0.05 * i
            rows.append(
                {
                    "judge": j,
                    "opponent": opponent,
                    "n_pairs": 100,
                    "position_consistency": 0.8,
                    "position_consistency_ci_low": 0.7,
                    "position_consistency_ci_high": 0.9,
                    "first_slot_rate": 0.55,
                    "first_slot_rate_ci_low": 0.5,
                    "first_slot_rate_ci_high": 0.6,
                    "self_preference_rate": rng.uniform(0.4, 0.7),
                    "self_preference_rate_ci_low": 0.35,
                    "self_preference_rate_ci_high": 0.75,
                    # 'someone' rows all significant: they must not leak into the pooled text
                    "eo_bias": eo if opponent == "all" else 0.5,
                    "eo_bias_ci_low": eo - 0.06 if opponent == "all" else 0.4,
                    "eo_bias_ci_high": eo + 0.06 if opponent == "all" else 0.6,
                    "length_slope": 0.1,
                    "length_slope_ci_low": -0.1,
                    "length_slope_ci_high": 0.3,
                }
            )
    pairwise = pd.DataFrame(rows)
    perturbation = pd.DataFrame(
        [
            {
                "judge": j,
                "bias_type": b,
                "robustness_rate": 0.9 - 0.1 * k,
                "consistency_rate": 0.95,
                "accuracy_original": 0.8,
                "accuracy_perturbed": 0.7,
                "error_rate": None,
            }
            for j in judges
            for k, b in enumerate(("verbosity", "authority"))
        ]
    )
    con = duckdb.connect(str(db))
    con.register("p", pairwise)
    con.register("q", perturbation)
    con.execute("create or replace table pairwise_bias as select * from p")
    con.execute("create or replace table perturbation_bias as select * from q")
    con.close()

    html = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    doc = _parse(html)
    assert "pairwise" in doc.images and "perturbation" in doc.images
    assert "pairwise_opponents" in doc.images  # the 'someone' rows, per opponent
    pooled = pairwise[pairwise.opponent == "all"]
    sig = pooled.judge[(pooled.eo_bias_ci_low > 0) | (pooled.eo_bias_ci_high < 0)]
    assert 0 < len(sig) < len(judges)
    assert set(doc.items["sig-eo"]) == set(sig)

    # Present but empty: explained, not drawn.
    con = duckdb.connect(str(db))
    con.execute("delete from pairwise_bias")
    con.close()
    html = write_report(db, tmp_path / "r2.html").read_text(encoding="utf-8")
    unsupported = re.search(r'<p class="unsupported">(.*?)</p>', html, re.S).group(1)
    assert "Pairwise verdicts, Pairwise verdicts per opponent" in unsupported
    assert "(table pairwise_bias has no rows" in unsupported
    assert "pairwise" not in _parse(html).images


def test_cli_report_default_html_and_markdown(
    demo_build: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(demo_build.db_path), "--out", str(out)]) == 0
    assert f"report: {out.resolve()}" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    md = tmp_path / "r.md"
    assert main(["report", "--db", str(demo_build.db_path), "--out", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# judge-bias warehouse")
    # the Markdown report has the HTML report's sections, in the same order
    html_titles = re.findall(r"<h2>(.*?)</h2>", out.read_text(encoding="utf-8"))
    assert re.findall(r"^## (.*)$", text, re.M) == [html.unescape(t) for t in html_titles]
    assert "| judge |" in text and "Self-bias (a judge favours its own model)" in text
    assert main(["report", "--db", str(tmp_path / "none.duckdb"), "--out", str(out)]) == 2


# ------------------------------------------------ issue 33: a report that reads at a glance


def _unescaped(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_caption_names_no_empty_value_and_no_negative_zero() -> None:
    from judge_bias.report import Panel
    from judge_bias.report.base import attach_table

    df = pd.DataFrame(
        {
            "judge": ["a", "b"],
            "spearman": [np.nan, np.nan],
            "spearman_ci_low": [np.nan, np.nan],
            "spearman_ci_high": [np.nan, np.nan],
            "pairwise_accuracy": [None, None],
            "bias": [0.0004, -0.0002],
            "bias_ci_low": [-0.0003, -0.0004],
            "bias_ci_high": [0.002, 0.001],
            "method": ["Wald", "Wald"],
        }
    )
    p = Panel("k", "t", caption="Read it.")
    attach_table(p, df)
    # a column with no value is said to be absent, never "spearman: ;"
    assert "spearman: " not in p.caption and "pairwise_accuracy: " not in p.caption
    assert "(no value in any row): spearman, pairwise_accuracy." in p.caption
    assert "Every row of the table has method: Wald." in p.caption
    assert "-0.000" not in p.html
    assert "<td>0.000 [0.000, 0.002]</td>" in p.html  # -0.0003 rounds to 0.000
    assert list(p.frames[0].columns) == ["judge", "bias"]


def test_demo_report_has_no_negative_zero_or_empty_caption(demo_report: tuple) -> None:
    page, _ = demo_report
    text = _unescaped(page)
    assert "-0.000" not in text
    assert not re.search(r"\w: ;|\w: \.", text), re.findall(r".{40}\w: [;.]", text)


def _glance(page: str) -> str:
    return re.search(r'<section id="glance">(.*?)</section>', page, re.S).group(1)


def test_glance_comes_first_with_verdicts_biases_and_failures(
    demo_build: BuildResult, demo_report: tuple
) -> None:
    page, _ = demo_report
    glance = _glance(page)
    # first: before every detail section, and every detail section is collapsed
    assert page.index('<section id="glance">') < page.index("<details")
    n_sections = page.count("<section id=") - 1
    assert page.count('<details class="detail">') == n_sections > 10
    assert "<details open" not in page
    # verdicts: each judge once, under the verdict judge_scorecard gives it
    sc = query(demo_build.db_path, "select * from judge_scorecard where dimension = 'all'")
    for r in re.findall(r'<li class="glance-verdict">(.*?)</li>', glance):
        verdict = re.match(r"<i>(.*?)</i>", r).group(1)
        named = set(re.findall(r"<b>(.*?)</b>", r))
        assert named == set(sc.judge[sc.verdict == html.unescape(verdict)]), verdict
    assert len(re.findall(r'class="glance-verdict"', glance)) == sc.verdict.nunique()
    # largest biases: the five significant main-fit terms of largest |estimate|
    main = query(
        demo_build.db_path,
        "select coalesce(judge, family) as name, estimate, ci_low, ci_high from bias_estimates "
        "where analysis = 'main' and slice = 'all' and term_type in ('self', 'family') "
        "and (ci_low > 0 or ci_high < 0)",
    )
    top = main.reindex(main.estimate.abs().sort_values(ascending=False).index).head(5)
    items = re.findall(r'<li class="glance-bias">(.*?)</li>', glance)
    score_items = [x for x in items if "score units" in x]
    assert [re.search(r"<b>(.*?)</b>", x).group(1) for x in score_items] == list(top.name)
    first = top.iloc[0]
    assert f"{first.estimate:+.3f} [{first.ci_low:+.3f}, {first.ci_high:+.3f}]" in score_items[0]
    # what failed: rejected rows (none in the demo) and the analyses not supported
    assert "No input row was rejected." in glance
    unsupported = re.search(r'class="glance-unsupported">(.*?)</li>', glance).group(1)
    assert "Autograder GLM: model comparison by PSIS-LOO" in unsupported


def test_unsupported_line_names_each_glm_section_apart(demo_report: tuple) -> None:
    page, _ = demo_report
    line = re.search(r'<p class="unsupported">(.*?)</p>', page, re.S).group(1)
    # the GLM sections share the "Autograder GLM" prefix: named by their whole titles
    assert "Autograder GLM (" not in line
    for title in (
        "grader, model and interaction effects",
        "model comparison by PSIS-LOO",
        "agreement observed, replicated and without grader effects",
    ):
        assert line.count(f"Autograder GLM: {title}") == 1, title


def test_glance_lists_rejected_rows_and_glm_fits_not_ok(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    con.execute("update input_row_counts set rows_rejected = 7 where source = 'judge_ratings'")
    con.execute("delete from glm_fits")
    con.execute(
        "insert into glm_fits (model, dimension, status, notes) values "
        "('grader_model', 'faithfulness', 'error', 'LinAlgError: singular'), "
        "('items', 'all', 'warning', 'R-hat 1.08 on 3 parameters'), "
        "('items', 'helpfulness', 'warning', 'ESS 12'), "
        "('null', 'all', 'ok', null), ('base', 'all', 'not requested', 'not in glm_models')"
    )
    con.close()
    glance = _glance(write_report(db, tmp_path / "r.html").read_text(encoding="utf-8"))
    rejected = re.search(r'class="glance-rejected">(.*?)</li>', glance).group(1)
    assert "judge_ratings 7 of 15,120" in rejected
    glm = html.unescape(re.search(r'class="glance-glm">(.*?)</li>', glance).group(1))
    assert glm == (
        "GLM fits not ok: error: grader_model on faithfulness (LinAlgError: singular); "
        "warning: items on all, helpfulness."
    )


def test_failed_build_overview_does_not_contradict_itself(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    db = _copy_db(demo_build, tmp_path)
    con = duckdb.connect(str(db))
    con.execute("drop table fct_judge_ratings cascade")
    con.close()
    page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    overview = _unescaped(page.split('<section id="glance">')[0])
    assert "No judge ratings" not in overview
    assert "judge ratings 15,120 accepted of 15,120 read" in overview
    assert "table fct_judge_ratings is not in this database" in overview


def test_report_on_the_bi_snapshot_shows_its_validation(
    demo_build: BuildResult, tmp_path: Path
) -> None:
    from judge_bias.warehouse.build import default_bi_path

    bi = default_bi_path(demo_build.db_path)
    record = query(bi, "select record from snapshot_validation").record
    assert len(record) == 1
    # the snapshot alone, away from the warehouse and its records, still says validated
    alone = tmp_path / "bi.duckdb"
    shutil.copy(bi, alone)
    for db in (bi, alone):
        page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
        assert '<p class="status">' not in page, db
        v = demo_build.validation
        assert f"Validation passed: {sum(f.success for f in v.findings)} of" in page
        assert f"BI snapshot of <code>{demo_build.db_path}</code>" in page


def test_overview_counts_agree_in_number() -> None:
    """One judge (newuser20: '240 judge ratings by 1 judges'): singular for 1, plural
    otherwise, on an in-memory fact table counted independently here."""
    from judge_bias.report.base import Warehouse
    from judge_bias.report.summary import overview_html

    con = duckdb.connect()
    rows = [("j1", "p1", "m1", "d1", 0.5)] + [
        ("j2", f"p{i}", f"m{i % 2}", "d2", 0.5) for i in range(1, 1201)
    ]
    con.execute(
        "create table fct_judge_ratings (judge varchar, prompt_id varchar, model varchar, "
        "dimension varchar, human_score_norm double)"
    )
    con.executemany("insert into fct_judge_ratings values (?, ?, ?, ?, ?)", rows[:1])
    text = overview_html(Warehouse(con))
    assert "1 judge rating by 1 judge of 1 model on 1 prompt and 1 dimension;" in text
    con.executemany("insert into fct_judge_ratings values (?, ?, ?, ?, ?)", rows[1:])
    text = overview_html(Warehouse(con))
    n_models = len({r[2] for r in rows})
    assert (
        f"{len(rows):,} judge ratings by 2 judges of {n_models} models on 1,200 prompts "
        "and 2 dimensions;" in text
    )


def test_pairwise_panels_show_the_ties_half_rate_beside_the_rate(tmp_path: Path) -> None:
    """pairwise_bias.self_preference_rate_ties_half (AlpacaEval's rule) is shown in
    the pooled and per-opponent pairwise panels, beside self_preference_rate: a
    column of the tables with its interval and a caption saying ties count half."""
    rates = {"jA": (0.7, 0.61875), "jB": (0.4, 0.4375)}  # (ties out, ties half)
    rows = [
        {
            "judge": judge, "opponent": opponent, "n_pairs": 10,
            "self_preference_rate": rate, "self_preference_rate_ci_low": rate - 0.1,
            "self_preference_rate_ci_high": rate + 0.1,
            "self_preference_rate_ties_half": half,
            "self_preference_rate_ties_half_ci_low": half - 0.125,
            "self_preference_rate_ties_half_ci_high": half + 0.125,
        }
        for judge, (rate, half) in rates.items()
        for opponent in ("all", "oX")
    ]  # fmt: skip
    db = tmp_path / "pairwise.duckdb"
    con = duckdb.connect(str(db))
    con.register("p", pd.DataFrame(rows))
    con.execute("create table pairwise_bias as select * from p")
    con.close()
    page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    for key in ("pairwise", "pairwise_opponents"):
        section = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S).group(1)
        assert "a tie counts half a win" in html.unescape(section), key
        head = re.search(r"<thead>(.*?)</thead>", section, re.S).group(1).replace("<wbr>", "")
        columns = re.findall(r"<th>(.*?)</th>", head)
        at = columns.index("self_preference_rate")
        assert columns[at + 1] == "self_preference_rate_ties_half", key
        for rate, half in rates.values():
            cells = f"<td>{rate:.3f} [{rate - 0.1:.3f}, {rate + 0.1:.3f}]</td>"
            cells += f"<td>{half:.3f} [{half - 0.125:.3f}, {half + 0.125:.3f}]</td>"
            assert cells in section, key


def test_the_ties_half_caption_names_only_the_rates_shown(tmp_path: Path) -> None:
    """The ties-half caption says "the self-preference rate beside it" only when
    that rate is shown; when it is null on every row (own pairs all ties) the
    caption says it is not shown, and the table has no such column."""
    rows = [
        {
            "judge": judge, "opponent": opponent, "n_pairs": 10,
            "self_preference_rate": None, "self_preference_rate_ci_low": None,
            "self_preference_rate_ci_high": None, "self_preference_rate_ties_half": 0.5,
            "self_preference_rate_ties_half_ci_low": 0.3,
            "self_preference_rate_ties_half_ci_high": 0.7,
        }
        for judge in ("jA", "jB")
        for opponent in ("all", "oX")
    ]  # fmt: skip
    db = tmp_path / "pairwise.duckdb"
    con = duckdb.connect(str(db))
    frame = pd.DataFrame(rows).astype({c: float for c in rows[0] if c.startswith("self")})
    con.register("p", frame)
    con.execute("create table pairwise_bias as select * from p")
    con.close()
    page = write_report(db, tmp_path / "r.html").read_text(encoding="utf-8")
    for key in ("pairwise", "pairwise_opponents"):
        section = html.unescape(
            re.search(rf'<section id="{key}">(.*?)</section>', page, re.S).group(1)
        )
        assert "a tie counts half a win" in section, key
        assert "beside it" not in section, key
        assert "which leaves ties out, is not shown" in section, key
        assert "<th>self_preference_rate</th>" not in section.replace("<wbr>", ""), key
