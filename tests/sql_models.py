"""Run one of the project's SQL models on DuckDB outside dbt: its Jinja rendered with
``ref`` naming a registered table (models that call no other macro but
``not_materialized`` and ``row_key_hash``, rendered per engine, the incremental
path's macros, rendered as in a default build, and the project macros of
MACRO_FILES, rendered from their files). Tests use it to compare a SQL aggregate
with the pandas computation of the same figures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import jinja2
import pandas as pd
import yaml

from judge_bias.warehouse.build import PROJECT_DIR

_NO_DEFAULT = object()


def project_var(name: str, default: Any = _NO_DEFAULT) -> Any:
    """dbt's var(): the value dbt_project.yml's vars give ``name`` (a default build's);
    a var it does not define, without a default, fails as dbt's compile does."""
    project = yaml.safe_load(Path(PROJECT_DIR, "dbt_project.yml").read_text(encoding="utf-8"))
    found = project.get("vars", {}).get(name, default)
    if found is _NO_DEFAULT:
        raise KeyError(f"var {name!r} is not defined in dbt_project.yml and has no default")
    return found


def _environment() -> jinja2.Environment:
    """Jinja as dbt runs it: undefined names fail, ``{% do %}`` statements run."""
    return jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])


# a default (not incremental) build's dbt calls: config and macros/incremental.sql's
# macros render nothing, is_incremental() is false, var() reads dbt_project.yml
DEFAULT_BUILD = {
    "var": project_var,
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
        "string_type": lambda: "varchar",
        # macros/engine.sql's default__ordered_string_agg (panel_leaderboard)
        "ordered_string_agg": lambda expression, separator, order_by, where=None: (
            f"string_agg({expression}, '{separator}' order by {order_by})"
            + (f" filter (where {where})" if where else "")
        ),
        **DEFAULT_BUILD,
    },
    "spark": {
        "not_materialized": lambda: "",
        "row_key_hash": lambda columns: f"xxhash64({', '.join(columns)})",
        "string_type": lambda: "string",
        **DEFAULT_BUILD,
    },
}


# project macros the models call, rendered from macros/<file>.sql as they are (not
# stubbed): each calls the other macros it uses from the engine's MACROS
MACRO_FILES = {"run_means": "run_means", "count_runs": "run_means"}


def macros(engine: str = "duckdb", **overrides: Callable[..., Any]) -> dict[str, Any]:
    """The macros a model is rendered with on ``engine``: MACROS[engine] with
    ``overrides``, and MACRO_FILES' macros calling those (read when called, so a
    test's monkeypatched stub reaches them)."""
    stubs = {**MACROS[engine], **overrides}
    env = _environment()
    files = {}
    for name, file in MACRO_FILES.items():
        text = Path(PROJECT_DIR, "macros", f"{file}.sql").read_text(encoding="utf-8")
        files[name] = getattr(env.from_string(text).make_module(stubs), name)
    return {**stubs, **files}


def render(
    model: str,
    tables: dict[str, str] | None = None,
    engine: str = "duckdb",
    **overrides: Callable[..., Any],
) -> str:
    """The SQL of ``models/**/<model>.sql`` with ``ref('x')`` rendered as ``x`` (or
    ``tables[x]``), for ``engine`` (duckdb or spark); ``overrides``: macros rendered
    otherwise than in MACROS (e.g. the incremental path's)."""
    (path,) = Path(PROJECT_DIR, "models").rglob(f"{model}.sql")
    env = _environment()
    template = env.from_string(path.read_text(encoding="utf-8"))
    return template.render(
        ref=lambda name: (tables or {}).get(name, name), **macros(engine, **overrides)
    )


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
    env = _environment()
    return con.sql(
        env.from_string(path.read_text(encoding="utf-8")).render(ref=ref, **macros("duckdb"))
    )
