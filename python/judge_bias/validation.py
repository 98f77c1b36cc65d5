"""The Great Expectations suites on the input files and on the marts.

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

import duckdb
import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd

from judge_bias.analyses import ANALYSES
from judge_bias.contract import KINDS
from judge_bias.pairwise import RATES as PAIRWISE_RATE_NAMES
from judge_bias.perturbation import RATES as PERTURBATION_RATE_NAMES
from judge_bias.regression import TERM_TYPES

WARNING = "warning"
CRITICAL = "critical"
REASON_CODES = (
    "malformed_row",
    "missing_value",
    "invalid_value",
    "invalid_scale",
    "unparseable_raw_output",
    "unknown_dimension",
    "unknown_model",
    "unknown_prompt",
    "unknown_label",
    "score_out_of_range",
    "duplicate_key",
)
PAIRWISE_RATES = tuple(
    f"{rate}{suffix}"
    for rate in (*PAIRWISE_RATE_NAMES, "eo_recall_own", "eo_recall_other")
    for suffix in ("", "_ci_low", "_ci_high")
    if not (rate.startswith("eo_recall") and suffix)
)
PERTURBATION_RATES = tuple(
    f"{rate}{suffix}" for rate in PERTURBATION_RATE_NAMES for suffix in ("", "_ci_low", "_ci_high")
)
FACT_KEY = ("judge", "prompt_id", "model", "dimension", "framing", "run_id")


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

    def describe(self) -> str:
        where = f"{self.table}.{self.column}" if self.column else self.table
        status = "ok" if self.success else ("FAILED" if self.severity == CRITICAL else "warning")
        text = f"[{status}] {self.suite}: {where}: {self.expectation}"
        if not self.success:
            if self.unexpected_count is not None:
                text += f" ({self.unexpected_count} offending rows)"
            if self.examples:
                text += f"; e.g. {self.examples[:5]!r}"
        return text


@dataclass
class ValidationReport:
    findings: list[Finding]

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
        lines.append(
            f"validation: {n_ok} of {len(self.findings)} expectations met, "
            f"{len(self.failures)} critical failures, {len(self.warnings)} warnings"
        )
        return "\n".join(lines)


def _input_suite() -> dict[str, list[gxe.Expectation]]:
    """Expectations on the input files as read (base_inputs__<kind> tables)."""
    suite: dict[str, list[gxe.Expectation]] = {}
    for kind in KINDS.values():
        table = f"base_inputs__{kind.name}"
        exps: list[gxe.Expectation] = [
            gxe.ExpectTableColumnsToMatchSet(
                column_set=list(kind.columns), exact_match=False, severity=CRITICAL
            ),
            # Rows breaking these are rejected with a reason: report, do not fail.
            gxe.ExpectColumnValuesToBeNull(column="_parse_error", severity=WARNING),
        ]
        key = [c for c in kind.key if c in kind.required]
        exps += [gxe.ExpectColumnValuesToNotBeNull(column=c, severity=WARNING) for c in key]
        if len(key) > 1 and len(key) == len(kind.key):
            exps.append(gxe.ExpectCompoundColumnsToBeUnique(column_list=key, severity=WARNING))
        suite[table] = exps
    suite["base_inputs__judge_ratings"].append(
        gxe.ExpectTableRowCountToBeBetween(min_value=1, severity=CRITICAL)
    )
    return suite


def _mart_suite() -> dict[str, list[gxe.Expectation]]:
    unit = {"min_value": 0.0, "max_value": 1.0, "severity": CRITICAL}
    return {
        "fct_judge_ratings": [
            gxe.ExpectTableRowCountToBeBetween(min_value=1, severity=CRITICAL),
            *(gxe.ExpectColumnValuesToNotBeNull(column=c, severity=CRITICAL) for c in FACT_KEY),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=list(FACT_KEY), severity=CRITICAL),
            gxe.ExpectColumnValuesToBeBetween(column="judge_score_norm", **unit),
            gxe.ExpectColumnValuesToBeBetween(column="human_score_norm", **unit),
            gxe.ExpectColumnValuesToBeBetween(
                column="length_feature", min_value=-1.0, max_value=1.0, severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToBeInSet(
                column="framing", value_set=["positive", "inverted"], severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToNotBeNull(column="judge_family", severity=CRITICAL),
            gxe.ExpectColumnValuesToNotBeNull(column="model_family", severity=CRITICAL),
            # A rating with no human reference cannot enter the bias regressions.
            gxe.ExpectColumnValuesToNotBeNull(column="human_score_norm", severity=WARNING),
        ],
        "agg_judge_model_scores": [
            gxe.ExpectCompoundColumnsToBeUnique(
                column_list=["judge", "model", "dimension"], severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToBeBetween(column="mean_judge_score_norm", **unit),
            gxe.ExpectColumnValuesToBeBetween(column="mean_human_score_norm", **unit),
            gxe.ExpectColumnValuesToBeBetween(column="n", min_value=1, severity=CRITICAL),
        ],
        "rejected_rows": [
            gxe.ExpectColumnValuesToNotBeNull(column="reason", severity=CRITICAL),
            gxe.ExpectColumnValuesToBeInSet(
                column="reason_code", value_set=list(REASON_CODES), severity=CRITICAL
            ),
        ],
        "bias_estimates": [
            gxe.ExpectColumnValuesToBeInSet(
                column="analysis", value_set=list(ANALYSES), severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToBeInSet(
                column="term_type", value_set=list(TERM_TYPES), severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToNotBeNull(column="estimate", severity=CRITICAL),
            gxe.ExpectColumnValuesToBeBetween(column="std_error", min_value=0.0, severity=CRITICAL),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="ci_high", column_B="ci_low", or_equal=True, severity=CRITICAL
            ),
        ],
        "bias_fits": [
            gxe.ExpectColumnValuesToBeInSet(
                column="analysis", value_set=list(ANALYSES), severity=CRITICAL
            ),
            gxe.ExpectCompoundColumnsToBeUnique(
                column_list=["analysis", "slice"], severity=CRITICAL
            ),
        ],
        # The pairwise marts may be empty (no pairwise or perturbation file).
        "pairwise_bias": [
            gxe.ExpectCompoundColumnsToBeUnique(
                column_list=["judge", "opponent"], severity=CRITICAL
            ),
            *(gxe.ExpectColumnValuesToBeBetween(column=c, **unit) for c in PAIRWISE_RATES),
            gxe.ExpectColumnValuesToBeBetween(
                column="eo_bias", min_value=-1.0, max_value=1.0, severity=CRITICAL
            ),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="n_pairs", column_B="n_swapped_pairs", or_equal=True, severity=CRITICAL
            ),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="length_slope_ci_high",
                column_B="length_slope_ci_low",
                or_equal=True,
                severity=CRITICAL,
            ),
        ],
        "pairwise_perplexity_bins": [
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["judge", "bin"], severity=CRITICAL),
            gxe.ExpectColumnValuesToBeBetween(column="judge_first_rate", **unit),
            gxe.ExpectColumnValuesToBeBetween(column="human_first_rate", **unit),
        ],
        "perturbation_bias": [
            gxe.ExpectCompoundColumnsToBeUnique(
                column_list=["judge", "bias_type"], severity=CRITICAL
            ),
            *(gxe.ExpectColumnValuesToBeBetween(column=c, **unit) for c in PERTURBATION_RATES),
            gxe.ExpectColumnValuesToBeBetween(
                column="error_rate", min_value=0.0, severity=CRITICAL
            ),
            gxe.ExpectColumnValuesToBeBetween(column="n_items", min_value=1, severity=CRITICAL),
        ],
        "input_row_counts": [
            gxe.ExpectColumnPairValuesToBeEqual(
                column_A="rows_read", column_B="rows_accounted", severity=CRITICAL
            ),
        ],
    }


SUITES: dict[str, dict[str, list[gxe.Expectation]]] = {}


def suites() -> dict[str, dict[str, list[gxe.Expectation]]]:
    """The registered suites: suite name -> table -> expectations."""
    if not SUITES:
        SUITES.update({"inputs": _input_suite(), "marts": _mart_suite()})
    return SUITES


def _columns_needed(expectations: Iterable[gxe.Expectation]) -> set[str] | None:
    cols: set[str] = set()
    for exp in expectations:
        cfg = exp.configuration.kwargs
        if isinstance(exp, gxe.ExpectTableColumnsToMatchSet):
            return None  # needs every column
        for key in ("column", "column_A", "column_B"):
            if key in cfg:
                cols.add(cfg[key])
        cols.update(cfg.get("column_list", []))
    return cols


def _read_table(con: duckdb.DuckDBPyConnection, table: str, cols: set[str] | None) -> pd.DataFrame:
    existing = [r[0] for r in con.execute(f'describe "{table}"').fetchall()]
    wanted = existing if cols is None else [c for c in existing if c in cols]
    select = ", ".join('"' + c.replace('"', '""') + '"' for c in wanted) or "1 as _"
    return con.execute(f'select {select} from "{table}"').df()


def _context() -> gx.data_context.AbstractDataContext:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = gx.data_context.types.base.ProgressBarsConfig(globally=False)
    return ctx


def validate(
    db_path: str | Path, suite_names: Iterable[str] = ("inputs", "marts")
) -> ValidationReport:
    """Run the named suites on the warehouse at ``db_path``."""
    ctx = _context()
    source = ctx.data_sources.add_pandas("warehouse")
    findings: list[Finding] = []
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        tables = {
            r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()
        }
        for suite_name in suite_names:
            for table, expectations in suites()[suite_name].items():
                if table not in tables:
                    findings.append(
                        Finding(suite_name, table, "table exists", None, CRITICAL, False)
                    )
                    continue
                df = _read_table(con, table, _columns_needed(expectations))
                asset = source.add_dataframe_asset(f"{suite_name}__{table}")
                batch = asset.add_batch_definition_whole_dataframe("all").get_batch(
                    batch_parameters={"dataframe": df}
                )
                for exp in expectations:
                    res = batch.validate(exp, result_format="SUMMARY")
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
                            examples=list(res.result.get("partial_unexpected_list") or [])[:5],
                            unexpected_count=res.result.get("unexpected_count"),
                        )
                    )
    finally:
        con.close()
    return ValidationReport(findings)
