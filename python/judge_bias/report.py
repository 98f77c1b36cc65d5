"""A plain-text summary of a built warehouse: what went in, what came out.

The plotted HTML report of the bias estimates builds on this (report issue).
"""

from __future__ import annotations

from pathlib import Path

import duckdb


def _table(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    widths = [max(len(str(x)) for x in [c, *(r[i] for r in rows)]) for i, c in enumerate(cols)]

    def line(values: tuple[object, ...] | list[str]) -> str:
        cells = (str(v).ljust(w) for v, w in zip(values, widths, strict=True))
        return "| " + " | ".join(cells) + " |"

    out = [line(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def text_report(db_path: str | Path) -> str:
    """Markdown text: input row counts, rejections by reason, fact-table shape."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        parts = [
            f"# judge-bias warehouse: {db_path}",
            "## Inputs (rows read = accepted + rejected)",
            _table(con, "select * from input_row_counts order by source"),
            "## Rejected rows by reason",
            _table(
                con,
                "select source, reason_code, count(*) as n, min(reason) as example "
                "from rejected_rows group by all order by source, n desc",
            ),
            "## fct_judge_ratings",
            _table(
                con,
                "select count(*) as ratings, count(distinct judge) as judges, "
                "count(distinct model) as models, count(distinct prompt_id) as prompts, "
                "count(distinct dimension) as dimensions, "
                "count(*) filter (where is_self) as self_ratings, "
                "count(*) filter (where is_same_family) as same_family_ratings, "
                "count(human_score_norm) as with_human_reference "
                "from fct_judge_ratings",
            ),
            "## Mean normalised scores, all dimensions",
            _table(
                con,
                "select judge, model, round(mean_judge_score_norm, 3) as judge_mean, "
                "round(mean_human_score_norm, 3) as human_mean, n from agg_judge_model_scores "
                "where dimension = 'all' order by judge, model",
            ),
        ]
    finally:
        con.close()
    return "\n\n".join(parts) + "\n"
