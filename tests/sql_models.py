"""Run one of the project's SQL models on DuckDB outside dbt: its Jinja rendered with
``ref`` naming a registered table (models that call no other macro but
``not_materialized`` and ``row_key_hash``, rendered per engine, and the incremental
path's macros, rendered as in a default build). Tests use it to compare a SQL
aggregate with the pandas computation of the same figures."""

from __future__ import annotations

from pathlib import Path

import duckdb
import jinja2
import pandas as pd

from judge_bias.warehouse.build import PROJECT_DIR

# a default (not incremental) build's dbt calls: config and macros/incremental.sql's
# macros render nothing, is_incremental() is false
DEFAULT_BUILD = {
    "config": lambda *args, **kwargs: "",
    "incremental_by_prompt": lambda *args, **kwargs: {},
    "load_prompt_dependencies": lambda: "",
    "load_prompt_filter": lambda *args, **kwargs: "",
    "is_incremental": lambda: False,
    # macros/glm.sql: the GLM input tables rendered with their rows
    "glm_input_needed": lambda models: True,
}
# macros/engine.sql's not_materialized, per engine
MACROS = {
    "duckdb": {
        "not_materialized": lambda: "not materialized",
        "row_key_hash": lambda columns: f"hash({', '.join(columns)})",
        **DEFAULT_BUILD,
    },
    "spark": {
        "not_materialized": lambda: "",
        "row_key_hash": lambda columns: f"xxhash64({', '.join(columns)})",
        **DEFAULT_BUILD,
    },
}


def render(model: str, tables: dict[str, str] | None = None, engine: str = "duckdb") -> str:
    """The SQL of ``models/**/<model>.sql`` with ``ref('x')`` rendered as ``x`` (or
    ``tables[x]``), for ``engine`` (duckdb or spark)."""
    (path,) = Path(PROJECT_DIR, "models").rglob(f"{model}.sql")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    template = env.from_string(path.read_text(encoding="utf-8"))
    return template.render(ref=lambda name: (tables or {}).get(name, name), **MACROS[engine])


def run_model(con: duckdb.DuckDBPyConnection, model: str, **inputs: pd.DataFrame):
    """The relation of SQL model ``model`` on ``con`` with each keyword's DataFrame
    registered under its name (the model's refs)."""
    for name, frame in inputs.items():
        con.register(name, frame)
    return con.sql(render(model))


def model_relation(con: duckdb.DuckDBPyConnection, model: str, tables: dict[str, pd.DataFrame]):
    """The relation of ``model``: a frame of ``tables`` when it is one, else its SQL
    with every model it refs created first (recursively) on ``con``."""
    if model in tables:
        return con.from_df(tables[model])

    def ref(name: str) -> str:
        exists = con.sql(
            f"select count(*) from information_schema.tables where table_name = '{name}'"
        ).fetchall()[0][0]
        if not exists:
            con.register(f"_{name}_relation", model_relation(con, name, tables))
            con.execute(f"create table {name} as select * from _{name}_relation")
        return name

    (path,) = Path(PROJECT_DIR, "models").rglob(f"{model}.sql")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return con.sql(
        env.from_string(path.read_text(encoding="utf-8")).render(ref=ref, **MACROS["duckdb"])
    )
