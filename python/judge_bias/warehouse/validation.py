"""The Great Expectations suites on the input files and on the marts, run.

The suites themselves (what each expectation checks) are in expectations.py.
Great Expectations 1.x runs here through its pandas route: each table is
read from the DuckDB file (read-only, only the columns the suite needs) and
validated as a dataframe asset. Critical failures fail the run; warnings
(rows that were rejected with a reason, for instance) are reported only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from judge_bias.inputs.contract import KINDS
from judge_bias.warehouse.expectations import CRITICAL, suites
from judge_bias.warehouse.gx import FailureSeverity, ProgressBarsConfig, gx, gxe, no_fingerprints
from judge_bias.warehouse.incremental import RECOMPUTED_FACTS
from judge_bias.warehouse.provenance import read_last_run

# the warning severity as the expectations take it (expectations.py's _WARN)
_WARN = FailureSeverity.WARNING


@dataclass
class Finding:
    """One expectation's outcome."""

    suite: str
    table: str
    expectation: str
    column: str | None
    severity: str
    success: bool
    examples: list[object] = field(default_factory=list)
    unexpected_count: int | None = None
    # why a finding not met is expected on these inputs (empty_by_design_note)
    note: str | None = None

    def describe(self) -> str:
        where = f"{self.table}.{self.column}" if self.column else self.table
        status = "ok" if self.success else ("FAILED" if self.severity == CRITICAL else "warning")
        text = f"[{status}] {self.suite}: {where}: {self.expectation}"
        if not self.success:
            if self.unexpected_count is not None:
                text += f" ({self.unexpected_count} offending rows)"
            if self.examples and all(e is None for e in self.examples):
                text += "; the offending values are missing (null or NaN)"
            elif self.examples:
                text += f"; e.g. [{', '.join(_show(e) for e in self.examples[:5])}]"
            if self.note:
                text += f"; note: {self.note}"
        return text


def _show(value: object) -> str:
    """An example value as the message shows it: a missing value as null (pandas
    reads SQL nulls as NaN, which would print as nan)."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in value.items()) + "}"
    return repr(value)


@dataclass
class ValidationReport:
    findings: list[Finding]
    # table -> (rows validated, rows in the table) for tables above MAX_VALIDATED_ROWS
    sampled: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the dbt invocation that wrote the validated tables (table dbt_last_run)
    dbt_invocation_id: str | None = None
    data_dir: str | None = None  # the data folder of that invocation
    # that invocation's input kinds read from relations (comma-separated) and its
    # command-line dbt vars (JSON text), both from dbt_last_run
    input_relations: str | None = None
    dbt_vars: str | None = None
    # table -> (rows of the load, rows in the table) for the tables an incremental
    # build validated on the load's rows alone (load_scope)
    scoped: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return all(f.success for f in self.findings if f.severity == CRITICAL)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.success and f.severity == CRITICAL]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.success and f.severity != CRITICAL]

    def summary(self) -> str:
        lines = [f.describe() for f in self.findings if not f.success]
        n_ok = sum(f.success for f in self.findings)
        noted = sum(f.note is not None for f in self.warnings)
        lines.append(
            f"validation: {n_ok} of {len(self.findings)} expectations met, "
            f"{len(self.failures)} critical failures, {len(self.warnings)} warnings"
            + (f" ({noted} expected on these inputs: see the note)" if noted else "")
        )
        for table, (n, total) in self.scoped.items():
            if n in (0, total):
                # nothing of the load in the table (a kind the load brought no rows
                # of), or the load is the whole table (a first load, a mart recomputed
                # whole): every row the table holds now was validated by some build
                continue
            lines.append(
                f"  {table}: validated on the {n:,} rows of the load of its {total:,} rows "
                "(the loads before validated theirs)"
            )
        for table, (n, total) in self.sampled.items():
            lines.append(
                f"  {table}: validated on a random sample of {n:,} of its {total:,} rows "
                "(dbt's tests checked every row)"
            )
        return "\n".join(lines)


# A table left empty because the folder holds no rows of the input kind it is made
# of, while it holds judgments of another kind (pairwise-only data: AlpacaEval,
# LLMBar, self-recognition; human labels alone): its row-count warning stays a
# warning and says why (a new user could not tell whether something was wrong). A
# folder with judge ratings whose facts are empty (every row rejected) keeps the
# bare warning. Table -> the input kind whose absence explains it.
EMPTY_BY_DESIGN: dict[str, str] = {
    "base_inputs__judge_ratings": "judge_ratings",
    "fct_judge_ratings": "judge_ratings",
}
OTHER_JUDGMENTS = ("pairwise_judgments", "perturbation_judgments", "human_annotations")


def empty_by_design_note(
    con: duckdb.DuckDBPyConnection, tables: set[str], table: str
) -> str | None:
    """The note of ``table``'s row-count warning when its input kind has no rows in
    the folder and another kind of judgment has (EMPTY_BY_DESIGN); None otherwise."""
    kind = EMPTY_BY_DESIGN.get(table)
    if kind is None or f"base_inputs__{kind}" not in tables:
        return None
    counts = {
        k: con.execute(f'select count(*) from "base_inputs__{k}"').fetchall()[0][0]
        for k in (kind, *OTHER_JUDGMENTS)
        if f"base_inputs__{k}" in tables
    }
    held = [f"{k}: {n:,} rows" for k, n in counts.items() if k != kind and n]
    if counts[kind] or not held:
        return None
    return (
        f"no pointwise judge ratings in this folder ({kind} has no rows; "
        f"{', '.join(held)}): the ratings marts are empty by design"
    )


def _is_row_count_warning(exp: gxe.Expectation) -> bool:
    """Whether ``exp`` is a warning-severity row-count expectation: the only finding
    empty_by_design_note explains (never a critical one, nor another expectation)."""
    return isinstance(exp, gxe.ExpectTableRowCountToBeBetween) and exp.severity == _WARN


# Columns that name an offending row in a finding's examples, per table.
EXAMPLE_KEYS: dict[str, list[str]] = {"input_row_counts": ["source"]}


def _columns_needed(expectations: Iterable[gxe.Expectation], table: str) -> tuple[set[str], bool]:
    """The columns whose values the expectations read, and whether one of them reads
    the table's column names (ExpectTableColumnsToMatchSet: the names, no value)."""
    cols: set[str] = set(EXAMPLE_KEYS.get(table, []))
    every_name = False
    for exp in expectations:
        cfg = exp.configuration.kwargs
        if isinstance(exp, gxe.ExpectTableColumnsToMatchSet):
            every_name = True
            continue
        for key in ("column", "column_A", "column_B"):
            if key in cfg:
                cols.add(cfg[key])
        cols.update(cfg.get("column_list", []))
    return cols, every_name


# Above this many rows a table is validated on a reproducible uniform sample of this
# size (pandas route: the whole table would be loaded into memory); dbt's tests have
# checked the same rules on every row in SQL before.
MAX_VALIDATED_ROWS = 500_000
SAMPLE_SEED = 20250101
SAMPLE_MARGIN = 1.1  # the share of rows ranked for the sample, over the sample's share
SAMPLE_ROWID = "_judge_bias_sample_rowid"


# An incremental build (docs/incremental.md) validates these tables on the rows its
# load wrote (load_scope): the rows of the other loads were validated by the builds
# that wrote them and are unchanged since. The inputs as read: the load's rows; the
# facts (incremental by prompt): the rows the load recomputed, every row when it
# recomputed every prompt (int_load_scope.needs_full), read from the view
# int_load_recomputed_facts (the macro load_prompt_condition with run_id, as the dbt
# tests' restriction and the model's pre-hook: one statement of the condition). The
# row-count expectations are left out on the load (validate). fct_judge_ratings's
# other expectations read each row alone or its key, which holds prompt_id and
# run_id: rows sharing a key are recomputed together, so a duplicate among them is
# still found.
LAST_LOAD = "(select arg_max(load_id, load_number) from int_load_scope)"


def load_scope() -> dict[str, str]:
    """The conditions restricting an incremental build's validation to its load's
    rows, by table. The facts are read from the table itself with the view's rows as
    the condition (source_row_number is unique): a table is sampled by its row ids,
    the same rows a whole-table validation ranks first; a view would be
    reservoir-sampled (other rows, 4-5x the CPU: review15b)."""
    scope = {f"base_inputs__{kind}": f"_load_id = {LAST_LOAD}" for kind in KINDS}
    scope["fct_judge_ratings"] = (
        f"source_row_number in (select source_row_number from {RECOMPUTED_FACTS})"
    )
    return scope


def _read_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    cols: set[str] | None,
    every_name: bool = False,
    where: str | None = None,
) -> tuple[pd.DataFrame, int]:
    """The table's needed columns (``cols``; None: every column), all rows or a
    sample, and its row count. ``every_name``: the table's other columns too, as
    nulls (an expectation reads their names, none their values: at 1M ratings the
    input file's text columns, _raw_line first, were half of its read). ``where``:
    the rows read and counted (an incremental build's load, load_scope)."""
    existing = [r[0] for r in con.execute(f'describe "{table}"').fetchall()]
    quoted = {c: '"' + c.replace('"', '""') + '"' for c in existing}
    if cols is None:
        items = list(quoted.values())
    elif every_name:
        items = [q if c in cols else f"null as {q}" for c, q in quoted.items()]
    else:
        items = [q for c, q in quoted.items() if c in cols]
    select = ", ".join(items) or "1 as _"
    filtered = f'"{table}" where {where}' if where else f'"{table}"'
    total = con.execute(f"select count(*) from {filtered}").fetchall()[0][0]
    if total <= MAX_VALIDATED_ROWS:
        return _frame(con, f"select {select} from {filtered}"), total
    kind = con.execute(
        "select table_type from information_schema.tables "
        "where table_schema = current_schema() and table_name = ?",
        [table],
    ).fetchall()
    # a column of the input named rowid hides DuckDB's row id (its values may repeat
    # or be null): such a table is sampled as a view is
    if kind and kind[0][0] == "BASE TABLE" and "rowid" not in {c.lower() for c in existing}:
        # the rows whose seeded hash of the row id is smallest: a reproducible uniform
        # sample, drawn on the needed columns alone. At 1M ratings a seeded reservoir
        # sample of the needed columns cost 1.6 CPU s per table, of the row ids alone
        # 0.45 (both grow with the rows), the smallest hashes of the row ids 0.08.
        # Those smallest hashes lie below a threshold that lets through about 1.1
        # times the sample (its binomial count falls short of the sample by 67
        # standard deviations at 500,000 rows): the top-N sorts that share of the
        # rows, not all of them (at 10M ratings 1.7 -> 0.8 CPU s per table), and the
        # rows are the same; when fewer pass, the whole table is ranked.
        order = f"order by hash(rowid, {SAMPLE_SEED}), rowid limit {MAX_VALIDATED_ROWS}"
        share = min(1.0, SAMPLE_MARGIN * MAX_VALIDATED_ROWS / total)
        below = (
            f"hash(rowid, {SAMPLE_SEED}) < {int(share * 2**64)}::hugeint" if share < 1.0 else "true"
        )
        for prefilter in (below, "true"):
            rows = (
                f'select {select}, rowid as {SAMPLE_ROWID} from "{table}" '
                f"where ({where or 'true'}) and {prefilter} {order}"
            )
            df = _frame(
                con, f"select * exclude ({SAMPLE_ROWID}) from ({rows}) order by {SAMPLE_ROWID}"
            )
            if len(df) == MAX_VALIDATED_ROWS:
                break
        return df, total
    # a view (no row ids), or a table with a rowid column: a seeded reservoir sample
    sample = f"using sample reservoir({MAX_VALIDATED_ROWS} rows) repeatable ({SAMPLE_SEED})"
    return _frame(con, f"select {select} from {filtered} {sample}"), total


def _frame(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """The query's rows as a dataframe, through Arrow (DuckDB's own pandas conversion
    cost twice the CPU of the query on a 500,000-row sample of fct_judge_ratings)."""
    return con.sql(sql).to_arrow_table().to_pandas()


def _plain(value: object) -> object:
    """numpy scalars as Python values (readable in messages and JSON); a missing
    value (None, NaN, NaT, pd.NA) as None."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _examples(result: dict, keys: list[str]) -> list[object]:
    """Up to five offending values; with example keys, each row as a dict (key first)."""
    if keys and result.get("partial_unexpected_index_list"):
        rows = result["partial_unexpected_index_list"][:5]
        return [{c: _plain(r[c]) for c in [*keys, *(c for c in r if c not in keys)]} for r in rows]
    return [_plain(v) for v in list(result.get("partial_unexpected_list") or [])[:5]]


def _config_key(kind: str, kwargs: dict) -> str:
    plain = {k: v for k, v in kwargs.items() if k not in ("result_format", "batch_id")}
    return kind + repr(sorted(plain.items(), key=lambda item: item[0]))


def _in_order(expectations: list[gxe.Expectation], results: list) -> list:
    """The results of a suite validation in the order of ``expectations`` (matched by
    expectation type and arguments; identical expectations have identical results)."""
    by_key: dict[str, list] = {}
    for res in results:
        cfg = res.expectation_config
        by_key.setdefault(_config_key(cfg.type, cfg.kwargs), []).append(res)
    ordered = []
    for exp in expectations:
        found = by_key.get(_config_key(exp.expectation_type, exp.configuration.kwargs))
        if not found:
            raise RuntimeError(f"no validation result for {exp.expectation_type}")
        ordered.append(found.pop(0))
    if len(results) != len(expectations):
        raise RuntimeError(f"{len(results)} validation results for {len(expectations)}")
    return ordered


def _results(batch: Any, name: str, expectations: list[gxe.Expectation], keys: list[str]) -> list:
    """The expectations' results on the batch, in their order. All of them in one
    validation (one metric graph, one validator: the table's dataframe fingerprinted
    once, not per expectation) that says only whether each is met (BOOLEAN_ONLY: at
    a third to a half of the CPU of SUMMARY on the demo's marts); the ones not met
    again with SUMMARY, whose offending rows' count and examples the findings show
    (``keys``: the columns naming an offending row)."""
    suite = gx.ExpectationSuite(name=name, expectations=list(expectations))
    results = _in_order(expectations, batch.validate(suite, result_format="BOOLEAN_ONLY").results)
    failed = [i for i, res in enumerate(results) if not res.success]
    if failed:
        again = [expectations[i] for i in failed]
        suite = gx.ExpectationSuite(name=f"{name}__not_met", expectations=again)
        result_format = {"result_format": "SUMMARY", "unexpected_index_column_names": keys}
        summaries = batch.validate(suite, result_format=result_format if keys else "SUMMARY")
        for i, res in zip(failed, _in_order(again, summaries.results), strict=True):
            results[i] = res
    return results


def _context() -> gx.data_context.AbstractDataContext:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    return ctx


def validate(
    db_path: str | Path,
    suite_names: Iterable[str] = ("inputs", "marts"),
    only: Iterable[str] | None = None,
    on_load: bool = False,
) -> ValidationReport:
    """Run the named suites on the warehouse at ``db_path`` (``only``: on those
    tables alone, e.g. the input gates' before the rest is built; ``on_load``: an
    incremental build's, the tables of load_scope on its load's rows). The batches
    are not fingerprinted while it runs (gx.no_fingerprints)."""
    with no_fingerprints():
        return _validate(db_path, suite_names, only, on_load)


def _validate(
    db_path: str | Path,
    suite_names: Iterable[str],
    only: Iterable[str] | None,
    on_load: bool,
) -> ValidationReport:
    wanted = None if only is None else set(only)
    ctx = _context()
    # one asset and batch definition for every table (each table's dataframe is the
    # batch's parameter): each one added was a YAML dump of the context's config,
    # two per table (fixed19: ~0.1 of the demo's 0.8 CPU s of suites)
    tables_batch = (
        ctx.data_sources.add_pandas("warehouse")
        .add_dataframe_asset("tables")
        .add_batch_definition_whole_dataframe("all")
    )
    findings: list[Finding] = []
    sampled: dict[str, tuple[int, int]] = {}
    scoped: dict[str, tuple[int, int]] = {}
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        last_run = read_last_run(con) or {}
        tables = {
            r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()
        }
        # the view missing (a warehouse built before int_load_recomputed_facts): every
        # table is read whole
        loaded = on_load and {"int_load_scope", RECOMPUTED_FACTS} <= tables
        scope = load_scope() if loaded else {}
        for suite_name in suite_names:
            for table, expectations in suites()[suite_name].items():
                if wanted is not None and table not in wanted:
                    continue
                if table not in tables:
                    findings.append(
                        Finding(suite_name, table, "table exists", None, CRITICAL, False)
                    )
                    continue
                where = scope.get(table)
                if table in scope:
                    # a load may hold none of a table's rows (a load of human labels
                    # alone; no fact recomputed): the table's row count is not the
                    # load's, and stays the whole-table validation's
                    expectations = [
                        e
                        for e in expectations
                        if not isinstance(e, gxe.ExpectTableRowCountToBeBetween)
                    ]
                df, total = _read_table(con, table, *_columns_needed(expectations, table), where)
                if len(df) < total:
                    sampled[table] = (len(df), total)
                if table in scope:
                    every = con.execute(f'select count(*) from "{table}"').fetchall()[0][0]
                    scoped[table] = (total, every)
                batch = tables_batch.get_batch(batch_parameters={"dataframe": df})
                keys = [c for c in EXAMPLE_KEYS.get(table, []) if c in df.columns]
                results = _results(batch, f"{suite_name}__{table}", expectations, keys)
                for exp, res in zip(expectations, results, strict=True):
                    cfg = exp.configuration.kwargs
                    column = (
                        cfg.get("column")
                        or (",".join(cfg["column_list"]) if "column_list" in cfg else None)
                        or (f"{cfg['column_A']}={cfg['column_B']}" if "column_A" in cfg else None)
                    )
                    findings.append(
                        Finding(
                            suite=suite_name,
                            table=table,
                            expectation=exp.expectation_type,
                            column=column,
                            severity=str(exp.severity.value),
                            success=bool(res.success),
                            examples=_examples(res.result, keys),
                            unexpected_count=res.result.get("unexpected_count"),
                            note=None
                            if res.success or not _is_row_count_warning(exp)
                            else empty_by_design_note(con, tables, table),
                        )
                    )
    finally:
        con.close()
    return ValidationReport(
        findings,
        sampled,
        last_run.get("invocation_id"),
        last_run.get("data_dir"),
        last_run.get("input_relations"),
        last_run.get("dbt_vars"),
        scoped,
    )
