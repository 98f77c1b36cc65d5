"""The GLMs' default set and their progress lines (issue 34 item 4): the
default is the models whose cost fits the build's budget, the others are
named in glm_fits with how to turn them on; a fit prints its model,
dimension, chain, draws and seconds on stderr."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from judge_bias.glm import progress as progress_module
from judge_bias.glm.models import MODELS
from judge_bias.glm.progress import Heartbeat
from judge_bias.glm.runner import AGREEMENT_MODELS, DEFAULT_MODELS, GlmConfig, Inputs, run_glms
from tests import sql_models


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_MODELS),
        ("", DEFAULT_MODELS),
        ("default", DEFAULT_MODELS),
        ("all", tuple(MODELS)),
        ("none", ()),
        ("items, grader_model", ("items", "grader_model")),
    ],
)
def test_glm_models_var(value, expected, monkeypatch):
    # the tests' environment sets JUDGE_BIAS_GLM_MODELS=none (tests/conftest.py)
    monkeypatch.delenv("JUDGE_BIAS_GLM_MODELS", raising=False)
    assert GlmConfig.from_vars({"glm_models": value}.get).models == expected
    assert GlmConfig().models == DEFAULT_MODELS


@pytest.mark.parametrize(("value", "expected"), [(None, ()), ("", ()), ("all", tuple(MODELS))])
def test_the_var_else_the_environment_variable(value, expected, monkeypatch):
    """The precedence (read when the GLM model runs, not when dbt parses): the var
    glm_models when given, else JUDGE_BIAS_GLM_MODELS, else the default set."""
    monkeypatch.setenv("JUDGE_BIAS_GLM_MODELS", "none")
    assert GlmConfig.from_vars({"glm_models": value}.get).models == expected


def test_default_set_leaves_out_items_and_says_how_to_turn_it_on():
    assert "items" not in DEFAULT_MODELS and set(DEFAULT_MODELS) < set(MODELS)
    inputs = Inputs(
        rating_counts=pd.DataFrame(
            {
                "dimension": ["a"],
                "grader": ["g"],
                "grader_type": ["llm"],
                "model": ["m"],
                "score": [1.0],
                "n": [1],
            }
        ),  # fmt: skip
        item_counts=pd.DataFrame(),
        pairwise_counts=pd.DataFrame(),
        scales=pd.DataFrame({"dimension": ["a"], "score": [1.0]}),
        families={},
        agreement_rows=pd.DataFrame(),
        excluded=pd.DataFrame(columns=["dimension", "reason", "n"]),
    )
    # the default models cannot fit one grader and are skipped; the rest are
    # not requested, each with the var that turns it on
    out = run_glms(inputs, GlmConfig())
    fits = out[out["output"] == "fits"].set_index("model")
    off = fits[fits["status"] == "not requested"]
    assert set(off.index) == set(MODELS) - set(DEFAULT_MODELS)
    items = off.loc["items", "notes"]
    assert "off by default for its cost" in items
    assert "glm_models: grader_model,pairwise,items" in items
    assert "JUDGE_BIAS_GLM_MODELS=all" in items
    assert fits.loc["grader_model", "status"] == "skipped"  # no pairwise data: no row


def test_progress_lines_name_the_chain_and_beat_while_it_runs(capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_EVERY", 0.05)
    with Heartbeat() as beat:
        value = beat.run("items on a, chain 1/2", "200 warm-up + 1000 draws",
                         lambda: time.sleep(0.3) or 7)  # fmt: skip
    assert value == 7
    lines = [x.split("  ", 1)[1] for x in capsys.readouterr().err.splitlines()]  # the time
    assert lines[0] == "glm: items on a, chain 1/2: started (200 warm-up + 1000 draws)"
    assert lines[-1].startswith("glm: items on a, chain 1/2: done (200 warm-up + 1000 draws) in ")
    beats = [x for x in lines if "still sampling" in x]
    assert 2 <= len(beats) <= 7, lines
    with Heartbeat(on=False) as beat:  # off: silent
        assert beat.run("x", "y", lambda: 1) == 1
    assert capsys.readouterr().err == ""


NOTHING_TO_FIT = """
import sys

import duckdb

from judge_bias.glm.dbt import results_from_relations

con = duckdb.connect()
tables = {
    "int_glm_families": "select 'g' as name, 'f' as family",
    "int_glm_rating_counts": "select 'a' as dimension, 'g' as grader, 'llm' as grader_type, "
    "'m' as model, 1.0 as score, 3 as n",
    "int_glm_item_counts": "select 1 as n where false",
    "int_glm_pairwise_counts": "select 1 as n where false",
    "int_glm_scale_points": "select 'a' as dimension, 1.0 as score",
    "int_glm_ratings": "select 1 as n where false",
    "int_glm_excluded": "select 'a' as dimension, 'no score' as reason, 2 as n",
}
out = results_from_relations(lambda name: con.sql(tables[name]), {"glm_models": "none"}.get)
assert set(out["status"]) == {"not requested"}, out
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"jax", "numpyro", "arviz", "krippendorff"})
print(len(out), heavy)
"""


def test_nothing_to_fit_imports_no_sampler_library():
    """glm_models none (the tests' setting, every build of the suite): int_glm_results
    writes its "not requested" rows without importing JAX, numpyro, ArviZ or
    krippendorff (about 3 CPU s of a small build; glm.lazy)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", NOTHING_TO_FIT], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [str(len(MODELS)), "[]"], done.stdout


def _macro_needs(
    models, glm_models=None, env="", incremental=False, glm_inputs="", holds_loads=False
) -> bool:
    """macros/glm.sql's glm_input_needed(models), rendered as dbt would with these
    vars, JUDGE_BIAS_GLM_MODELS and incremental_on()."""
    import jinja2

    from judge_bias.warehouse.build import PROJECT_DIR

    text = (Path(PROJECT_DIR) / "macros" / "glm.sql").read_text(encoding="utf-8")
    values = {"glm_models": glm_models, "glm_inputs": glm_inputs}
    returned: list[bool] = []
    template = jinja2.Environment().from_string(text + "{{ glm_input_needed(models) }}")
    template.render(
        models=models,
        execute=True,
        var=lambda name, default=None: default if values.get(name) is None else values[name],
        env_var=lambda name, default=None: env or default,
        incremental_on=lambda: incremental,
        this=SimpleNamespace(database="w", schema="main"),
        adapter=SimpleNamespace(
            get_relation=lambda **key: "int_load_scope" if holds_loads else None
        ),
        **{"return": lambda value: returned.append(value) or ""},
    )
    (value,) = returned
    return value


def _rendered_needs(model: str) -> list:
    """The models a GLM input table's SQL passes to glm_input_needed."""
    import jinja2

    from judge_bias.warehouse.build import PROJECT_DIR

    (path,) = Path(PROJECT_DIR, "models").rglob(f"{model}.sql")
    asked: list = []
    macros = {**sql_models.MACROS["duckdb"], "glm_input_needed": lambda m: asked.append(m)}
    jinja2.Environment().from_string(path.read_text(encoding="utf-8")).render(
        ref=lambda name: name, **macros
    )
    return asked


@pytest.mark.parametrize("glm_models", [None, "", "default", "all", "none", "items",
                                        " grader_type ", "pairwise,items", "pairwise",
                                        "None", " ", " None "])  # fmt: skip
@pytest.mark.parametrize("env", ["", "none", "all", "items", "hierarchical,pairwise", " ",
                                 " items "])  # fmt: skip
def test_glm_inputs_are_built_for_the_models_the_runner_fits(glm_models, env, monkeypatch):
    """int_glm_item_counts has rows when (and only when) the runner fits items (the
    agreement's models, AGREEMENT_MODELS, as a second list the macro resolves): the
    macro resolves glm_models and JUDGE_BIAS_GLM_MODELS as GlmConfig.from_vars, with
    its default DEFAULT_MODELS. The table names its models (fails when the macro's
    default set, a name's resolution or a model's list drifts from the runner's);
    glm_inputs: all and a plain build of a warehouse that holds loads build it
    whatever is fitted, the incremental path as a full build. The
    agreement's rows have no table of their own since issue 34 (int_glm_results
    reads the view int_glm_ratings)."""
    monkeypatch.setenv("JUDGE_BIAS_GLM_MODELS", env)
    fitted = GlmConfig.from_vars({"glm_models": glm_models}.get).models
    assert _rendered_needs("int_glm_item_counts") == [["items"]]
    for readers in (["items"], list(AGREEMENT_MODELS)):
        expected = bool(set(readers) & set(fitted))
        assert _macro_needs(readers, glm_models, env) is expected, (readers, fitted)
        # the incremental path as a full build (session 23: whether the cells are
        # kept is int_load_scope's fact_vars); a plain build of a warehouse that
        # holds loads keeps them whole for its next load
        assert _macro_needs(readers, glm_models, env, incremental=True) is expected
        assert _macro_needs(readers, glm_models, env, glm_inputs="all") is True
        assert _macro_needs(readers, glm_models, env, holds_loads=True) is True
        both = _macro_needs(readers, glm_models, env, incremental=True, holds_loads=True)
        assert both is expected


def _empty_input_relations(con, empty: str):
    tables = {
        "int_glm_families": "select 'g' as name, 'f' as family",
        "int_glm_rating_counts": "select 'a' as dimension, 'g' as grader, "
        "'llm' as grader_type, 'm' as model, 1.0 as score, 3 as n",
        "int_glm_item_counts": "select 'a' as dimension, 'g' as grader, 'llm' as grader_type, "
        "'m' as model, 'p' as item, 1.0 as score, 3 as n",
        "int_glm_pairwise_counts": "select 1 as n where false",
        "int_glm_scale_points": "select 'a' as dimension, 1.0 as score",
        "int_glm_ratings": "select 'a' as dimension, 'g' as grader, 'llm' as grader_type, "
        "'m' as model, 'p' as prompt_id, '1' as run_id, 1.0 as score, true as on_scale",
        "int_glm_excluded": "select 'a' as dimension, 'no score' as reason, 2 as n",
    }
    tables[empty] = f"select * from ({tables[empty]}) where false"
    return lambda name: con.sql(tables[name])


@pytest.mark.parametrize(("empty", "models"), [("int_glm_item_counts", "items")])
def test_a_model_whose_input_was_built_empty_is_refused(empty, models):
    """A fit asked for after its input table was built without it (e.g. dbt build
    --select int_glm_results with JUDGE_BIAS_GLM_MODELS=items, on a warehouse built
    with the default set) fails, naming the table and how to build it, before any
    fit: not an items fit on no rows."""
    import duckdb

    from judge_bias.errors import SettingError
    from judge_bias.glm.dbt import results_from_relations

    ref = _empty_input_relations(duckdb.connect(), empty)
    with pytest.raises(SettingError, match=f"{empty} has no rows while .* counts 3 ratings") as e:
        results_from_relations(ref, {"glm_models": models}.get)
    assert "--select int_glm_item_counts+ with them" in str(e.value)


def test_stale_item_cells_are_refused():
    """Item cells that do not total the rating counts' ratings (stale cells a plain
    dbt run left on an incremental warehouse that a later load did not keep: review
    of session 23) fail the read, naming the table and --full-refresh; cells that
    total them are read (fails without the check in read_item_counts: the stale
    cells would be fitted)."""
    import duckdb

    from judge_bias.errors import SettingError
    from judge_bias.glm.dbt import read_item_counts
    from judge_bias.glm.runner import GlmConfig

    ref = _empty_input_relations(duckdb.connect(), "int_glm_pairwise_counts")
    config = GlmConfig.from_vars({"glm_models": "items"}.get)
    counts, skipped = read_item_counts(ref("int_glm_item_counts"), config, 3)
    assert list(counts["n"]) == [3] and skipped == {}
    with pytest.raises(SettingError, match="int_glm_item_counts counts 3 ratings while "
                       "int_glm_rating_counts counts 4") as e:  # fmt: skip
        read_item_counts(ref("int_glm_item_counts"), config, 4)
    assert "--full-refresh" in str(e.value)


@pytest.mark.dbt
def test_the_parse_depends_on_no_environment_variable(tmp_path, monkeypatch):
    """glm_input_needed reads JUDGE_BIAS_GLM_MODELS only when a model compiles to
    run: dbt's saved parse records no environment variable, so a build with
    another value reuses it (fails when the macro reads the environment at
    parse time: the parse then lists it under env_vars)."""
    import msgpack

    from judge_bias.warehouse import build as build_mod

    monkeypatch.setenv("JUDGE_BIAS_GLM_MODELS", "items")
    monkeypatch.setattr(build_mod, "PARSE_CACHE", tmp_path / "parse_cache")
    db = tmp_path / "w.duckdb"
    build_mod.run_dbt(["parse"], db, build_mod.PROJECT_DIR / "data" / "demo", capture=True)
    saved = (build_mod.target_dir(db) / "partial_parse.msgpack").read_bytes()
    assert msgpack.unpackb(saved, strict_map_key=False)["env_vars"] == {}
