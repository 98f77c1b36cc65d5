"""int_ppi_unit_pair_sums in dense linear algebra: the sums over the pairs of PPI
units of one prompt of the products of their centred scores.

Per judge (or the panel; a pair group) the units of one prompt are paired: unit
groups a < b (int_ppi_unit_groups' rows: int_ppi_stratum_moments' rows of one model,
numbered in key order, each split by label status into two codes) and per pair of
codes the sum over prompts of unit a's centred score times unit b's. With X the
prompts x codes matrix of one centred score (0 where the prompt has no unit of that
code) and Y another's, that sum is
(X'Y)[a, b]: a unit group holds at most one unit per prompt (int_ppi_units is
unique on judge, model, prompt, dimension), so the products of X'Y are exactly the
pairs the SQL self-join made (~64M at 10M ratings), summed by BLAS instead of a hash
join. The centred scores are the SQL's (the same subtraction of the same means), so
only the order of the additions differs (relative differences grow where a cell's
sum nearly cancels: up to 8.4e-10 of the SQL's table at 10M; against DuckDB's fsum
both are as accurate, review17d); the pair counts are the product of the presence
matrices (exact integers).

The unit groups, their keys and centring means are int_ppi_unit_groups' (the one SQL
model both engines read: int_ppi_unit_pair_sums.sql builds on Spark, where dbt runs
no Python model, and with the var ppi_pairs_engine: sql). Sums that are NULL in
SQL (no non-NULL product: dy of an unlabelled unit is NULL; the models centring
outside the pairs of one model) are NULL here too.

Memory: the units are read one pair group at a time, in parts of at most a quarter of
memory_budget (PART_SQL); the dense products are taken per block of codes that share
prompts (_blocks), so the matrices are bounded by the largest block, not by the
square of a judge's unit groups (prompt-level strata make many small blocks).
"""

from __future__ import annotations

import contextlib
import re
import uuid
from typing import Any

import numpy as np
import pandas as pd

from judge_bias.warehouse.frames import sql_literal

# the centrings: side -> (also dg, the judge score centred on all the row's units;
# kept for the pairs of one model only), each centring a unit on a row of
# int_ppi_stratum_moments of its judge, is_panel and stratum: own (its model x
# dimension), dimensions (its model, dimension 'all'), models (model and dimension 'all')
CENTRINGS = {"own": (True, False), "dimensions": (True, False), "models": (False, True)}
# the products (macros/ppi_pairs.sql ppi_pair_products): name -> (unit a's score, unit b's)
PRODUCTS = {"y_y": ("dy", "dy"), "y_j": ("dy", "dj"), "j_y": ("dj", "dy"), "j_j": ("dj", "dj")}
# the rows of a dense block: at most this many matrix entries per score (8 bytes each)
BLOCK_ENTRIES = 8_000_000

# the estimable units of a pair group (a judge, or the panel) as integers (unit key,
# label status, prompt number within the part) with their two scores: the strings
# matched in DuckDB (a hash join on a few hundred groups, one on the part's distinct
# prompts). One pair group at a time, and in parts when it has more units than the
# budget allows ({part_filter}: the prompts whose hash is part modulo parts; a
# prompt's units are all in one part, so the parts' pair sums add up)
PART_SQL = """
with units as (
    select * from ppi_units
    where
        judge = {judge}
        and is_panel = {is_panel}
        and status in ('labelled', 'unlabelled'){part_filter}
),
prompts as (
    select
        prompt_id,
        cast(row_number() over () as integer) - 1 as prompt
    from (select distinct prompt_id from units) as distinct_prompts
)
select
    ppi_groups.unit_key,
    units.status = 'labelled' as is_labelled,
    prompts.prompt,
    units.y,
    units.yhat
from units
inner join ppi_groups
    on
        units.judge = ppi_groups.judge
        and units.is_panel = ppi_groups.is_panel
        and units.model = ppi_groups.model
        and units.dimension = ppi_groups.dimension
        and units.stratum = ppi_groups.stratum
inner join prompts on units.prompt_id = prompts.prompt_id
"""
# the units of each part of a pair group split in parts (the hash of the prompts is
# not even: parts are doubled until the largest fits)
PART_SIZES_SQL = """
select max(n) from (
    select count(*) as n
    from ppi_units
    where
        judge = {judge}
        and is_panel = {is_panel}
        and status in ('labelled', 'unlabelled')
    group by hash(prompt_id) % {parts}
) as part_sizes
"""
# the estimable units of each pair group (their count sets its parts)
SIZES_SQL = """
select judge, is_panel, count(*) as n
from ppi_units
where status in ('labelled', 'unlabelled')
group by judge, is_panel
"""
# bytes per unit while a part is summed: the five columns fetched, nine centred scores,
# codes, masks and temporaries (measured ~150 at 10M; a part takes a quarter of the
# memory budget)
BYTES_PER_UNIT = 200
# the fewest units a part holds whatever the budget (20 MB: a tiny memory_budget would
# otherwise read a pair group in thousands of queries)
MIN_PART_UNITS = 100_000


def _columns() -> list[tuple[str, str, str, str, bool]]:
    """(output column, side, score a, score b, one model only) of every pair sum."""
    out = []
    for side, (judge_centring, one_model) in CENTRINGS.items():
        products = dict(PRODUCTS)
        if judge_centring:
            products["g_g"] = ("dg", "dg")
        for name, (a, b) in products.items():
            out.append((f"{name}_{side}", side, a, b, one_model))
    return out


def _block_sums(
    code: np.ndarray, prompt: np.ndarray, scores: dict[str, np.ndarray], n_codes: int
) -> tuple[np.ndarray, np.ndarray, dict[tuple[str, str], np.ndarray]]:
    """The codes present, the pair counts (present x present) and the product sums of
    one block of codes no unit outside it shares a prompt with: for each pair of scores
    (a, b) of one centring, (X_a'X_b)[code_a, code_b], X the prompts x codes matrix
    of a score (0 where the prompt has no unit of the code).

    Only the codes present are columns, and the prompts are taken in slices of at
    most BLOCK_ENTRIES matrix entries (the sums add over slices): memory is bounded
    by the block's width squared, not the pair group's."""
    # the codes and prompts present, numbered by counting (no sort): only they are
    # columns and rows
    per_code = np.bincount(code, minlength=n_codes) > 0
    present = np.flatnonzero(per_code)
    width = len(present)
    column = (np.cumsum(per_code) - 1)[code]
    prompts = np.bincount(prompt) > 0
    row = (np.cumsum(prompts) - 1)[prompt]
    n_rows = int(prompts.sum())
    block = max(1, BLOCK_ENTRIES // max(2 * width, 1))
    if n_rows > block:  # several slices: the units in row order, each slice a range
        order = np.argsort(row, kind="stable")
        row, column = row[order], column[order]
        scores = {name: values[order] for name, values in scores.items()}
        bounds = np.searchsorted(row, np.arange(0, n_rows + block, block))
    else:
        bounds = np.array([0, len(row)])
    sides = {name.split("_", 1)[1] for name in scores}
    counts = np.zeros((width, width))
    # per centring, [dy | dj] stacked: one product gives y_y, y_j, j_y and j_j
    stacked = {side: np.zeros((2 * width, 2 * width)) for side in sides}
    judge = {side: np.zeros((width, width)) for side in sides if f"dg_{side}" in scores}
    # one matrix for every slice and score: each score of a slice is written to the
    # same entries (its units'), so only a slice's entries are cleared for the next
    buffer = np.zeros((min(block, n_rows), 2 * width))
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if lo == hi:
            continue
        r, c = row[lo:hi] - k * block, column[lo:hi]
        matrix = buffer[: min(block, n_rows - k * block)]
        matrix[r, c] = 1.0
        ones = matrix[:, :width]
        counts += ones.T @ ones
        for side in sides:
            matrix[r, c] = scores[f"dy_{side}"][lo:hi]
            matrix[r, c + width] = scores[f"dj_{side}"][lo:hi]
            stacked[side] += matrix.T @ matrix
            if side in judge:
                matrix[r, c] = scores[f"dg_{side}"][lo:hi]
                g = matrix[:, :width]
                judge[side] += g.T @ g
        matrix[r, c] = 0.0
        matrix[r, c + width] = 0.0
    sums: dict[tuple[str, str], np.ndarray] = {}
    halves = {"dy": slice(0, width), "dj": slice(width, 2 * width)}
    for side in sides:
        for a, b in PRODUCTS.values():
            sums[(f"{a}_{side}", f"{b}_{side}")] = stacked[side][halves[a], halves[b]]
        if side in judge:
            sums[(f"dg_{side}", f"dg_{side}")] = judge[side]
    return present, counts, sums


def _blocks(code: np.ndarray, prompt: np.ndarray, n_codes: int) -> np.ndarray:
    """Each unit's block: the connected components of the codes, two codes joined
    when a prompt has units of both (each unit's code to its prompt's smallest code).
    Units of different blocks never pair, so each block is summed alone (prompt-level
    strata: at least one block per stratum)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    first = np.full(int(prompt.max()) + 1, n_codes, dtype=np.int64)
    np.minimum.at(first, prompt, code)
    edges = coo_matrix(
        (np.ones(len(code), dtype=np.int8), (code, first[prompt])), shape=(n_codes, n_codes)
    )
    _, label = connected_components(edges, directed=False)
    return np.asarray(label[code])


def _part_sums(
    local: np.ndarray,
    is_labelled: np.ndarray,
    prompt: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    means: dict[str, np.ndarray],
    n_keys: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pair sums of one part of a pair group: (code a, code b, n_pairs, the
    sums in _columns() order) of every pair of codes with a pair, code a < code b."""
    scores: dict[str, np.ndarray] = {}
    lab = is_labelled == 1
    for side, (judge_centring, _) in CENTRINGS.items():
        m = {c: means[f"{c}_{side}"][local] for c in ["mean_y", "mean_yhat_labelled"]}
        # dy: 0 for an unlabelled unit (its SQL NULL: no product of it is summed)
        scores[f"dy_{side}"] = np.where(lab, y - m["mean_y"], 0.0)
        scores[f"dj_{side}"] = yhat - np.where(
            lab, m["mean_yhat_labelled"], means[f"mean_yhat_unlabelled_{side}"][local]
        )
        if judge_centring:
            scores[f"dg_{side}"] = yhat - means[f"mean_yhat_{side}"][local]
    n_codes = 2 * n_keys
    code = 2 * local + is_labelled
    block = _blocks(code, prompt, n_codes)
    if (block == block[0]).all():  # one block: the units as they are
        members_of: list[Any] = [slice(None)]
    else:
        order = np.argsort(block, kind="stable")
        members_of = np.split(order, np.flatnonzero(np.diff(block[order])) + 1)
    columns = _columns()
    out_a, out_b, out_n, out_sums = [], [], [], []
    for members in members_of:
        present, counts, sums = _block_sums(
            code[members],
            prompt[members],
            {name: values[members] for name, values in scores.items()},
            n_codes,
        )
        i, j = np.nonzero(np.triu(counts, k=1) > 0)
        if not len(i):
            continue
        out_a.append(present[i])
        out_b.append(present[j])
        out_n.append(counts[i, j])
        out_sums.append(
            np.column_stack(
                [sums[(f"{a}_{side}", f"{b}_{side}")][i, j] for _, side, a, b, _ in columns]
            )
        )
    if not out_a:
        return (
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0),
            np.zeros((0, len(columns))),
        )
    return np.concatenate(out_a), np.concatenate(out_b), np.concatenate(out_n), np.vstack(out_sums)


INPUT_NAMES = re.compile(r"\b(ppi_units|ppi_groups)\b")
# int_ppi_unit_groups in key order (a pair group's keys are consecutive)
GROUPS_SQL = "select * from ppi_groups order by unit_key"


def _named(sql: str, names: dict[str, str]) -> str:
    """``sql`` reading the inputs under the names they were registered with."""
    return INPUT_NAMES.sub(lambda m: names[m[1]], sql)


def _fetch_part(
    session: Any,
    names: dict[str, str],
    judge: str,
    is_panel: bool,
    parts: int,
    part: int,
) -> dict[str, np.ndarray]:
    """One part of a pair group's units (PART_SQL), as numpy arrays."""
    part_filter = f"\n        and hash(prompt_id) % {parts} = {part}" if parts > 1 else ""
    sql = PART_SQL.format(judge=sql_literal(judge), is_panel=is_panel, part_filter=part_filter)
    fetched = session.sql(_named(sql, names)).fetchnumpy()
    return {
        "unit_key": np.asarray(fetched["unit_key"], dtype=np.int64),
        "is_labelled": np.asarray(fetched["is_labelled"], dtype=np.int64),
        "prompt": np.asarray(fetched["prompt"], dtype=np.int64),
        "y": np.ma.filled(np.ma.asarray(fetched["y"], dtype=np.float64), np.nan),
        "yhat": np.ma.filled(np.ma.asarray(fetched["yhat"], dtype=np.float64), np.nan),
    }


def _parts(
    session: Any, names: dict[str, str], judge: str, is_panel: bool, n_units: int, max_units: int
) -> int:
    """How many parts a pair group of n_units is read in: none larger than max_units
    (unless a part is one prompt)."""
    parts = max(1, -(-n_units // max_units))
    while 1 < parts < n_units:
        sql = PART_SIZES_SQL.format(judge=sql_literal(judge), is_panel=is_panel, parts=parts)
        if session.sql(_named(sql, names)).fetchall()[0][0] <= max_units:
            break
        parts *= 2
    return min(parts, max(n_units, 1))


def unit_pair_sums(
    units: Any, groups: Any, session: Any, memory_budget: object = None
) -> pd.DataFrame:
    """The rows of int_ppi_unit_pair_sums from int_ppi_units and int_ppi_unit_groups
    (DuckDB relations or pandas DataFrames; session a DuckDB connection). One pair
    group (a judge, or the panel) at a time, in parts of at most a quarter of the
    memory budget's units (memory_budget, the dbt var)."""
    from judge_bias.limits import Budget

    budget_units = Budget.from_config(memory_budget).bytes // (4 * BYTES_PER_UNIT)
    max_units = max(1, MIN_PART_UNITS, budget_units)
    # the inputs registered under names of this call (review17d: DuckDB resolves a
    # name in the catalog before a Python variable, so a warehouse table named like
    # the variable, e.g. a host project's model, was read instead, silently)
    tag = uuid.uuid4().hex
    names = {n: f"__judge_bias_{n}_{tag}" for n in ("ppi_units", "ppi_groups")}
    session.register(names["ppi_units"], units)
    session.register(names["ppi_groups"], groups)
    try:
        groups = session.sql(_named(GROUPS_SQL, names)).df()
        sizes = {(j, bool(p)): n for j, p, n in session.sql(_named(SIZES_SQL, names)).fetchall()}
        rows = []
        for _, members in groups.groupby("pair_group", sort=True):
            judge, is_panel = members["judge"].iloc[0], bool(members["is_panel"].iloc[0])
            n_units = sizes.get((judge, is_panel), 0)
            rows.append(_group_rows(session, names, groups, members, n_units, max_units))
    finally:
        for name in names.values():
            with contextlib.suppress(Exception):
                session.unregister(name)
    rows = [r for r in rows if r is not None]
    if not rows:
        return _empty()
    return pd.concat(rows, ignore_index=True)


def _group_rows(
    session: Any,
    names: dict[str, str],
    groups: pd.DataFrame,
    members: pd.DataFrame,
    n_units: int,
    max_units: int,
) -> pd.DataFrame | None:
    """The rows of one pair group: its parts' pair sums added up."""
    keys = members["unit_key"].to_numpy()
    first, n_keys = int(keys[0]), len(keys)
    if not (keys == np.arange(first, first + n_keys)).all():
        raise RuntimeError("int_ppi_unit_pair_sums: a pair group's unit keys are not consecutive")
    mean_columns = [c for c in groups.columns if c.startswith("mean_")]
    means = {c: members[c].to_numpy(dtype=np.float64) for c in mean_columns}
    judge, is_panel = str(members["judge"].iloc[0]), bool(members["is_panel"].iloc[0])
    parts = _parts(session, names, judge, is_panel, n_units, max_units)
    found = []
    for part in range(parts):
        u = _fetch_part(session, names, judge, is_panel, parts, part)
        if not len(u["prompt"]):
            continue
        lab = u["is_labelled"] == 1
        if not np.isfinite(u["yhat"]).all() or not np.isfinite(u["y"][lab]).all():
            raise ValueError(
                "int_ppi_unit_pair_sums: a labelled or unlabelled unit has a non-finite "
                "score (int_ppi_units' statuses promise a judge score, and a human score "
                "when labelled)"
            )
        found.append(
            _part_sums(
                u["unit_key"] - first,
                u["is_labelled"],
                u["prompt"],
                u["y"],
                u["yhat"],
                means,
                n_keys,
            )
        )
        del u
    code_a = np.concatenate([f[0] for f in found]) if found else np.zeros(0, np.int64)
    if not len(code_a):
        return None
    code_b = np.concatenate([f[1] for f in found])
    n_pairs = np.concatenate([f[2] for f in found])
    sums = np.vstack([f[3] for f in found])
    if len(found) > 1:  # a pair of codes in several parts: its sums added
        cell = code_a * (2 * n_keys) + code_b
        cells, inverse = np.unique(cell, return_inverse=True)
        code_a, code_b = cells // (2 * n_keys), cells % (2 * n_keys)
        n_pairs = np.bincount(inverse, weights=n_pairs, minlength=len(cells))
        sums = np.column_stack(
            [
                np.bincount(inverse, weights=sums[:, k], minlength=len(cells))
                for k in range(sums.shape[1])
            ]
        )
    member = members.reset_index(drop=True)
    ga = member.iloc[code_a // 2].reset_index(drop=True)
    gb = member.iloc[code_b // 2].reset_index(drop=True)
    la, lb = (code_a % 2 == 1), (code_b % 2 == 1)
    same_model = ga["model"].to_numpy() == gb["model"].to_numpy()
    out = {
        "judge": ga["judge"],
        "is_panel": ga["is_panel"].astype(bool),
        "model_a": ga["model"],
        "dimension_a": ga["dimension"],
        "stratum_a": ga["stratum"],
        "model_b": gb["model"],
        "dimension_b": gb["dimension"],
        "stratum_b": gb["stratum"],
        "is_labelled_a": la,
        "is_labelled_b": lb,
        "n_pairs": n_pairs.round().astype(np.int64),
    }
    for k, (column, _, a, b, one_model) in enumerate(_columns()):
        valid = np.ones(len(code_a), dtype=bool)
        if a == "dy":
            valid &= la
        if b == "dy":
            valid &= lb
        if one_model:
            valid &= same_model
        out[column] = pd.arrays.FloatingArray(np.where(valid, sums[:, k], 0.0), ~valid)
    return pd.DataFrame(out)


def _empty() -> pd.DataFrame:
    columns: dict[str, Any] = {
        "judge": pd.Series(dtype=object),
        "is_panel": pd.Series(dtype=bool),
        "model_a": pd.Series(dtype=object),
        "dimension_a": pd.Series(dtype=object),
        "stratum_a": pd.Series(dtype=object),
        "model_b": pd.Series(dtype=object),
        "dimension_b": pd.Series(dtype=object),
        "stratum_b": pd.Series(dtype=object),
        "is_labelled_a": pd.Series(dtype=bool),
        "is_labelled_b": pd.Series(dtype=bool),
        "n_pairs": pd.Series(dtype=np.int64),
    }
    for column, *_ in _columns():
        columns[column] = pd.Series(dtype="Float64")
    return pd.DataFrame(columns)


def pair_sums_model(ref: Any, get: Any, session: Any) -> pd.DataFrame:
    """The dbt model int_ppi_unit_pair_sums: ref(name) its parents, get(key) its config."""
    return unit_pair_sums(
        ref("int_ppi_units"), ref("int_ppi_unit_groups"), session, get("memory_budget")
    )
