"""The agreement marts as their dbt model files call them: ``ref(name)`` gives a
parent relation, ``get(key)`` a config value; every input is aggregated in SQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import pandas as pd

from judge_bias.agreement.annotator_alpha import (
    ANNOTATOR_COLUMNS,
    LABEL_COUNT_BYTES,
    LABEL_COUNT_STRING_BYTES,
    LABEL_KEY_BYTES,
    LABEL_KEY_CHAR_BYTES,
    annotator_agreement_from_counts,
)
from judge_bias.agreement.coded import binary, coded_rows, parts_of, text_columns
from judge_bias.agreement.counterfactual import (
    PROMPT_SUM_BYTES,
    counterfactual_from_parts,
    counterfactual_from_prompt_sums,
)
from judge_bias.agreement.judge_human_sums import judge_human_from_sums
from judge_bias.agreement.self_vs_peer import (
    ITEM_BYTES,
    self_vs_peer_from_parts,
)
from judge_bias.agreement.self_vs_peer import self_vs_peer_tests as tests_from_items
from judge_bias.limits import Budget, within_budget
from judge_bias.stats.binary_cells import query
from judge_bias.warehouse.frames import to_pandas

Ref = Callable[[str], object]
Get = Callable[[str], object]
COUNTERFACTUAL_SUMS = ("n", "sum_a", "sum_b", "sum_aa", "sum_bb", "sum_ab")


def agreement_annotators(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """agreement_annotators from the value counts per item and score
    (int_annotator_label_counts, never the labels), the annotator ids, and each
    dimension's level of measurement (it picks the headline alpha)."""
    budget = Budget.from_dbt(get)
    annotators = to_pandas(ref("int_annotator_ids"))
    scales = to_pandas(ref("int_dimension_scales"))
    levels = dict(zip(scales["dimension"], scales["level_of_measurement"], strict=True))
    relation = ref("int_annotator_label_counts")
    # a Spark frame (Databricks) is read as it is: its strings cost what main charged
    coded = isinstance(relation, duckdb.DuckDBPyRelation)
    return within_budget(
        relation, budget, "human label counts",
        label_count_bytes(relation) if coded else LABEL_COUNT_STRING_BYTES,
        lambda counts: annotator_agreement_from_counts(counts, annotators, levels),
        "dimension", ANNOTATOR_COLUMNS, read=label_counts if coded else None,
    )  # fmt: skip


def label_count_bytes(relation: Any) -> float:
    """What a row of int_annotator_label_counts costs marts.label_counts and the mart:
    LABEL_COUNT_BYTES, plus each distinct prompt_id and model value's LABEL_KEY_BYTES
    and LABEL_KEY_CHAR_BYTES a byte (UTF-8) spread over the rows; counted in DuckDB
    before anything is read (a DuckDB relation)."""
    text = text_columns(relation)
    distinct = " union all ".join(
        f"select count(*) as n, coalesce(sum(strlen(v::varchar)), 0) as chars from "
        f"(select distinct {binary(text, c)} as v from r)"
        for c in ("prompt_id", "model")
    )
    # the count(*) is no second read (review20, checked in session 21): DuckDB answers
    # it from the table's row-group counts (EXPLAIN ANALYZE: no table scan), 1.6 of
    # 304 CPU ms at 2M rows of 32-char ids; each distinct scans its one column once
    n_rows, n_values, chars = query(
        relation,
        f"select (select count(*) from r), sum(n), sum(chars) from ({distinct})",
    ).fetchall()[0]
    keys = LABEL_KEY_BYTES * int(n_values) + LABEL_KEY_CHAR_BYTES * int(chars)
    return LABEL_COUNT_BYTES + keys / max(int(n_rows), 1)


def label_counts(relation: object) -> pd.DataFrame:
    """int_annotator_label_counts with integer codes for prompt_id and model (numbered
    in pandas' order of the binary values, nulls NA, so items group and sort as on
    the strings) and numeric flags, scores and counts, the rows sorted by every
    column (the mart's last bits do not vary with DuckDB's join threads): ~52 bytes
    a row held, not a Python string per key and row (what the read and the mart
    cost: label_count_bytes)."""
    keys = ("dimension", "prompt_id", "model")
    values = ("is_expert", "is_pre_aggregated", "human_score", "scale_min", "scale_max")
    frame = coded_rows(relation, keys, (*values, "n_labels"), ordered=True)

    def codes(column: str) -> pd.Series:
        numbers = frame[column].cat.codes
        return numbers.astype("Int32").mask(numbers < 0)

    return frame.assign(
        dimension=frame["dimension"].astype(object),  # a few strings, one pointer a row
        prompt_id=codes("prompt_id"),
        model=codes("model"),
    )


def agreement_counterfactual(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """agreement_counterfactual from the per judge x dimension x prompt sums, read
    whole judges at a time in parts of at most a quarter of the memory budget (the
    same draws as from the whole table); the bootstrap draws its replicates in
    batches within the budget."""
    budget = Budget.from_dbt(get)
    relation = ref("int_agreement_prompt_sums")
    coded, columns = ("judge", "dimension", "prompt_id"), COUNTERFACTUAL_SUMS
    if not isinstance(relation, duckdb.DuckDBPyRelation):
        return counterfactual_from_prompt_sums(coded_rows(relation, coded, columns), budget=budget)
    parts = parts_of(relation, "judge", budget.bytes // 4 // PROMPT_SUM_BYTES)
    frames = (coded_rows(part, coded, columns) for part in parts)
    return counterfactual_from_parts(frames, budget=budget)


def agreement_judge_human(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """agreement_judge_human from the distinct score pairs per prompt with counts
    (int_agreement_binary_ratings, whose rows without a human score judge_human_sums
    leaves out), summed by DuckDB into the contingency tables and the per-prompt sums
    of the design effects (judge_human_sums): never the pairs themselves."""
    budget = Budget.from_dbt(get)
    return judge_human_from_sums(ref("int_agreement_binary_ratings"), budget)


def self_vs_peer_tests(ref: Ref, get: Get, session: object = None) -> pd.DataFrame:
    """self_vs_peer_tests from S, R and G per judge x framing x item (SQL), read whole
    judges at a time in parts of at most a quarter of the memory budget."""
    budget = Budget.from_dbt(get)
    relation = ref("int_self_vs_peer_items")
    coded = ("judge", "framing", "prompt_id", "dimension")
    if not isinstance(relation, duckdb.DuckDBPyRelation):
        return tests_from_items(items=coded_rows(relation, coded, ("s", "r", "g")))
    parts = parts_of(relation, "judge", budget.bytes // 4 // ITEM_BYTES)
    return self_vs_peer_from_parts(coded_rows(part, coded, ("s", "r", "g")) for part in parts)
