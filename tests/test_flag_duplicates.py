"""macros/rejections.sql's flag_duplicates: the rows whose key repeats an earlier
accepted row's are rejected as duplicate_key, whatever the key hash does (it only
picks the candidates: a collision must not flag nor hide a duplicate)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import jinja2
import pandas as pd
import pytest

from judge_bias.warehouse.build import PROJECT_DIR

KEY = ["judge", "prompt_id"]
ROWS = [  # row_number, judge, prompt_id, reject_code
    (1, "a", "p1", None),
    (2, "a", "p2", None),
    (3, "a", "p1", None),  # repeats row 1
    (4, "b", "p1", None),
    (5, "a", "p1", "missing_value"),  # rejected already: kept as it is
    (6, None, "p3", None),
    (7, None, "p3", None),  # a null key part repeats as well (is not distinct from)
    (8, "b", "p2", "unknown_model"),
    (9, "b", "p2", None),  # first accepted row of its key
    (10, "b", "p2", None),  # repeats row 9
    (11, "a", "p1", None),  # repeats row 1 again
]
# the macro's engine calls, as dbt renders them on DuckDB; row_key_hash as given
HASHES = {
    "duckdb hash": lambda columns: f"hash({', '.join(columns)})",
    "every key collides": lambda columns: "0",
    "keys collide by judge": lambda columns: f"hash({columns[0]})",
}


def _flagged(row_key_hash) -> list[tuple]:
    macros = Path(PROJECT_DIR, "macros", "rejections.sql").read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    module = env.from_string(macros).make_module(
        {
            "row_key_hash": row_key_hash,
            "star_except": lambda prefix, cols: f"{prefix}.* exclude ({', '.join(cols)})",
        }
    )
    sql = module.flag_duplicates("checked", KEY, "judge and prompt_id")
    con = duckdb.connect()
    frame = pd.DataFrame(ROWS, columns=["row_number", *KEY, "reject_code"])
    con.register("_rows", frame.assign(reject_reason=frame["reject_code"]))
    con.execute("create table checked as select * from _rows")
    return con.sql(f"{sql} order by row_number").fetchall()


def _expected() -> list[tuple]:
    first: dict[tuple, int] = {}
    out = []
    for number, judge, prompt, code in ROWS:
        reason = code
        if code is None:
            key = (judge, prompt)
            if key in first:
                code = "duplicate_key"
                reason = f"duplicate key: same judge and prompt_id as row {first[key]}"
            else:
                first[key] = number
        out.append((number, judge, prompt, code, reason))
    return out


@pytest.mark.parametrize("name", list(HASHES))
def test_duplicates_flagged_whatever_the_hash(name: str) -> None:
    assert _flagged(HASHES[name]) == _expected()
