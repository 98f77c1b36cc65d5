"""The GLM report panels (report/glm.py) on small hand-made marts: each draws a
figure from its mart, marks what it says it marks, and says why when the mart
is missing or empty."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.report import Warehouse, registered_panels
from judge_bias.report.glm import panel_glm_agreement, panel_glm_comparison, panel_glm_effects

GRADERS, MODELS = ("judge-a", "judge-b", "ann_1"), ("judge-a", "judge-b", "model-c")


def effects_rows() -> pd.DataFrame:
    rows = []

    def add(term, parameter, grader="", rated="", mean=0.1):
        rows.append(
            dict(
                model="grader_model",
                dimension="helpfulness",
                parameter=parameter,
                term_type=term,
                grader=grader,
                rated_model=rated,
                mean=mean,
                sd=0.1,
                hdi_low=mean - 0.2,
                hdi_high=mean + 0.2,
                ci_level=0.9,
                r_hat=1.0,
                fit_status="ok",
            )  # fmt: skip
        )

    for g in GRADERS:
        add("grader", "grader_effects", grader=g)
        for m in MODELS:
            add("grader_model", "grader_model_effects", g, m, 0.8 if g == m else -0.1)
    for m in MODELS:
        add("model", "model_effects", rated=m)
    add("self", "self_contrast", "judge-a", "judge-a", 0.9)
    return pd.DataFrame(rows)


@pytest.fixture()
def warehouse() -> Warehouse:
    con = duckdb.connect()
    effects = effects_rows()  # noqa: F841 (read by DuckDB by name)
    con.execute("create table glm_effects as select * from effects")
    comparison = pd.DataFrame(  # noqa: F841
        dict(
            model=["grader_model", "grader_type"],
            dimension="helpfulness",
            family_of_models="ordinal",
            elpd_loo=[-100.0, -130.0],
            se=[5.0, 6.0],
            p_loo=[12.0, 5.0],
            d_elpd=[0.0, 30.0],
            se_d_elpd=[0.0, 7.0],
            pareto_k_bad=0,
            rank=[1, 2],
            preferred=[True, False],
            status="ok",
        )  # fmt: skip
    )
    con.execute("create table glm_model_comparison as select * from comparison")
    agreement = pd.DataFrame(  # noqa: F841
        dict(
            dimension="helpfulness",
            kind=["observed", "posterior", "counterfactual"],
            model="grader_model",
            mean=[0.4, 0.3, 0.5],
            q05=[0.4, 0.25, 0.45],
            q25=[0.4, 0.28, 0.48],
            q50=[0.4, 0.3, 0.5],
            q75=[0.4, 0.32, 0.52],
            q95=[0.4, 0.35, 0.55],
            n_units=50,
        )  # fmt: skip
    )
    con.execute("create table glm_agreement as select * from agreement")
    rng = np.random.default_rng(0)
    draws = pd.DataFrame(  # noqa: F841
        dict(
            dimension="helpfulness",
            kind=["posterior"] * 100 + ["counterfactual"] * 100,
            model="grader_model",
            draw=list(range(100)) * 2,
            alpha=np.r_[rng.normal(0.3, 0.03, 100), rng.normal(0.5, 0.03, 100)],
        )
    )
    con.execute("create table glm_agreement_draws as select * from draws")
    return Warehouse(con)


def test_glm_panels_are_registered():
    names = [fn.__name__ for fn in registered_panels()]
    for fn in (panel_glm_effects, panel_glm_comparison, panel_glm_agreement):
        assert fn.__name__ in names


def test_effects_panel_marks_own_model_cells_and_self_contrasts(warehouse):
    p = panel_glm_effects(warehouse)
    assert p.absent is None and p.figure is not None
    axes = [ax for ax in p.figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [
        "helpfulness: grader effects",
        "helpfulness: model effects",
        "helpfulness: grader x model interactions",
        "helpfulness: self contrasts",
    ]
    interaction = axes[2]
    red = [line for line in interaction.lines if line.get_marker() == "D"]
    assert len(red) == 2  # judge-a -> judge-a and judge-b -> judge-b
    assert len([line for line in axes[3].lines if line.get_marker() == "D"]) == 1
    # the attached table is the self contrasts
    assert list(p.frames[0]["term_type"]) == ["self"]


def test_comparison_panel_stars_the_preferred_model(warehouse):
    p = panel_glm_comparison(warehouse)
    assert p.figure is not None
    ax = p.figure.axes[0]
    stars = [line for line in ax.lines if line.get_marker() == "*"]
    assert len(stars) == 1 and stars[0].get_xdata()[0] == -100.0


def test_agreement_panel_draws_observed_and_two_violins_of_the_draws(warehouse):
    p = panel_glm_agreement(warehouse)
    assert p.figure is not None and "Violins" in p.caption
    ax = p.figure.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["observed", "posterior", "counterfactual"]
    bodies = [c for c in ax.collections if c.get_label() in ("posterior", "counterfactual")]
    assert len(bodies) == 2
    # each violin spans its draws: the posterior one sits around 0.3, the other 0.5
    spans = {b.get_label(): b.get_paths()[0].vertices[:, 1] for b in bodies}
    alphas = warehouse.df("select kind, min(alpha) lo, max(alpha) hi from glm_agreement_draws "
                          "group by kind").set_index("kind")  # fmt: skip
    for kind, ys in spans.items():
        assert ys.min() == pytest.approx(alphas.loc[kind, "lo"])
        assert ys.max() == pytest.approx(alphas.loc[kind, "hi"])


def test_agreement_panel_falls_back_to_quantile_boxes_without_the_draws(warehouse):
    warehouse.con.execute("drop table glm_agreement_draws")
    wh = Warehouse(warehouse.con)
    p = panel_glm_agreement(wh)
    assert p.figure is not None and "Boxes span" in p.caption
    ax = p.figure.axes[0]
    assert ax.get_legend_handles_labels()[1] == ["observed", "posterior", "counterfactual"]
    assert len(ax.patches) == 2  # the two boxes


def test_panels_say_why_when_the_marts_are_missing_or_empty():
    con = duckdb.connect()
    con.execute("create table glm_effects (model varchar, dimension varchar)")
    wh = Warehouse(con)
    assert panel_glm_effects(wh).absent == "table glm_effects has no rows"
    assert "not in this database" in (panel_glm_comparison(wh).absent or "")
    assert "not in this database" in (panel_glm_agreement(wh).absent or "")


def test_effects_figure_has_no_empty_row_for_terms_no_dimension_has():
    # one rated model (a JUDGE-BENCH import): no interaction and no self contrast, so
    # the figure has two rows of panels, not four with the lower half blank
    con = duckdb.connect()
    effects = effects_rows()
    effects = effects[effects.term_type.isin(["grader", "model"])]  # noqa: F841
    con.execute("create table glm_effects as select * from effects")
    p = panel_glm_effects(Warehouse(con))
    assert len(p.figure.axes) == 2
    assert [ax.get_title() for ax in p.figure.axes] == [
        "helpfulness: grader effects",
        "helpfulness: model effects",
    ]


def test_agreement_table_shows_why_an_alpha_is_null(warehouse):
    """newuser20: constant scores left the observed GLM alpha blank in the report's
    table; glm_agreement's notes now say why and the table carries them, only when a
    row has one (a demo-like warehouse keeps its columns)."""
    con = warehouse.con
    con.execute("alter table glm_agreement add column notes varchar")
    p = panel_glm_agreement(Warehouse(con))
    # no column, and not "Not in this data (no value in any row): notes" in the caption
    # (attach_table's word for an empty column)
    assert "notes" not in p.frames[0].columns and "notes" not in p.caption
    con.execute(
        "update glm_agreement set mean = null, notes = 'alpha undefined: one value' "
        "where kind = 'observed'"
    )
    table = panel_glm_agreement(Warehouse(con)).frames[0].set_index("kind")
    assert table.loc["observed", "notes"] == "alpha undefined: one value"
    assert table.loc[["posterior", "counterfactual"], "notes"].isna().all()
