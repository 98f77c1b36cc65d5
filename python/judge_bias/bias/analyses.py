"""The registry of bias analyses run on fct_judge_ratings.

Each analysis is a named function from the fit inputs and the settings to a
list of fits; adding one means registering one function here. The inputs are
not rows but sufficient statistics (judge_bias.bias.sufficient), which the
warehouse aggregates (models/intermediate/bias/) and which ``inputs_from_fact``
computes in memory from a fact-table DataFrame. Every analysis uses
positive-frame ratings with both a judge and a human score (the inverted frame
is measured by the self-vs-peer tests).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from judge_bias.bias.fit_inputs import (
    FACT_COLUMNS,
    GRAIN,
    KEPT_MODELS,
    ORDINAL_COLUMNS,
    RATING_BYTES,
    FitInputs,
    completion_mean_se,
    completion_means,
    inputs_from_fact,
    inputs_from_tables,
    llm_reference_data,
    prepare,
    read_statistics,
    to_12_digits,
    weakest_models,
    with_llm_references,
)
from judge_bias.bias.gam import fit_gam
from judge_bias.bias.ordinal import fit_ordinal
from judge_bias.bias.regression import (
    ESTIMATE_COLUMNS,
    FIT_COLUMNS,
    NO_ROWS,
    FitOutput,
    Spec,
    fit_bias_regression,
)
from judge_bias.bias.settings import Settings, settings_from_config
from judge_bias.bias.sufficient import n_rows

Analysis = Callable[[FitInputs, Settings], list[FitOutput]]


ANALYSES: dict[str, Analysis] = {}


def register(name: str) -> Callable[[Analysis], Analysis]:
    def wrap(fn: Analysis) -> Analysis:
        ANALYSES[name] = fn
        return fn

    return wrap


def _fit(df: pd.DataFrame, s: Settings, analysis: str, slice_: str = "all", **kw) -> FitOutput:
    return fit_bias_regression(
        df, analysis, slice_, se_type=s.se_type, ci_level=s.ci_level,
        min_support=s.min_term_support, budget=s.budget, **kw,
    )  # fmt: skip


def _too_many(s: Settings, analysis: str, n_fits: int, what: str) -> list[FitOutput] | None:
    """One skipped fit (slice ``all``) with the note, when the analysis would run more
    than max_fits fits; None when it may run them. No fit was run: model_type none
    (bias_fits' yml), as an empty fit's, whatever the analysis fits otherwise."""
    note = s.budget.fits(analysis, n_fits, what)
    if note is None:
        return None
    fit: dict[str, object] = {
        "analysis": analysis, "slice": "all", "model_type": "none", "n_obs": None,
        "n_params": 0, "r_squared": None, "se_type": s.se_type, "ci_level": s.ci_level,
        "notes": note,
    }  # fmt: skip
    return [FitOutput(pd.DataFrame(columns=ESTIMATE_COLUMNS), fit)]


@register("main")
def main(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    return [_fit(inputs.human, s, "main")]


def _by(df: pd.DataFrame, s: Settings, analysis: str, column: pd.Series, spec: Spec) -> list:
    if len(df) == 0:  # no rows at all: run_analyses says why, not "no dimension"
        return [_fit(df, s, analysis)]
    if column.isna().all():
        return [_fit(df.iloc[:0], s, analysis, extra_notes=[f"no {analysis[3:]} in the data"])]
    skipped = _too_many(s, analysis, column.nunique(), analysis[3:].replace("_", " "))
    if skipped:
        return skipped
    out = []
    for value in sorted(column.dropna().unique()):
        out.append(_fit(df[column == value], s, analysis, str(value), spec=spec))
    if column.isna().any():
        out[0].fit["notes"] = "; ".join(
            filter(
                None,
                [str(out[0].fit["notes"] or ""), f"{n_rows(df[column.isna()])} rows with no value"],
            )
        )
    return out


@register("by_dimension")
def by_dimension(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    df = inputs.human
    return _by(df, s, "by_dimension", df["dimension"], Spec(dimension_effects=False))


@register("by_dataset")
def by_dataset(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    df = inputs.human
    return _by(df, s, "by_dataset", df["dataset"], Spec())


@register("by_task_group")
def by_task_group(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    """Slices by the task_groups var (dataset -> group), else by prompts.task_type."""
    df = inputs.human
    group = df["dataset"].map(s.task_groups) if s.task_groups else df["task_type"]
    return _by(df, s, "by_task_group", group, Spec())


@register("length_controlled")
def length_controlled(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    return [_fit(inputs.human, s, "length_controlled", spec=Spec(length=True))]


@register("ordinal")
def ordinal(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    df = inputs.ordinal
    dims = sorted(df["dimension"].unique())
    skipped = _too_many(s, "ordinal", len(dims), "dimension")
    if skipped:
        return skipped
    return [
        fit_ordinal(
            df[df["dimension"] == d], "ordinal", str(d), s.ci_level, s.budget, s.min_term_support
        )
        for d in dims
    ]


@register("gam")
def gam(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    """The main fit with a per-judge cubic spline of the reference (judge_bias.bias.gam)."""
    if inputs.reference_note:  # skipped (no fit run): model_type none
        fit: dict[str, object] = {
            "analysis": "gam", "slice": "all", "model_type": "none", "n_obs": None,
            "n_params": 0, "r_squared": None, "se_type": s.se_type, "ci_level": s.ci_level,
            "notes": inputs.reference_note,
        }  # fmt: skip
        return [FitOutput(pd.DataFrame(columns=ESTIMATE_COLUMNS), fit)]
    stats = inputs.human if inputs.reference_stats is None else inputs.reference_stats
    return [fit_gam(stats, s.se_type, s.ci_level, s.min_term_support, s.budget, s.gam_knots)]


def llm_reference_note(human: pd.DataFrame, llm: pd.DataFrame, family: str) -> str:
    """What the llm_reference fit of ``family`` removed, counted on the statistics."""
    by_family = human["judge_family"] == family
    rest = human[~by_family & (human["model_family"] != family)]
    return (
        f"reference = mean score of the {family} judges; removed "
        f"{n_rows(human[by_family])} ratings by {family} judges and "
        f"{n_rows(human[~by_family & (human['model_family'] == family)])} "
        f"further ratings of {family} completions; {n_rows(rest) - n_rows(llm)} ratings of "
        f"completions the {family} judges did not rate"
    )


@register("llm_reference")
def llm_reference(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    out = []
    human = inputs.human
    families = sorted(human["judge_family"].unique())
    skipped = _too_many(s, "llm_reference", len(families), "judge family")
    if skipped:
        return skipped
    for family in families:
        data = inputs.llm(family)
        note = llm_reference_note(human, data, family)
        out.append(_fit(data, s, "llm_reference", family, extra_notes=[note]))
    return out


def _digits(x: float, spec: str) -> str:
    """``x`` formatted with ``spec`` after rounding to 12 significant digits, so that
    the last bits of a sum (which DuckDB may add in any order) cannot flip a printed
    digit: 0.9650087499999997 and 0.9650087500000001 both print as 0.9650087."""
    return format(to_12_digits(x), spec)


def weakest_note(model_means: pd.Series, model_se: pd.Series | None, removed: list[str]) -> str:
    """Which models were removed, their mean human scores, and the margin to the
    first model kept; a warning when that margin is within the standard error of
    the difference of the two means (the choice could go either way)."""
    if not removed:
        return "no model removed: no model has a mean human score"
    model_means = model_means.map(to_12_digits)  # ranked as weakest_models ranks them
    ranked = model_means.sort_index().sort_values(kind="stable")
    scores = ", ".join(
        f"{m} ({_digits(model_means[m], '.7g')})" for m in removed if m in model_means
    )
    note = f"removed the weakest models by mean human score: {scores or ', '.join(removed)}"
    kept = [m for m in ranked.index if m not in removed]
    inside = [m for m in removed if m in model_means]
    if not kept or not inside:
        return note
    last = max(inside, key=lambda m: model_means[m])
    first_kept = kept[0]
    margin = model_means[first_kept] - model_means[last]
    note += (
        f"; the first model kept, {first_kept} ({_digits(model_means[first_kept], '.7g')}), is "
        f"{_digits(margin, '.2g')} above {last}"
    )
    if model_se is not None and last in model_se and first_kept in model_se:
        se = float(np.hypot(model_se[last], model_se[first_kept]))
        if np.isfinite(se) and abs(margin) <= se:
            note += (
                f"; WARNING: that margin is within the standard error of the difference of "
                f"the means ({_digits(se, '.2g')}): which models are the weakest is not clear "
                "from the data; set weakest_models to choose them"
            )
    return note


@register("without_weakest")
def without_weakest(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    df = inputs.human
    weakest = weakest_models(inputs.model_means, s)
    data = df[~df["model"].isin(weakest)]
    removed = (
        f"removed the completions of {', '.join(weakest)} ({n_rows(df) - n_rows(data)} ratings)"
        if weakest
        else "no model to remove (no model means: no ratings with a human reference)"
    )
    notes = [removed]
    if weakest and not s.weakest_models:  # chosen from the data: how clear is the choice?
        notes.append(weakest_note(inputs.model_means, inputs.model_se, weakest))
    return [_fit(data, s, "without_weakest", extra_notes=notes)]


def leave_one_out_data(df: pd.DataFrame, model: str) -> pd.DataFrame:
    """Rows left when ``model`` is removed both as generator and as judge."""
    return df[(df["model"] != model) & (df["judge"] != model)]


@register("leave_one_out")
def leave_one_out(inputs: FitInputs, s: Settings) -> list[FitOutput]:
    out = []
    df = inputs.human
    left_out = sorted(set(df["model"].dropna()) | set(df["judge"]))
    n_fits = len(left_out) if inputs.n_left_out is None else inputs.n_left_out
    skipped = _too_many(s, "leave_one_out", n_fits, "model or judge left out")
    if skipped:
        return skipped
    for m in left_out:
        data = leave_one_out_data(df, m)
        note = f"removed {n_rows(df) - n_rows(data)} ratings where model or judge is {m}"
        out.append(_fit(data, s, "leave_one_out", m, extra_notes=[note]))
    return out


def run_analyses(
    inputs: FitInputs | pd.DataFrame, settings: Settings, names: list[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every registered analysis (or ``names``): (estimates, fits) tables.

    ``inputs`` are the warehouse's statistics, or a fct_judge_ratings DataFrame."""
    if isinstance(inputs, pd.DataFrame):
        inputs = inputs_from_fact(inputs, settings.se_type)
    fits: list[FitOutput] = []
    for name in names or list(ANALYSES):
        done = ANALYSES[name](inputs, settings)
        if len(inputs.human) == 0:
            done = _without_reference(done, name, settings)
        fits += done
    estimates = pd.concat(
        [f.estimates for f in fits if len(f.estimates)] or [pd.DataFrame(columns=ESTIMATE_COLUMNS)],
        ignore_index=True,
    )
    fit_rows = pd.DataFrame([f.fit for f in fits], columns=FIT_COLUMNS)
    return estimates, fit_rows


# the fits' rows: positive-frame ratings with a readable score (judge_score_norm not
# null) and a human label on the same prompt, model and dimension (fit_inputs.prepare,
# int_bias_ratings); none, whether the labels are on other items, every rating is in
# the inverted frame or every judge output is unreadable
NO_REFERENCE = (
    "no positive-frame judge score has a human reference (the fits read ratings in the "
    "positive frame with a readable score, judge_score_norm, and a human label on the "
    "same prompt, model and dimension): nothing to fit"
)


def _without_reference(fits: list[FitOutput], name: str, s: Settings) -> list[FitOutput]:
    """The fits of an analysis when no rating has a human reference: each empty fit's
    note, or one fit row saying so when the analysis returned none (leave_one_out,
    llm_reference and ordinal have nothing to loop over), never a silent absence."""
    if not fits:
        fit: dict[str, object] = {
            "analysis": name, "slice": "all", "model_type": "none", "n_obs": 0,
            "n_params": 0, "r_squared": None, "se_type": s.se_type,
            "ci_level": s.ci_level, "notes": NO_REFERENCE,
        }  # fmt: skip
        return [FitOutput(pd.DataFrame(columns=ESTIMATE_COLUMNS), fit)]
    for f in fits:
        if not f.fit.get("n_obs"):
            # no fit possible: model_type none (as bias_fits' yml defines it), and the
            # empty fit's own "no estimates: no rows" repeats what the note says
            parts = str(f.fit["notes"] or "").split("; ")
            kept = [n for n in parts if n and n != NO_ROWS]
            f.fit["notes"] = "; ".join([NO_REFERENCE, *kept])
            f.fit["model_type"] = "none"
    return fits


def skipped_analyses(note: str, settings: Settings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimates, fits) when no analysis can run: one fit row per analysis, with the note."""
    fits = pd.DataFrame(
        [
            {"analysis": name, "slice": "all", "model_type": "none", "n_params": 0,
             "se_type": settings.se_type, "ci_level": settings.ci_level, "notes": note}
            for name in ANALYSES
        ],
        columns=FIT_COLUMNS,
    )  # fmt: skip
    return pd.DataFrame(columns=ESTIMATE_COLUMNS), fits


def results_long(estimates: pd.DataFrame, fits: pd.DataFrame) -> pd.DataFrame:
    """Both tables in one (record_type 'estimate' or 'fit'), for one dbt Python model."""
    est = estimates.assign(record_type="estimate")
    fit = fits.assign(record_type="fit")
    out = pd.concat([est, fit], ignore_index=True, sort=False)
    for col in ("estimate", "std_error", "z", "p_value", "ci_low", "ci_high", "ci_level"):
        out[col] = out[col].astype(float)
    out["r_squared"] = out["r_squared"].astype(float)
    out["n_obs"] = out["n_obs"].astype("Int64")
    out["n_params"] = out["n_params"].astype("Int64")
    out["n_support"] = out["n_support"].astype("Int64")
    out["significant"] = out["significant"].astype("boolean")
    return out


# The API of the bias analyses (int_bias_results and the tests import from here).
__all__ = [
    "ANALYSES",
    "FACT_COLUMNS",
    "FitInputs",
    "GRAIN",
    "KEPT_MODELS",
    "ORDINAL_COLUMNS",
    "RATING_BYTES",
    "Settings",
    "completion_mean_se",
    "completion_means",
    "inputs_from_fact",
    "inputs_from_tables",
    "llm_reference_data",
    "prepare",
    "read_statistics",
    "register",
    "results_long",
    "run_analyses",
    "settings_from_config",
    "skipped_analyses",
    "weakest_models",
    "with_llm_references",
]
