"""Every requested GLM on every dimension, from the warehouse's count tables,
as one long table the marts split (``output`` names the mart).

A model the data cannot carry, or one over the memory budget, gets a
``skipped`` row in glm_fits with the reason; a fit whose diagnostics fail is
kept with status ``warning`` and its effects carry that status; an error in
one fit is recorded (status ``error``) and the other fits go on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judge_bias.errors import SettingError
from judge_bias.glm.agreement import alpha_draws, summarise_alphas, unit_sample
from judge_bias.glm.compare import (
    CHUNK_BYTES,
    chunk_groups,
    criteria,
    d_elpd_se,
    pointwise,
    rank_models,
    relative_efficiency,
    zero_probability_note,
)
from judge_bias.glm.data import CountData, ordinal_counts, pairwise_counts
from judge_bias.glm.fit import Fit, FitSettings, diagnostics, run_batch, target_accept_of, warmup_of
from judge_bias.glm.lazy import module
from judge_bias.glm.models import MODELS, ModelSpec
from judge_bias.glm.priors import Priors
from judge_bias.glm.summarise import (
    contrast_draws,
    effect_draws,
    summarise,
    triple_draws,
    warnings_to_notes,
)
from judge_bias.limits import Budget
from judge_bias.settings import parse_ci_level, setting

if TYPE_CHECKING:
    from judge_bias.glm import sampler
else:
    # the sampler (JAX) only when a model is fitted
    sampler = module("judge_bias.glm.sampler")

PAIRWISE_DIMENSION = "pairwise"
AGREEMENT_MODELS = ("items", "grader_model", "hierarchical")  # first one fitted is used
# glm_models' default ("default"): the models whose cost fits the build's
# budget (docs/glm.md, "GLM cost"; measured on the demo, cold compilation cache,
# user CPU: grader_model 24 s, pairwise 17 s, grader_type 19 s, hierarchical
# 29 s, pairwise_no_length 13 s, items the most); the others run when asked
# (glm_models: all, or their names; JUDGE_BIAS_GLM_MODELS)
DEFAULT_MODELS = ("grader_model", "pairwise")
# the environment variable that changes glm_models' default (the test suite: none)
MODELS_ENV = "JUDGE_BIAS_GLM_MODELS"


@dataclass(frozen=True)
class GlmConfig:
    models: tuple[str, ...] = DEFAULT_MODELS
    settings: FitSettings = field(default_factory=FitSettings)
    priors: Priors = field(default_factory=Priors)
    agreement_draws: int = 100
    agreement_max_units: int = 2000
    budget: Budget = field(default_factory=Budget)

    @classmethod
    def from_vars(cls, get) -> GlmConfig:
        """From dbt config values (``get(name)``; None means the default)."""
        base = FitSettings()

        def value(name: str, default, cast):
            return setting(get, name, default, cast)

        # the var, else the environment variable, else "default"; a blank value (or
        # 'None', padded) is unset, as macros/glm.sql's glm_input_needed reads it
        requested = value("glm_models", "", lambda v: v)
        if isinstance(requested, str) and requested.strip() in ("", "None"):
            requested = os.environ.get(MODELS_ENV, "").strip() or "default"
        if isinstance(requested, str):
            named = {"all": tuple(MODELS), "none": (), "default": DEFAULT_MODELS}
            requested = named.get(
                requested.strip(), tuple(m.strip() for m in requested.split(",") if m.strip())
            )
        unknown = sorted(set(requested) - set(MODELS))
        if unknown:
            raise SettingError(f"glm_models: unknown model(s) {unknown}; known: {sorted(MODELS)}")
        draws = value("glm_draws", base.draws, int)
        settings = FitSettings(
            draws=draws,
            warmup=value("glm_warmup", base.warmup, int),
            chains=value("glm_chains", base.chains, int),
            seed=value("glm_seed", base.seed, int),
            target_accept=value("glm_target_accept", base.target_accept, float),
            ci_level=value("ci_level", base.ci_level, parse_ci_level),
        )
        return cls(
            models=tuple(requested),
            settings=settings,
            priors=Priors.from_mapping(value("glm_priors", None, lambda v: v)),
            agreement_draws=value("glm_agreement_draws", cls.agreement_draws, int),
            budget=Budget.from_config(get("memory_budget")),
        )


@dataclass
class Inputs:
    rating_counts: pd.DataFrame  # dimension, grader, grader_type, model, score, n
    item_counts: pd.DataFrame  # the same + item
    pairwise_counts: pd.DataFrame  # grader, grader_type, model_first, model_second, ...
    scales: pd.DataFrame  # dimension, score (the scale points)
    families: Mapping[str, str]  # grader or model name -> family
    agreement_rows: pd.DataFrame  # dimension, unit, grader, grader_type, model, item, score
    excluded: pd.DataFrame  # dimension, reason, n: rows the GLMs cannot use
    # why item_counts was not read (the item model over the budget), per dimension
    items_skipped: Mapping[str, str] = field(default_factory=dict)


def fit_bytes(name: str, s: FitSettings, n_graders: int = 0, n_items: int = 0) -> float:
    """Posterior draws in float64 (the sampler runs in double precision,
    glm.sampler): the sampler's unconstrained buffer, the constrained and
    deterministic sites (the item model's raw and scaled grader x item
    effects: 2 copies), the reported effects stacked for the summary and
    ArviZ's copy of them (2): 6 copies of every parameter; plus the pointwise
    log-likelihood and PSIS, which run CHUNK_BYTES at a time (with their
    temporaries: 6 chunks). The item model's grader x item effects are its
    bulk: 2,000 prompts x 9 graders is 20k parameters, 2.0 GB at 2 x 1,000
    draws (the demo, 120 prompts x 9 graders: 0.1 GB). Before the
    log-likelihood was chunked, its (draws x groups x classes) arrays made the
    same fit 7.9 GB."""
    n_draws = s.draws * s.chains
    n_params = 200
    if name == "items":
        n_params += (n_graders + 1) * n_items
    return 8.0 * 6 * n_draws * n_params + 6 * CHUNK_BYTES


def _fit_bytes(spec: ModelSpec, data: CountData, s: FitSettings) -> float:
    return fit_bytes(spec.name, s, data.count("grader"), data.count("item"))


def _fit_row(spec: ModelSpec, dimension: str, data: CountData | None, s: FitSettings) -> dict:
    return {
        "output": "fits",
        "model": spec.name,
        "dimension": dimension,
        "n_obs": data.n_obs if data is not None else 0,
        "n_cells": data.n_groups if data is not None else 0,
        "draws": s.draws,
        "warmup": warmup_of(spec, s),
        "chains": s.chains,
        "seed": s.seed,
        "target_accept": target_accept_of(spec, data, s) if data is not None else s.target_accept,
    }


def _effects(fit: Fit, families: Mapping[str, str], output: str) -> pd.DataFrame:
    parts = [effect_draws(fit), contrast_draws(fit, families)]
    if fit.spec.kind == "binary":
        parts.append(triple_draws(fit))
    draws = {k: v for d, _ in parts for k, v in d.items()}
    labels = [lab for _, ls in parts for lab in ls]
    table = summarise(fit, draws, labels)
    table["output"] = output
    return table


def _checked(spec, dimension, data, config, notes) -> dict | None:
    """The skipped row of a model the data cannot carry or the budget cannot
    hold, else None."""
    s = config.settings
    reason = spec.unsupported(data)
    over = config.budget.over(f"the {spec.name} fit on {dimension}", _fit_bytes(spec, data, s))
    if reason or over:
        row = _fit_row(spec, dimension, data, s)
        row.update(status="skipped", notes="; ".join([*notes, reason or over]))
        return row
    return None


def _rows(spec, dimension, data, fit, config, families, notes) -> list:
    """One fitted model on one dimension: its rows of every output."""
    s = config.settings
    row = _fit_row(spec, dimension, data, s)
    start = time.perf_counter()
    warned: list[str] = []  # ArviZ's RuntimeWarnings, as notes (not in the build log)
    try:
        with warnings_to_notes(warned):
            kind = "effects" if spec.kind == "ordinal" else "pairwise_effects"
            out = _effects(fit, families, kind)
            diag = diagnostics(fit, out[out["parameter"].isin(spec.effects)])
            reff = relative_efficiency(fit.samples)
        n_draws = s.draws * s.chains
        chunks = spec.group_log_lik_chunks(
            fit.flat(), data, chunk_groups(n_draws, data.num_classes)
        )
        terms = pointwise(chunks, reff)
        ic = criteria(terms, data.n, n_draws)
        cells = _cell_keys(data)
        cells["loo_i"], cells["n"] = terms["loo_i"], data.n
    except Exception as exc:  # one failed fit must not stop the others
        row.update(status="error", notes="; ".join([*notes, f"{type(exc).__name__}: {exc}"]))
        return [row]
    status = diag.pop("status")
    fit_notes = [*notes, *fit.notes, diag.pop("diagnostic_notes"), *warned]
    if zero := zero_probability_note(terms, data.n):
        fit_notes.append(zero)
    if not np.isfinite(ic["elpd_loo"]):  # kept and flagged, left out of the ranking
        status = "warning"
        fit_notes.append(
            f"elpd_loo is {ic['elpd_loo']} (a cell's pointwise log-likelihood or PSIS "
            "weights are not finite): not ranked in glm_model_comparison"
        )
    if ic["pareto_k_bad"]:
        fit_notes.append(
            f"{ic['pareto_k_bad']} rows with Pareto k > {ic['pareto_k_limit']:.2f} "
            "(PSIS-LOO unreliable there)"
        )
    row.update(
        diag,
        status=status,
        notes="; ".join(n for n in fit_notes if n),
        seconds=fit.seconds + time.perf_counter() - start,
        sampling_seconds=fit.seconds,
    )
    out["model"], out["dimension"], out["fit_status"] = spec.name, dimension, status
    comparison = {
        "output": "comparison",
        "model": spec.name,
        "dimension": dimension,
        "family_of_models": spec.kind,
        "status": status,
        **ic,
        "_pointwise": cells,
    }
    return [row, comparison, *out.to_dict("records")]


def _cell_keys(data: CountData) -> pd.DataFrame:
    """Every count cell's predictors and outcome by name (for pairing rows
    across models in ``d_elpd_se``)."""
    keys = {"y": data.y}
    for factor, codes in data.codes.items():
        names = data.levels.get(factor)
        keys[factor] = np.asarray(names)[codes] if names is not None else codes
    return pd.DataFrame(keys).drop(columns=["grader_type"], errors="ignore")


def _with_d_elpd_se(comparison: pd.DataFrame) -> pd.DataFrame:
    """se_d_elpd: the standard error of each model's elpd_loo difference from
    the preferred model of its dimension and family (0 for that model)."""
    out = comparison.copy()
    out["se_d_elpd"] = np.nan
    for _, group in out.groupby(["dimension", "family_of_models"]):
        preferred = group.loc[group["preferred"], "_pointwise"]
        if preferred.empty:  # no model of the group has a finite elpd_loo
            continue
        for index, cells in group["_pointwise"].items():
            if pd.isna(out.at[index, "rank"]):
                continue
            same = bool(out.at[index, "preferred"])
            out.at[index, "se_d_elpd"] = 0.0 if same else d_elpd_se(preferred.iloc[0], cells)
    return out.drop(columns="_pointwise")


def _fit_all(spec, jobs, config, families) -> tuple[list, dict[str, Fit]]:
    """``spec`` on every (dimension, data, notes) of ``jobs``: the dimensions
    the model can take are sampled together (``run_batch``)."""
    records: list[dict] = []
    todo = []
    for dimension, data, notes in jobs:
        skipped = _checked(spec, dimension, data, config, notes)
        if skipped:
            records.append(skipped)
        else:
            todo.append((dimension, data, notes))
    fits: dict[str, Fit] = {}
    if not todo:
        return records, fits
    try:
        batch = run_batch(spec, [d for _, d, _ in todo], config.priors, config.settings)
    except Exception as exc:  # one failed model must not stop the others
        for dimension, data, notes in todo:
            row = _fit_row(spec, dimension, data, config.settings)
            row.update(status="error", notes="; ".join([*notes, f"{type(exc).__name__}: {exc}"]))
            records.append(row)
        return records, fits
    for (dimension, data, notes), fit in zip(todo, batch, strict=True):
        rows = _rows(spec, dimension, data, fit, config, families, notes)
        records += rows
        if rows[0].get("status") in ("ok", "warning"):
            fits[dimension] = fit
    return records, fits


def _ordinal_data(inputs: Inputs, dimension: str, with_items: bool) -> CountData:
    table = inputs.item_counts if with_items else inputs.rating_counts
    counts = table[table["dimension"] == dimension]
    scale = inputs.scales.loc[inputs.scales["dimension"] == dimension, "score"]
    return ordinal_counts(counts, sorted(scale.astype(float).unique()), dimension)


def _agreement_rows(inputs: Inputs, dimension: str, config: GlmConfig) -> pd.DataFrame:
    rows = inputs.agreement_rows[inputs.agreement_rows["dimension"] == dimension]
    keep = unit_sample(
        rows[["dimension", "unit"]], config.agreement_max_units, config.settings.seed
    )
    return rows[rows["unit"].isin(keep["unit"])]


def _not_requested(config: GlmConfig, dimensions: list[str]) -> list[dict]:
    """A ``not requested`` row in glm_fits for each model left out of glm_models,
    so the mart says the GLMs were off rather than being empty."""
    rows = []
    for name, spec in MODELS.items():
        if name in config.models:
            continue
        for dimension in dimensions if spec.kind == "ordinal" else [PAIRWISE_DIMENSION]:
            row = _fit_row(spec, dimension, None, config.settings)
            asked = ",".join(config.models) or "none"
            note = f"not in glm_models ({asked})"
            if config.models == DEFAULT_MODELS:
                note += (
                    '; off by default for its cost (docs/glm.md, "GLM cost"): turn it on with '
                    f"--vars '{{glm_models: {','.join([*DEFAULT_MODELS, name])}}}' "
                    "(or all), or JUDGE_BIAS_GLM_MODELS=all"
                )
            row.update(status="not requested", notes=note)
            rows.append(row)
    return rows


def run_glms(inputs: Inputs, config: GlmConfig) -> pd.DataFrame:
    """Every requested model on every dimension: one long table."""
    if config.models:  # the compiled samplers persist across builds
        sampler.compilation_cache()
    records: list[dict] = []
    excluded = inputs.excluded
    dimensions = sorted(inputs.rating_counts["dimension"].unique())
    records += _not_requested(config, dimensions)
    notes = {
        dimension: [
            f"{int(r.n)} rows left out: {r.reason}"
            for r in excluded[excluded["dimension"] == dimension].itertuples()
        ]
        for dimension in [*dimensions, PAIRWISE_DIMENSION]
    }
    fits: dict[str, dict[str, Fit]] = {}
    for name in config.models:
        spec = MODELS[name]
        if spec.kind != "ordinal":
            continue
        skipped = inputs.items_skipped if name == "items" else {}
        for d in sorted(set(dimensions) & set(skipped)):
            row = _fit_row(spec, d, None, config.settings)
            n_obs = inputs.rating_counts.loc[inputs.rating_counts["dimension"] == d, "n"].sum()
            row.update(
                n_obs=int(n_obs), n_cells=None, status="skipped",
                notes="; ".join([*notes[d], skipped[d]]),
            )  # fmt: skip
            records.append(row)
        jobs = [
            (d, _ordinal_data(inputs, d, with_items=name == "items"), notes[d])
            for d in dimensions
            if d not in skipped
        ]
        rows, fits[name] = _fit_all(spec, jobs, config, inputs.families)
        records += rows
    for dimension in dimensions:
        chosen = next((m for m in AGREEMENT_MODELS if dimension in fits.get(m, {})), None)
        if chosen:
            rows = _agreement_rows(inputs, dimension, config)
            fit = fits[chosen][dimension]
            observed, by_kind = alpha_draws(fit, rows, config.agreement_draws, config.settings.seed)
            table = summarise_alphas(observed, by_kind, rows, "ordinal")
            table["output"], table["model"], table["dimension"] = "agreement", chosen, dimension
            records += table.to_dict("records")
            records += [
                {
                    "output": "agreement_draws",
                    "model": chosen,
                    "dimension": dimension,
                    "kind": kind,
                    "draw": i,
                    "alpha": float(a),
                }  # fmt: skip
                for kind, values in by_kind.items()
                for i, a in enumerate(values)
            ]
    pairwise = [m for m in config.models if MODELS[m].kind == "binary"]
    if pairwise and len(inputs.pairwise_counts):
        counts = inputs.pairwise_counts
        with_x = counts[counts["length_diff"].notna()]
        # all models of the comparison must see the same rows: with any
        # length differences, the rows without one are left out of both
        use = with_x if len(with_x) else counts
        extra = notes[PAIRWISE_DIMENSION] + (
            [
                f"{int(counts['n'].sum() - with_x['n'].sum())} rows without a "
                "length difference left out"
            ]
            if len(with_x) and len(with_x) < len(counts)
            else []
        )
        data = pairwise_counts(use, PAIRWISE_DIMENSION)
        for name in pairwise:
            rows, _ = _fit_all(
                MODELS[name], [(PAIRWISE_DIMENSION, data, extra)], config, inputs.families
            )
            records += rows
    result = pd.DataFrame.from_records(records)
    if result.empty:
        return result
    comparison = result["output"] == "comparison"
    if comparison.any():
        ranked = rank_models(result[comparison], ["dimension", "family_of_models"])
        ranked = _with_d_elpd_se(ranked)
        result = pd.concat([result[~comparison], ranked], ignore_index=True)
    return result
