"""The Spark route (docs/spark.md) against the DuckDB route, table by table.

One Spark session (a subprocess: python -m judge_bias.warehouse.spark) loads and
builds every model the Spark route can build (computed from the dbt manifest:
each SQL model and seed with no Python model upstream) on a copy of the demo
with malformed records, and exports every table as Parquet; the DuckDB route
builds the same models on the same folder. (The demo itself is built both ways,
the whole warehouse, by tests/test_spark_route.py: that build's Spark stage is
this session, the copy its second folder, spark_route_and_broken_copy.) Every
table must be equal: same columns in the same order, same rows (text and
booleans exact, numbers to 1e-9), including the loaders' record numbers,
parse errors and raw lines. Skipped, saying why, where Java or pyspark is
missing (`make spark` installs pyspark; `make test-full` runs it).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from judge_bias.inputs.contract import KINDS
from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.build import PROJECT_DIR, BuildResult, run_dbt, spark_work_dir
from judge_bias.warehouse.spark import (
    exported_files,
    parquet_sql,
    session_config,
    spark_buildable,
)
from tests.conftest import DEMO_DIR

needs_spark = pytest.mark.skipif(
    shutil.which("java") is None or importlib.util.find_spec("pyspark") is None,
    reason="the Spark route needs java and pyspark (make spark)",
)
LOADERS = [f"base_inputs__{kind}" for kind in KINDS]

# Records Spark's reader and the DuckDB route must both keep, numbered alike:
# too many fields, too few, a quoted line break and a doubled quote in a good
# record, an empty line (not a record), a record after the bad ones.
BAD_RATINGS = (
    "aurora/large-2025-01,news_0000,aurora/large-2025-01,correctness,Correct,,positive,1,extra\n"
    "aurora/large-2025-01,news_0001\n"
    "\n"
    'aurora/large-2025-01,news_0002,aurora/large-2025-01,correctness,"Cor\nrect",'
    '"say ""x""",positive,7\n'
)
BAD_MODELS = 'odd,"a, b",fam\nshort\n'
BAD_SCALES = "correctness,Maybe,0.5,yes\ncorrectness,Unsure,,NA\nhelpfulness,Odd,inf,\n"
# MT-Bench verdicts ([[B]]), a bold label, an unknown judge, a duplicate key
BAD_PAIRWISE = (
    "aurora/large-2025-01,news_0000,cirrus-max,borealis-lite-v1,[[B]],first,,,,9\n"
    "aurora/large-2025-01,news_0001,cirrus-max,borealis-lite-v1,**Tie.**,,0.4,,,9\n"
    "nobody,news_0001,cirrus-max,borealis-lite-v1,first,,,,,9\n"
    "aurora/large-2025-01,news_0001,cirrus-max,borealis-lite-v1,second,,,,,9\n"
)
# a text with letters of other scripts and symbols (token count), an unknown model
BAD_COMPLETIONS = 'news_0000,mystery,x\nnews_0001,cirrus-max,"Ça coûte 3€ — 東京, ok?"\n'
BAD_ANNOTATIONS = "news_0000,aurora/large-2025-01,correctness,ann_9,**Correct.**,annotator\n"


NA_SELF_FAITHFULNESS = re.compile(
    r"^(aurora/large-2025-01,[^,]*,aurora/large-2025-01,faithfulness,)([^,\"]*)(,,positive,)",
    re.MULTILINE,
)


def _broken_copy(root: Path) -> Path:
    data = root / "broken"
    shutil.copytree(DEMO_DIR, data)
    for name, extra in [
        ("judge_ratings.csv", BAD_RATINGS),
        ("models.csv", BAD_MODELS),
        ("rating_scales.csv", BAD_SCALES),
        ("pairwise_judgments.csv", BAD_PAIRWISE),
        ("completions.csv", BAD_COMPLETIONS),
        ("human_annotations.csv", BAD_ANNOTATIONS),
    ]:
        with (data / name).open("a", encoding="utf-8", newline="") as fh:
            fh.write(extra)
    # every positive faithfulness rating aurora-large gave itself is NA: PPI unit
    # groups with no estimable unit (two int_ppi_stratum_moments rows with
    # n_labelled + n_unlabelled = 0), which both routes must build alike. (The
    # division by that sum in int_ppi_unit_pair_sums is guarded by nullif; this build
    # also passed without the guard: Spark's plan did not evaluate it on those rows.)
    ratings = data / "judge_ratings.csv"
    text, n = NA_SELF_FAITHFULNESS.subn(r"\1NA: nothing to verify\3", ratings.read_text("utf-8"))
    assert n > 0, "the demo has no positive faithfulness self-ratings of aurora-large"
    ratings.write_text(text, encoding="utf-8", newline="")
    return data


class _SparkStageWithBrokenCopy:
    """build.py's ``subprocess`` for the duration of spark_route_and_broken_copy: the
    Spark stage's command (python -m judge_bias.warehouse.spark --data DEMO ...) runs
    as tests/spark_stage.py with the broken copy as a second --data folder; every
    other command, and every other name of the module, is subprocess's own."""

    def __init__(self, broken: Path) -> None:
        self.broken = broken
        self.stages = 0

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    def run(self, cmd, *args, **kwargs):
        if list(cmd[1:3]) == ["-m", "judge_bias.warehouse.spark"]:
            self.stages += 1
            cmd = [cmd[0], "-m", "tests.spark_stage", *cmd[3:], "--data", str(self.broken)]
        return subprocess.run(cmd, *args, **kwargs)


def spark_route_and_broken_copy(tmp: pytest.TempPathFactory) -> tuple[BuildResult, Path, Path]:
    """`build(DEMO_DIR, engine="spark")` (tests/test_spark_route.py) whose Spark stage,
    one Spark session, also loads and builds the broken copy, as its second folder
    (schema judge_bias_2, export/2, views too): one Spark JVM for both files. The demo
    is the first folder, built and exported before the copy is read, and the only
    one the build attaches. Returns (the build, the broken copy, its export folder,
    which lists the tables the Spark route built in tables.txt)."""
    root = tmp.mktemp("spark")
    broken = _broken_copy(root).resolve()
    stage = _SparkStageWithBrokenCopy(broken)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_mod, "subprocess", stage)
        result = build_mod.build(DEMO_DIR, root / "w.duckdb", engine="spark")
    export = spark_work_dir(result.db_path) / "export" / "2"
    assert stage.stages == 1 and (export / "tables.txt").exists(), (
        "the build's Spark stage did not run as python -m judge_bias.warehouse.spark: "
        "update _SparkStageWithBrokenCopy"
    )
    return result, broken, export


@pytest.fixture(scope="module")
def both_routes(
    spark_route: tuple[BuildResult, Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """(DuckDB warehouse, Spark export folder) for the broken copy; the export
    folder lists the tables the Spark route built in tables.txt."""
    _, broken, export = spark_route
    select = ["--select", *_built(export)]  # cautious: dbt_project.yml
    db = tmp_path_factory.mktemp("spark_duck") / "duck.duckdb"
    run_dbt(["build", *select], db, broken, quiet=True, capture=True)
    return db, export


def _built(export: Path) -> list[str]:
    """The tables the Spark route built and exported into this folder."""
    return (export / "tables.txt").read_text().split()


def _parquet(export: Path, table: str) -> str:
    """DuckDB's read_parquet over the files the Spark route handed over for a table."""
    return parquet_sql(exported_files(export)[table])


def _frames(db: Path, export: Path, table: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        duck = con.execute(f"select * from main.{table}").df()
    finally:
        con.close()
    spark = duckdb.sql(f"select * from {_parquet(export, table)}").df()
    return duck, spark


def _sorted(frame: pd.DataFrame, floats: list[str]) -> pd.DataFrame:
    first = ("source", "_row_number", "row_number", "alias_key", "dimension_key")
    keys = [c for c in first if c in frame]
    keys = keys[:2] if keys[:1] == ["source"] else keys[:1]
    if keys:
        return frame.sort_values(keys, kind="stable", na_position="last").reset_index(drop=True)
    # no key column: every column, the doubles last and rounded (the other columns
    # need not be a key: int_bias_ordinal_counts is keyed by scores), so that
    # last-bit differences between the engines cannot reorder rows. ``floats``: the
    # columns that are doubles on either engine (DuckDB's integer sum is a HUGEINT,
    # a double in pandas, where Spark's is a bigint), the same for both frames
    order = frame.drop(columns=floats).assign(**{f"_{c}": frame[c].round(9) for c in floats})
    index = order.sort_values(list(order.columns), kind="stable", na_position="last").index
    return frame.loc[index].reset_index(drop=True)


def assert_same_table(duck: pd.DataFrame, spark: pd.DataFrame, table: str) -> None:
    assert list(spark.columns) == list(duck.columns), table
    assert len(spark) == len(duck), table
    floats = [
        c
        for c in duck.columns
        if pd.api.types.is_float_dtype(duck[c]) or pd.api.types.is_float_dtype(spark[c])
    ]
    duck, spark = _sorted(duck, floats), _sorted(spark, floats)
    for col in duck.columns:
        d, s = duck[col], spark[col]
        numeric = pd.api.types.is_float_dtype(d) or pd.api.types.is_float_dtype(s)
        if numeric:
            np.testing.assert_allclose(
                s.astype(float), d.astype(float), rtol=0, atol=1e-9, err_msg=f"{table}.{col}"
            )
        else:
            dv = [None if pd.isna(v) else v for v in d.astype(object)]
            sv = [None if pd.isna(v) else v for v in s.astype(object)]
            assert sv == dv, f"{table}.{col}"


@needs_spark
@pytest.mark.spark
def test_spark_route_equals_duckdb_route(both_routes) -> None:
    """Every table the Spark route built equals the DuckDB route's; the message
    names each table that differs and how."""
    db, export = both_routes
    differ = []
    for table in _built(export):
        try:
            assert_same_table(*_frames(db, export, table), table)
        except AssertionError as error:
            differ.append(f"{table}: {str(error)[:600]}")
    assert not differ, "\n".join(differ)


# What the manifest rule must give on this project: the row-level SQL through the
# fit inputs (fact table, sufficient statistics, count tables), and nothing that
# reads a Python model (the fits, their marts, the scorecard).
MUST_BUILD = {
    "model_aliases", "rejected_rows", "input_row_counts", "fct_judge_ratings",
    "agg_judge_model_scores", "int_human_scores_aggregated", "int_bias_ratings",
    "int_bias_cell_stats", "int_bias_prompt_stats", "int_bias_model_means",
    "int_bias_ordinal_counts", "int_bias_reference_stats", "int_agreement_prompt_sums",
    "int_self_vs_peer_items", "int_ppi_stratum_moments", "int_glm_ratings",
    "int_glm_rating_counts", "int_glm_item_counts", "int_glm_pairwise_counts",
    "int_glm_scale_points", "int_glm_families", "int_glm_excluded",
}  # fmt: skip
MUST_NOT_BUILD = {
    "int_bias_results", "int_glm_results", "bias_estimates", "bias_fits", "debiased_scores",
    "glm_fits", "pairwise_bias", "agreement_annotators", "int_judge_scorecard_metrics",
    "judge_scorecard", "panel_leaderboard", "ppi_model_scores",
}  # fmt: skip


@needs_spark
@pytest.mark.spark
def test_route_builds_every_sql_model_before_the_fits(both_routes) -> None:
    """The set computed from the manifest holds the SQL models up to the fit inputs
    and no model downstream of a Python model."""
    built = [_built(both_routes[1])]
    assert built[0][: len(LOADERS)] == LOADERS
    assert set(built[0]) >= MUST_BUILD, MUST_BUILD - set(built[0])
    assert not MUST_NOT_BUILD & set(built[0])
    assert len(built[0]) == len(set(built[0]))


def _node(kind: str, language: str | None, *parents: str) -> dict:
    node = {"resource_type": kind, "depends_on": {"nodes": list(parents)}}
    return node if language is None else {**node, "language": language}


def test_spark_buildable_follows_the_ancestors() -> None:
    """The manifest rule on a made-up DAG: SQL models and seeds whose ancestors are all
    SQL models, seeds or sources; not a Python model, nor anything below one at any
    depth, nor a model whose parent is absent (disabled), nor tests."""
    nodes = {
        "seed.p.aliases": {"resource_type": "seed", "depends_on": {"macros": []}},
        "model.p.stg": _node("model", "sql", "source.p.raw.loader"),
        "model.p.checked": _node("model", "sql", "model.p.stg", "seed.p.aliases"),
        "model.p.fit": _node("model", "python", "model.p.checked"),
        "model.p.mart": _node("model", "sql", "model.p.fit"),
        "model.p.below_mart": _node("model", "sql", "model.p.checked", "model.p.mart"),
        "model.p.on_disabled": _node("model", "sql", "model.p.loader_disabled"),
        "model.p.on_missing_source": _node("model", "sql", "source.p.raw.gone"),
        "test.p.not_null_checked": _node("test", "sql", "model.p.checked"),
    }
    manifest = {"nodes": nodes, "sources": {"source.p.raw.loader": {}}}
    for name, node in nodes.items():
        node["name"] = name.split(".")[-1]
    assert spark_buildable(manifest) == ("aliases", "checked", "stg")


@needs_spark
@pytest.mark.spark
def test_broken_records_are_kept_with_their_numbers(both_routes) -> None:
    """The malformed records are rows with a parse error on Spark too (not only equal
    to DuckDB's: present), and the records after them keep counting."""
    _, export = both_routes
    ratings = duckdb.sql(
        f"select _row_number, _parse_error is not null as bad, label, raw_output "
        f"from {_parquet(export, 'base_inputs__judge_ratings')} "
        "order by _row_number desc limit 3"
    ).fetchall()
    n = ratings[0][0]
    assert [r[:2] for r in ratings] == [(n, False), (n - 1, True), (n - 2, True)]
    assert ratings[0][2:] == ("Cor\nrect", 'say "x"')


def test_session_config_is_the_profile_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """The orchestrator's Spark settings are the spark target's in profiles.yml."""
    profile = yaml.safe_load((PROJECT_DIR / "profiles.yml").read_text())
    params = profile["judge_bias"]["outputs"]["spark"]["server_side_parameters"]
    defaults = {
        "{{ env_var('JUDGE_BIAS_SPARK_DIR', 'target/spark') }}": "/x",
        "{{ env_var('JUDGE_BIAS_SPARK_MASTER', 'local[*]') }}": "local[*]",
        "{{ env_var('JUDGE_BIAS_SPARK_MEMORY', '2g') }}": "2g",
    }
    rendered = {}
    for key, value in params.items():
        for template, default in defaults.items():
            value = value.replace(template, default)
        rendered[key] = value
    for name in ("JUDGE_BIAS_SPARK_MASTER", "JUDGE_BIAS_SPARK_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    assert rendered == session_config(Path("/x"))


@needs_spark
@pytest.mark.spark
def test_broken_copy_exercises_the_checks(both_routes) -> None:
    """The equality above means something: on Spark the broken copy's rejected_rows
    hold each kind of fault planted, and the MT-Bench verdicts are read."""
    _, export = both_routes
    codes = {
        (source, code)
        for source, code in duckdb.sql(
            f"select source, reason_code from {_parquet(export, 'rejected_rows')}"
        ).fetchall()
    }
    assert {
        ("judge_ratings", "malformed_row"),
        ("models", "malformed_row"),
        ("rating_scales", "invalid_value"),
        ("pairwise_judgments", "unknown_model"),
        ("completions", "unknown_model"),
    } <= codes, codes
    verdicts = duckdb.sql(
        f"select verdict from {_parquet(export, 'stg_inputs__pairwise_judgments')} "
        "where run_id = '9' order by row_number"
    ).fetchall()
    assert [v[0] for v in verdicts] == ["second", "tie", "first", "second"]
