"""The GLMs' default set and their progress lines (issue 34 item 4): the
default is the models whose cost fits the build's budget, the others are
named in glm_fits with how to turn them on; a fit prints its model,
dimension, chain, draws and seconds on stderr."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from judge_bias.glm import progress as progress_module
from judge_bias.glm.models import MODELS
from judge_bias.glm.progress import Heartbeat
from judge_bias.glm.runner import DEFAULT_MODELS, GlmConfig, Inputs, run_glms


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
    "int_glm_agreement_ratings": "select 1 as n where false",
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
