"""Put the doctor together: sample, format, columns, what the data holds, the marts
it fills and cannot fill, and the human labels a precision needs."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from judge_bias.agreement import SELF_VS_PEER_NEEDS
from judge_bias.doctor import budget, settings
from judge_bias.doctor.columns import Column, as_number, is_scored, profile
from judge_bias.doctor.formats import Format, detect
from judge_bias.doctor.sample import Sample, read_sample
from judge_bias.errors import InputError
from judge_bias.inputs.importers import IMPORTERS
from judge_bias.inputs.importers._records import get_path

PAIR_COLUMNS = (
    ("model_first", "model_second"), ("generator_1", "generator_2"), ("model_a", "model_b"),
    ("model_1", "model_2"), ("LLM_1", "LLM_2"),
)  # fmt: skip


@dataclass
class Budget:
    """The label budget, and where its inputs came from."""

    lines: list[str] = field(default_factory=list)
    human_only: int | None = None
    ppi: int | None = None
    regression: int | None = None
    have: int = 0  # labelled units per cell in the file
    figures: dict[str, float] = field(default_factory=dict)  # the inputs, for checks


@dataclass
class Diagnosis:
    """What ``judge-bias doctor`` found in one file."""

    sample: Sample
    format: Format | None
    columns: dict[str, Column]
    holds: dict[str, bool]
    n_judges: int
    n_models: int
    fills: list[str]
    cannot: list[str]
    budget: Budget


def _first(columns: dict[str, Column], kind: str, numeric: bool = False) -> Column | None:
    found = [c for c in columns.values() if c.kind == kind]
    if numeric:
        found = [c for c in found if is_scored(c)]
    return max(found, key=lambda c: c.n_present, default=None)


def _norm(name: str) -> str:
    return name.lower().split("/")[-1].strip()


def infer_holds(columns: dict[str, Column], sample: Sample, fmt: Format | None) -> dict[str, bool]:
    """What the data holds, from its columns, then the format's known facts."""
    kinds = Counter(c.kind for c in columns.values())
    judge, model = _first(columns, "judge"), _first(columns, "model")
    names = set(columns)
    pairwise = any(set(p) <= names for p in PAIR_COLUMNS) or (
        kinds["verdict"] > 0 and kinds["score"] == 0
    )
    self_named = bool(
        judge and model and {_norm(v) for v in judge.distinct} & {_norm(v) for v in model.distinct}
    )
    annotator = _first(columns, "annotator")
    # graders named Human... in the judge column (HiBayes, MT-Bench human votes)
    human_graders = bool(judge and any(v.lower().startswith("human") for v in judge.distinct))
    holds = {
        "judge_scores": kinds["score"] > 0 or (kinds["verdict"] > 0 and not pairwise),
        "human": kinds["human"] > 0 or human_graders,
        "pairwise": pairwise,
        "both_orders": False,
        "human_verdict": pairwise and kinds["human"] > 0,
        "self": self_named,
        "annotators": kinds["human"] > 0 and annotator is not None and annotator.n_distinct > 1,
        "length": kinds["length"] > 0,
        "repeats": any(c.kind == "run" and c.n_distinct > 1 for c in columns.values()),
        "perturbation": {"bias_type", "condition"} <= names,
        "framing": "framing" in names,
    }
    if fmt is not None:
        holds.update(fmt.holds)
        if fmt.holds_of is not None:
            holds.update(fmt.holds_of(sample))
    return holds


def marts(holds: dict[str, bool], n_judges: int) -> tuple[list[str], list[str]]:
    """The marts the data fills, and those it cannot with the reason."""
    fills: list[str] = []
    cannot: list[str] = []

    def need(ok: bool, names: str, why: str) -> None:
        (fills if ok else cannot).append(names if ok else f"{names}: {why}")

    scores, human = holds["judge_scores"], holds["human"]
    need(scores, "fct_judge_ratings, agg_judge_model_scores", "no judge scores")
    need(scores and human, "agreement_judge_human, ppi_model_scores, model_comparisons",
         "no human labels beside the judge scores" if scores else "no judge scores")  # fmt: skip
    need(scores and human, "bias_estimates, bias_fits, debiased_scores, debiased_leaderboard",
         "no human labels: no bias regression" if scores else "no judge scores")  # fmt: skip
    if scores and human:
        need(holds["self"], "bias_estimates self terms",
             "no judge rates its own model: family terms only (when families match)")  # fmt: skip
        need(holds["length"], "bias_estimates length_controlled", "no length column")
    need(holds["annotators"], "agreement_annotators", "fewer than two annotators per item")
    need(scores and n_judges > 1, "glm_effects, glm_fits, glm_agreement",
         "needs two or more judges' scores")  # fmt: skip
    need(scores and holds["self"] and n_judges > 1, "self_vs_peer_tests",
         f"needs {SELF_VS_PEER_NEEDS}")  # fmt: skip
    need(holds["repeats"], "judge_stability", "no rerun (run id) column")
    if holds["pairwise"]:
        fills.append("pairwise_bias, pairwise_joint_bias (first-slot rate)")
        need(holds["both_orders"], "pairwise_bias position_consistency",
             "each pair needs both orders (not seen in the columns)")  # fmt: skip
        need(holds["self"], "pairwise_bias self_preference", "no judge among the compared models")
        need(holds["human_verdict"], "pairwise_bias eo_bias", "no human verdict")
    else:
        cannot.append("pairwise_bias: no pairwise verdicts (position and self-preference)")
    need(holds["perturbation"], "perturbation_bias", "no bias_type and condition columns")
    return fills, cannot


def _paired(sample: Sample, human: Column, score: Column) -> list[tuple[float, float]]:
    pairs = []
    for record in sample.records:
        y, f = as_number(get_path(record, human.name)), as_number(get_path(record, score.name))
        if y is not None and f is not None:
            pairs.append((y, f))
    return pairs


def label_budget(sample: Sample, columns: dict[str, Column], holds: dict[str, bool]) -> Budget:
    """Human labels for a +-HALF_WIDTH interval on a model's mean (module budget)."""
    h, level = settings.HALF_WIDTH, settings.CI_LEVEL
    out = Budget()
    say = out.lines.append
    z = budget.z_value(level)
    human, score = _first(columns, "human", True), _first(columns, "score", True)
    judge, model = _first(columns, "judge"), _first(columns, "model")
    cells = Counter(
        (
            str(get_path(r, judge.name)) if judge else "",
            str(get_path(r, model.name)) if model else "",
        )
        for r in sample.records
    )
    n_cell = int(statistics.median(cells.values())) if cells else 0
    out.figures["n_cell"] = n_cell
    say(
        f"precision: +-{h} ({level:.0%}) on a mean score normalised to 0-1, z = {z:.3f}; per "
        f"judge x model cell ({len(cells):,} cells, median {n_cell:,} judged items)"
    )
    pairs = _paired(sample, human, score) if human and score else []
    if human and score and len(pairs) >= 3:
        lo = min(min(p) for p in pairs)
        hi = max(max(p) for p in pairs)
        span = (hi - lo) or 1.0
        ys = [(y - lo) / span for y, _ in pairs]
        fs = [(f - lo) / span for _, f in pairs]
        var_y, var_f = statistics.pvariance(ys), statistics.pvariance(fs)
        my, mf = statistics.fmean(ys), statistics.fmean(fs)
        cov = statistics.fmean((y - my) * (f - mf) for y, f in zip(ys, fs, strict=True))
        rho = cov / math.sqrt(var_y * var_f) if var_y > 0 and var_f > 0 else 0.0
        sd_e = math.sqrt(max(var_f - cov**2 / var_y, 0.0)) if var_y > 0 else math.sqrt(var_f)
        out.have = round(len(pairs) / max(len(cells), 1))
        out.figures.update(sd_human=math.sqrt(var_y), sd_judge=math.sqrt(var_f), rho=rho, sd_e=sd_e)
        say(f"from {len(pairs):,} rows with both {human.name} and {score.name}, pooled (scaled by "
            f"[{lo:g}, {hi:g}]): sd(human) {math.sqrt(var_y):.3f}, sd(judge) "
            f"{math.sqrt(var_f):.3f}, correlation {rho:.3f}, residual sd {sd_e:.3f}")  # fmt: skip
    else:
        fallback = (
            (score.sd or 0.0) / ((max(score.numbers) - min(score.numbers)) or 1.0)
            if score and score.numbers
            else 0.0
        )
        sd_y = fallback or 0.5
        var_y = var_f = sd_y**2
        rho, sd_e, cov = math.nan, settings.ASSUMED_RESIDUAL_SD, math.nan
        why = "the sd of the judge scores" if fallback else "the largest sd a 0-1 score can have"
        say(f"no human labels beside judge scores: sd(human) assumed {sd_y:.3f} ({why})")
    out.human_only = budget.human_only_n(math.sqrt(var_y), h, level)
    say(f"human-only mean: n = (z sd / h)^2 = ({z:.3f} x {math.sqrt(var_y):.3f} / {h})^2 "
        f"-> {out.human_only:,} labels per cell")  # fmt: skip
    if out.human_only > n_cell:
        say(f"  more than the {n_cell:,} items a cell holds: judge more items or widen h")
    if not math.isnan(cov):
        need = budget.ppi_required_n(max(n_cell, 3), var_y, var_f, cov, h, level)
        out.ppi = need.n
        say(
            f"PPI++ (tuned lambda {need.lam:.2f}): {need.n:,} labels per cell of {n_cell:,}"
            if need.n
            else f"PPI++: +-{h} is out of reach with {n_cell:,} judged items per cell "
            f"(best +-{need.best_half_width:.3f}); judge more items"
        )
    else:
        for r in settings.ASSUMED_CORRELATIONS:
            n_r = budget.ppi_required_n(
                max(n_cell, 3), var_y, var_f, r * var_y, h, level
            )  # judge sd = human sd
            shown = f"{n_r.n:,}" if n_r.n else f"out of reach (best +-{n_r.best_half_width:.3f})"
            say(f"PPI++ if the judge's correlation with humans is {r}: {shown} per cell")
    if holds.get("self") and judge and model:
        own = [
            r for r in sample.records
            if _norm(str(get_path(r, judge.name))) == _norm(str(get_path(r, model.name)))
        ]  # fmt: skip
        judges = Counter(_norm(str(get_path(r, judge.name))) for r in sample.records)
        selfs = Counter(_norm(str(get_path(r, judge.name))) for r in own)
        shares = [selfs[j] / judges[j] for j in selfs if 0 < selfs[j] < judges[j]]
        if shares:
            p = min(shares)
            out.figures["p_self"] = p
            out.regression = budget.regression_self_n(sd_e, p, h, level)
            say(f"self-bias term: n = (z sd_e / h)^2 / (p (1 - p)), p = {p:.3f} (smallest share "
                f"of a judge's rows on its own model), sd_e = {sd_e:.3f} -> {out.regression:,} "
                "rows with a human label per judge")  # fmt: skip
    if out.have:
        more = [
            f"{name} {max(0, n - out.have):,}"
            for name, n in (("human-only", out.human_only), ("PPI", out.ppi)) if n
        ]  # fmt: skip
        say(f"labels in the file: about {out.have:,} per cell; more needed: {', '.join(more)}")
    return out


def diagnose(path: str | Path) -> Diagnosis:
    """Profile ``path`` (see the package docstring)."""
    sample = read_sample(path)
    fmt = detect(sample)
    columns = profile(sample.records)
    if sample.records and not columns:
        raise InputError(f"{path}: records without fields: nothing to profile")
    holds = infer_holds(columns, sample, fmt)
    judge, model = _first(columns, "judge"), _first(columns, "model")
    n_judges = judge.n_distinct if judge else (1 if holds["judge_scores"] else 0)
    n_models = model.n_distinct if model else 0
    fills, cannot = marts(holds, n_judges)
    plan = label_budget(sample, columns, holds) if holds["judge_scores"] and columns else Budget()
    return Diagnosis(sample, fmt, columns, holds, n_judges, n_models, fills, cannot, plan)


def _command(d: Diagnosis) -> list[str]:
    name = d.sample.path.name
    fmt = d.format
    if fmt is None:
        return [
            "no known format: map it with `judge-bias import mapping --config map.yml "
            f"{name} --out DATA` (docs/mapping.md; a starting config per file kind in "
            "docs/mapping/)"
        ]
    if fmt.name == "contract":
        return [f"{fmt.title}: {fmt.note}: `judge-bias build --data DIR`"]
    if fmt.config:
        return [f"{fmt.title}: `judge-bias import mapping --config {fmt.config} {name} --out DATA`"]
    if fmt.importer in IMPORTERS:
        note = f" ({fmt.note})" if fmt.note else ""
        return [f"{fmt.title}: `judge-bias import {fmt.importer} {name} --out DATA`{note}"]
    return [
        f"{fmt.title}: the {fmt.importer} importer is not in this install; "
        f"meanwhile `judge-bias import mapping --config map.yml {name} --out DATA`"
    ]


def render(d: Diagnosis) -> str:
    """The report, as text."""
    s = d.sample
    read = "all read" if s.complete else f"first {len(s.records):,} profiled"
    where = f", records at {s.records_path}" if s.records_path else ""
    lines = [f"{s.path.name}: {s.kind}, {s.n_records:,} records ({read}){where}"]
    lines += [f"fits: {c}" for c in _command(d)]
    if d.format is None or d.format.name != "contract":
        lines.append(
            "then: `judge-bias build --data DATA` (JUDGE_BIAS_GLM_MODELS=none skips the GLMs)"
        )
    if s.kind == "zip":
        lines.append("(an archive: its contents are not profiled)")
    if d.columns:
        n = len(s.records)
        lines.append("columns (kind: a guess from name and values; coverage; distinct; e.g.):")
        width = min(max(len(c) for c in d.columns), 40)
        for c in d.columns.values():
            lines.append(
                f"  {c.name[:40]:{width}}  {c.kind:9}  {c.coverage(n):7.1%}  "
                f"{c.distinct_text():>7}  {c.example()}"
            )
    held = [k.replace("_", " ") for k, v in d.holds.items() if v]
    judges = f"{d.n_judges:,} judge(s)" if d.n_judges else "no judge column"
    lines.append(
        f"holds: {', '.join(held) or 'nothing the warehouse reads'}; "
        f"{judges}, {d.n_models:,} model(s)"
    )
    lines.append("fills: " + ("; ".join(d.fills) or "nothing"))
    lines += ["cannot fill:"] + [f"  {c}" for c in d.cannot]
    if d.budget.lines:
        lines.append("human labels needed:")
        lines += [f"  {line}" for line in d.budget.lines]
    return "\n".join(lines)
