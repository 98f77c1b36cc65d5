"""The dbt models' entry points of judge_drift, judge_stability and agreement_binary:
(ref, get, session), the one shape of every model file. The rows are counted in the
database first: over the memory_budget var the mart gets one row per key with the
note and no statistics (judge_bias.limits.read_rows), never an out-of-memory crash."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.drift.settings import settings_from_config
from judge_bias.drift.stability import STABILITY_COLUMNS, judge_stability_mart
from judge_bias.drift.versions import DRIFT_COLUMNS, judge_drift_mart
from judge_bias.limits import Budget, read_rows
from judge_bias.stats.binary_agreement import BINARY_COLUMNS, agreement_binary_mart
from judge_bias.stats.binary_cells import CELL_COLUMNS, cell_bounds, cell_counts
from judge_bias.warehouse.frames import distinct_keys, to_pandas

Ref = Callable[[str], object]
Get = Callable[[str], object]

# bytes of one row pulled into pandas (columns as objects, ~80 bytes each)
ITEM_ROW_BYTES = 7 * 80  # int_drift_items
STABILITY_ROW_BYTES = 12 * 80  # int_stability_items
CELL_BYTES = len(CELL_COLUMNS) * 8 + 16  # a judge x dimension x prompt's sums (numpy)


def _skipped(keys: pd.DataFrame, note: str, columns: dict[str, str], fill: dict) -> pd.DataFrame:
    """The mart's rows without statistics: its keys, ``fill`` (settings, flags),
    the note; integer counts null (nullable), every column of the schema."""
    out = keys.assign(notes=note, **fill).reindex(columns=list(columns))
    nullable = {"int64": "Int64", "bool": "boolean", "str": "string"}
    return out.astype({c: nullable.get(t, t) for c, t in columns.items()})


def judge_drift(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """judge_drift from int_drift_items and int_judge_versions."""
    s, budget = settings_from_config(get), Budget.from_config(get("memory_budget"))
    items, note = read_rows(ref("int_drift_items"), budget, "drift items", ITEM_ROW_BYTES)
    if note is not None:
        keys = distinct_keys(
            ref("int_judge_versions"), "judge_before, judge_after, 'all' as dimension"
        )
        return _skipped(keys, note, DRIFT_COLUMNS, {"drift_flag": False, "ci_level": s.ci_level})
    return judge_drift_mart(items, to_pandas(ref("int_judge_versions")), s)


def judge_stability(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """judge_stability from int_stability_items."""
    s, budget = settings_from_config(get), Budget.from_config(get("memory_budget"))
    relation = ref("int_stability_items")
    items, note = read_rows(relation, budget, "stability items", STABILITY_ROW_BYTES)
    if note is not None:
        fill = {"pass_threshold": s.pass_threshold, "ci_level": s.ci_level}
        return _skipped(distinct_keys(relation, "judge, dimension"), note, STABILITY_COLUMNS, fill)
    return judge_stability_mart(items, s)


def agreement_binary(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """agreement_binary from int_agreement_binary_ratings."""
    s, budget = settings_from_config(get), Budget.from_config(get("memory_budget"))
    relation = ref("int_agreement_binary_ratings")

    # what the mart holds: the per-prompt sums (twice: the groups' copies) and the
    # n_boot x G bootstrap weights, counted in the database before anything is read
    def note_of(n_cells: int, n_prompts: int) -> str | None:
        return budget.over(
            f"reading {n_cells:,} per-prompt sums of binary agreement ratings and "
            f"{s.n_boot} x {n_prompts:,} bootstrap weights",
            2 * n_cells * CELL_BYTES + s.n_boot * n_prompts * 8,
        )

    # bounds first (cheap): when they fit, so do the counts; else the exact counts
    # decide, and name themselves in the note
    note = note_of(*cell_bounds(relation))
    if note is not None:
        note = note_of(*cell_counts(relation))
    if note is not None:
        fill = {"pass_threshold": s.pass_threshold, "ci_level": s.ci_level}
        return _skipped(distinct_keys(relation, "judge, dimension"), note, BINARY_COLUMNS, fill)
    return agreement_binary_mart(
        relation,
        pass_threshold=s.pass_threshold,
        level=s.ci_level,
        n_boot=s.n_boot,
        seed=s.seed,
    )
