"""The Great Expectations suites: what the expectations check on the input files
(base_inputs__<kind> tables) and on the marts, registered by name (``suites()``);
validation.py reads the tables and runs them.
"""

from __future__ import annotations

from judge_bias.bias.analyses import ANALYSES
from judge_bias.bias.regression import TERM_TYPES
from judge_bias.inputs.contract import KINDS, REASON_CODES
from judge_bias.pairwise.columns import RATES as PAIRWISE_RATE_NAMES
from judge_bias.perturbation.calm import RATES as PERTURBATION_RATE_NAMES
from judge_bias.warehouse.floats import float_tolerance
from judge_bias.warehouse.gx import FailureSeverity, gxe

# Finding.severity is the plain string; the expectations take GX's enum (same value).
WARNING: str = FailureSeverity.WARNING.value
CRITICAL: str = FailureSeverity.CRITICAL.value
_WARN = FailureSeverity.WARNING
_CRIT = FailureSeverity.CRITICAL
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
# The pairwise verdict vocabulary of the staging (macro pairwise_verdict), as text.
VERDICT_REGEX = (
    r"(?i)^[\s*\"'`]*(?:\[\[\s*)?(?:first|second|tie|draw|equal|=|1|2|a|b)(?:\s*\]\])?"
    r"[\s*\"'`.]*$"
)
NUMBER_REGEX = r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$"
UNSIGNED_NUMBER_REGEX = r"^\s*\+?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$"
PROBABILITY_REGEX = r"^\s*(?:0?\.\d+|0(?:\.\d*)?|1(?:\.0*)?)\s*$"
CONDITION_REGEX = r"(?i)^\s*(?:original|repeat|perturbed)\s*$"


def _input_suite() -> dict[str, list[gxe.Expectation]]:
    """Expectations on the input files as read (base_inputs__<kind> tables)."""
    suite: dict[str, list[gxe.Expectation]] = {}
    for kind in KINDS.values():
        table = f"base_inputs__{kind.name}"
        exps: list[gxe.Expectation] = [
            gxe.ExpectTableColumnsToMatchSet(
                column_set=list(kind.columns), exact_match=False, severity=_CRIT
            ),
            # Rows breaking these are rejected with a reason: report, do not fail.
            gxe.ExpectColumnValuesToBeNull(column="_parse_error", severity=_WARN),
        ]
        key = [c for c in kind.key if c in kind.required]
        exps += [gxe.ExpectColumnValuesToNotBeNull(column=c, severity=_WARN) for c in key]
        if len(key) > 1 and len(key) == len(kind.key):
            exps.append(gxe.ExpectCompoundColumnsToBeUnique(column_list=key, severity=_WARN))
        suite[table] = exps
    # Pairwise and perturbation files: values the staging would reject (reported).
    suite["base_inputs__pairwise_judgments"] += [
        *(
            gxe.ExpectColumnValuesToMatchRegex(column=c, regex=VERDICT_REGEX, severity=_WARN)
            for c in ("verdict", "human_verdict")
        ),
        gxe.ExpectColumnValuesToMatchRegex(
            column="p_first", regex=PROBABILITY_REGEX, severity=_WARN
        ),
        *(
            gxe.ExpectColumnValuesToMatchRegex(
                column=c, regex=UNSIGNED_NUMBER_REGEX, severity=_WARN
            )
            for c in ("perplexity_first", "perplexity_second")
        ),
        gxe.ExpectCompoundColumnsToBeUnique(
            column_list=list(KINDS["pairwise_judgments"].key), severity=_WARN
        ),
    ]
    suite["base_inputs__perturbation_judgments"] += [
        gxe.ExpectColumnValuesToMatchRegex(
            column="condition", regex=CONDITION_REGEX, severity=_WARN
        ),
        gxe.ExpectColumnValuesToMatchRegex(column="score", regex=NUMBER_REGEX, severity=_WARN),
        gxe.ExpectCompoundColumnsToBeUnique(
            column_list=list(KINDS["perturbation_judgments"].key), severity=_WARN
        ),
    ]
    # A header-only judge_ratings is legal (pairwise-only data such as the
    # self-recognition import): reported, not a failure.
    suite["base_inputs__judge_ratings"].append(
        gxe.ExpectTableRowCountToBeBetween(min_value=1, severity=_WARN)
    )
    return suite


def _between(
    column: str, low: float | None = None, high: float | None = None
) -> gxe.ExpectColumnValuesToBeBetween:
    """Critical: the column's computed values lie in [low, high], within the
    tolerance of computed doubles (judge_bias.warehouse.floats, as dbt's checks)."""
    return gxe.ExpectColumnValuesToBeBetween(
        column=column,
        min_value=None if low is None else low - float_tolerance(low, low),
        max_value=None if high is None else high + float_tolerance(high, high),
        severity=_CRIT,
    )


def _unit(column: str) -> gxe.ExpectColumnValuesToBeBetween:
    """Critical: the column's values lie in [0, 1]."""
    return _between(column, 0.0, 1.0)


def _mart_suite() -> dict[str, list[gxe.Expectation]]:
    return {
        "fct_judge_ratings": [
            gxe.ExpectTableRowCountToBeBetween(min_value=1, severity=_WARN),
            *(gxe.ExpectColumnValuesToNotBeNull(column=c, severity=_CRIT) for c in FACT_KEY),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=list(FACT_KEY), severity=_CRIT),
            _unit("judge_score_norm"),
            _unit("human_score_norm"),
            _between("length_feature", -1.0, 1.0),
            gxe.ExpectColumnValuesToBeInSet(
                column="framing", value_set=["positive", "inverted"], severity=_CRIT
            ),
            gxe.ExpectColumnValuesToNotBeNull(column="judge_family", severity=_CRIT),
            gxe.ExpectColumnValuesToNotBeNull(column="model_family", severity=_CRIT),
            # A rating with no human reference cannot enter the bias regressions.
            gxe.ExpectColumnValuesToNotBeNull(column="human_score_norm", severity=_WARN),
        ],
        "agg_judge_model_scores": [
            gxe.ExpectCompoundColumnsToBeUnique(
                column_list=["judge", "model", "dimension"], severity=_CRIT
            ),
            _unit("mean_judge_score_norm"),
            _unit("mean_human_score_norm"),
            gxe.ExpectColumnValuesToBeBetween(column="n", min_value=1, severity=_CRIT),
        ],
        "rejected_rows": [
            gxe.ExpectColumnValuesToNotBeNull(column="reason", severity=_CRIT),
            gxe.ExpectColumnValuesToBeInSet(
                column="reason_code", value_set=list(REASON_CODES), severity=_CRIT
            ),
        ],
        "bias_estimates": [
            gxe.ExpectColumnValuesToBeInSet(
                column="analysis", value_set=list(ANALYSES), severity=_CRIT
            ),
            gxe.ExpectColumnValuesToBeInSet(
                column="term_type", value_set=list(TERM_TYPES), severity=_CRIT
            ),
            gxe.ExpectColumnValuesToNotBeNull(column="estimate", severity=_CRIT),
            _between("std_error", low=0.0),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="ci_high", column_B="ci_low", or_equal=True, severity=_CRIT
            ),
        ],
        "bias_fits": [
            gxe.ExpectColumnValuesToBeInSet(
                column="analysis", value_set=list(ANALYSES), severity=_CRIT
            ),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["analysis", "slice"], severity=_CRIT),
        ],
        # The pairwise marts may be empty (no pairwise or perturbation file).
        "pairwise_bias": [
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["judge", "opponent"], severity=_CRIT),
            *(_unit(c) for c in PAIRWISE_RATES),
            _between("eo_bias", -1.0, 1.0),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="n_pairs", column_B="n_swapped_pairs", or_equal=True, severity=_CRIT
            ),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="length_slope_ci_high",
                column_B="length_slope_ci_low",
                or_equal=True,
                severity=_CRIT,
            ),
        ],
        "pairwise_perplexity_bins": [
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["judge", "bin"], severity=_CRIT),
            _unit("judge_first_rate"),
            _unit("human_first_rate"),
        ],
        "perturbation_bias": [
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["judge", "bias_type"], severity=_CRIT),
            *(_unit(c) for c in PERTURBATION_RATES),
            _between("error_rate", low=0.0),
            gxe.ExpectColumnValuesToBeBetween(column="n_items", min_value=1, severity=_CRIT),
        ],
        "input_row_counts": [
            gxe.ExpectColumnPairValuesToBeEqual(
                column_A="rows_read", column_B="rows_accounted", severity=_CRIT
            ),
            # The publishing gates (thresholds: dbt vars, carried by the table).
            # A file with rows and none accepted (share 1; null when no rows). The
            # gate_* columns: the whole file, or an incremental build's load.
            gxe.ExpectColumnValuesToBeBetween(
                column="gate_rejected_share",
                min_value=0.0,
                max_value=1.0,
                strict_max=True,
                severity=_CRIT,
            ),
            *(
                gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                    column_A=threshold,
                    column_B="gate_rejected_share",
                    or_equal=True,
                    ignore_row_if="either_value_is_missing",
                    severity=severity,
                )
                for threshold, severity in (
                    ("max_rejected_share", _CRIT),
                    ("warn_rejected_share", _WARN),
                )
            ),
        ],
    }


SUITES: dict[str, dict[str, list[gxe.Expectation]]] = {}


def suites() -> dict[str, dict[str, list[gxe.Expectation]]]:
    """The registered suites: suite name -> table -> expectations."""
    if not SUITES:
        SUITES.update({"inputs": _input_suite(), "marts": _mart_suite()})
    return SUITES
