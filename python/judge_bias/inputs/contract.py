"""The input contract: one directory, one file per kind (CSV or Parquet).

This module is the single source of truth for which files exist, which
columns they carry and which columns form their key. The loader, the
simulator, the importers and the validation suite all read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputKind:
    """One kind of input file."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    # At least one column of each group must be present (e.g. label or raw_output).
    one_of: tuple[tuple[str, ...], ...] = ()
    key: tuple[str, ...] = ()
    description: str = ""
    is_required_file: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        """Every contract column, in contract order."""
        grouped = tuple(c for group in self.one_of for c in group)
        seen: list[str] = []
        for col in (*self.required, *grouped, *self.optional):
            if col not in seen:
                seen.append(col)
        return tuple(seen)


KINDS: dict[str, InputKind] = {
    kind.name: kind
    for kind in (
        InputKind(
            name="prompts",
            required=("prompt_id",),
            optional=("dataset", "task_type", "prompt_text"),
            key=("prompt_id",),
            description="One row per prompt.",
        ),
        InputKind(
            name="completions",
            required=("prompt_id", "model"),
            optional=("completion_text", "length_tokens"),
            key=("prompt_id", "model"),
            description="One row per prompt x generating model.",
        ),
        InputKind(
            name="human_annotations",
            required=("prompt_id", "model", "dimension", "annotator_id", "label"),
            # n_aggregated: the label is already a mean over this many annotators
            # (e.g. Play Favorites' gt is a mean of three). role: annotator (default)
            # or expert; expert labels are the gold standard, kept out of the
            # human reference and used for the gold range and accuracy.
            optional=("n_aggregated", "role"),
            key=("prompt_id", "model", "dimension", "annotator_id"),
            description="One row per prompt x model x dimension x annotator.",
        ),
        InputKind(
            name="judge_ratings",
            required=("judge", "prompt_id", "model", "dimension"),
            one_of=(("label", "raw_output"),),
            optional=("framing", "run_id"),
            key=("judge", "prompt_id", "model", "dimension", "framing", "run_id"),
            description="One row per judge x prompt x model x dimension x framing x run.",
            is_required_file=True,
        ),
        InputKind(
            name="pairwise_judgments",
            required=("judge", "prompt_id", "model_first", "model_second", "verdict"),
            # verdict: first, second or tie (also 1/2, A/B, draw/equal/=, any case).
            # p_first: the judge's probability for the first slot (0..1);
            # perplexity_*: each completion's perplexity under the judge (> 0).
            optional=(
                "p_first",
                "human_verdict",
                "run_id",
                "perplexity_first",
                "perplexity_second",
            ),
            key=("judge", "prompt_id", "model_first", "model_second", "run_id"),
            description="One row per judge x prompt x ordered pair x run.",
        ),
        InputKind(
            name="perturbation_judgments",
            required=("judge", "item_id", "bias_type", "condition"),
            one_of=(("verdict", "score"),),
            # condition: original, repeat (identical rerun) or perturbed.
            # ground_truth: the correct verdict (text) or the reference score (number).
            optional=("ground_truth", "run_id"),
            key=("judge", "item_id", "bias_type", "condition", "run_id"),
            description="One row per judge x item x bias type x condition x run.",
        ),
        InputKind(
            name="models",
            required=("alias", "model", "family"),
            # previous_version: the alias or name of the judge this model is a new
            # version of (judge_drift compares the two on the items both rated).
            optional=("previous_version",),
            key=("alias",),
            description="Model aliases to canonical model names and families.",
        ),
        InputKind(
            name="rating_scales",
            required=("dimension", "label", "score"),
            # scale_level: nominal, ordinal or interval, the level of measurement of the
            # headline Krippendorff alpha; absent or empty means interval (as before)
            optional=("is_na", "scale_level"),
            key=("dimension", "label"),
            description="Label vocabulary and numeric score per dimension.",
        ),
    )
}

# CSV (RFC 4180, UTF-8; judge_bias.inputs.csv_records), gzipped CSV or Parquet.
FILE_SUFFIXES: tuple[str, ...] = (".csv", ".csv.gz", ".parquet")
# Files a data folder may hold beside the contract files without a warning:
# the simulator's table of planted values, a description of the folder.
NON_CONTRACT_FILES: tuple[str, ...] = ("truth.csv", "README.md", "README.txt", "README")


# Every reason a row can be rejected for (rejected_rows.reason_code). The dbt
# accepted_values tests on reason_code and reject_code repeat this list; the test
# tests/test_project_rules.py::test_reason_codes_have_one_list checks they agree.
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
