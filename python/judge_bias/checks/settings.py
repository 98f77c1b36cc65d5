"""The defaults of `judge-bias check`, here and only here: its exit code, the permissive
default policy, and the marts and columns each rule reads (the drift marts' names are
agreed with the `drift` branch: /work/notes/drift.md, docs/check.md)."""

from __future__ import annotations

from typing import Any

# A finding is not a crash: check exits 3 when a rule fails, 0 when none does; usage
# and input errors keep 2 and failed builds or unexpected errors 1 (judge_bias.errors,
# the one home of every exit code).
from judge_bias.errors import EXIT_FINDINGS as EXIT_FINDINGS

# The policy used without --policy: permissive, it fails only on gross problems (the
# demo data, with its planted self-bias of 0.15, passes it). docs/check.md shows it
# with a strict example.
DEFAULT_POLICY: dict[str, Any] = {
    "rules": {
        "self_bias": {"max": 0.25},
        "family_bias": {"max": 0.25},
        "position_consistency": {"min": 0.5, "column": "position_consistency_ci_high"},
        "drift": {},
        "flip_rate": {"max": 0.25, "column": "flip_rate_ci_low"},
    }
}

# What each rule reads: the mart, its judge column, and the value column by default.
BIAS_MART = "bias_estimates"
AGREEMENT_MART = "agreement_binary"  # the drift branch's pass/fail agreement (issue 31 item 4)
ACCURACY_COLUMN = "accuracy_ci_high"  # the upper bound of its accuracy
PAIRWISE_MART = "pairwise_bias"
POSITION_COLUMN = "position_consistency"
DRIFT_MART = "judge_drift"
DRIFT_JUDGE = "judge_after"
DRIFT_COLUMNS = ("judge_before", "judge_after", "dimension", "drift_flag", "drift_reasons",
                 "mean_shift", "mean_shift_ci_low", "mean_shift_ci_high",
                 "pass_flip_rate")  # fmt: skip
STABILITY_MART = "judge_stability"
FLIP_COLUMN = "flip_rate"
COMPARISONS_MART = "model_comparisons"
SEVERITIES = ("error", "warning")  # a warning is printed, never changes the exit code
