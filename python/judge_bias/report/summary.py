"""The report's text: what is significant (sentences generated from the marts), the
overview, the build status warning and the provenance section.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judge_bias.warehouse.provenance import (
    FAILED,
    RUNNING,
    VALIDATION_FAILED,
    read_build_record,
    validation_path,
    warehouse_status,
)

if TYPE_CHECKING:
    pass
from judge_bias.inputs.summary import format_summary, load_lines, read_input_counts
from judge_bias.report.base import (
    MISSING_TABLE,
    Panel,
    Warehouse,
    bias_ci_level,
    esc,
    fmt_value,
    html_table,
    judge_families,
    percent,
)
from judge_bias.report.bias import variant_label
from judge_bias.report.glance import by_heading, short_titles
from judge_bias.report.scorecard import failed_fits_html


def _signed(v: float) -> str:
    """A value with its sign, three places; never "-0.000"."""
    return fmt_value(float(v), 3, "+")


def _est_text(r: pd.Series) -> str:
    est, lo, hi = _signed(r.estimate), _signed(r.ci_low), _signed(r.ci_high)
    return f"<b>{esc(r['name'])}</b> ({est} [{lo}, {hi}])"


def unbuilt_panels(wh: Warehouse, db_path: Path, absent: Sequence[Panel]) -> frozenset[str]:
    """The keys of the absent panels the last build did not build: it failed, was
    killed or is running, and the panel's table is not in the database (a build
    stopped at the input gates, a load rolled back). Their data may well support
    them; a table present without rows is the data's answer, as after a whole build."""
    rec = read_build_record(db_path)
    if rec is None or rec.get("state") not in (FAILED, VALIDATION_FAILED, RUNNING):
        return frozenset()
    return frozenset(p.key for p in absent if MISSING_TABLE.search(str(p.absent)))


def significance_html(
    wh: Warehouse, absent: Sequence[Panel] = (), unbuilt: Collection[str] = ()
) -> str:
    """What is significant, written from every mart present (bias estimates, pairwise,
    perturbation, agreement), then a line naming the analyses the data does not
    support (the panels not drawn, with the reason), and one naming those the last
    build did not build (``unbuilt``: unbuilt_panels)."""
    items = [] if wh.missing("bias_estimates") else _bias_sentences(wh)
    items += _pairwise_sentences(wh) + _perturbation_sentences(wh) + _agreement_sentences(wh)
    if not items:
        items = ["<li>No analysis has a result in this database.</li>"]
    out = "<ul>" + "".join(items) + "</ul>"
    for heading, panels in by_heading(absent, unbuilt):
        by_reason: dict[str, list[str]] = {}
        label = short_titles(panels)
        for p in panels:
            by_reason.setdefault(str(p.absent), []).append(label[p.key])
        reasons = "; ".join(
            f"{esc(', '.join(titles))} ({esc(reason)})" for reason, titles in by_reason.items()
        )
        out += f'<p class="unsupported">{esc(heading)}: {reasons}.</p>'
    return out + failed_fits_html(wh)


def _interval_text(name: str, v: float, lo: float, hi: float) -> str:
    return (
        f"<b>{esc(name)}</b> {fmt_value(float(v))} [{fmt_value(float(lo))}, {fmt_value(float(hi))}]"
    )


def _pairwise_sentences(wh: Warehouse) -> list[str]:
    """Position, self-preference and length results of pairwise_bias (95% intervals)."""
    if wh.missing("pairwise_bias"):
        return []
    cols = set(wh.columns("pairwise_bias"))
    df = wh.df("select * from pairwise_bias order by judge")
    if "opponent" not in cols:
        df["opponent"] = "all"
    pooled = df[df.opponent == "all"]
    out = []
    for m, ref, what, who in (
        ("first_slot_rate", 0.5, "Position bias (first-slot rate; 0.5 = none)", pooled),
        ("self_preference_rate", 0.5, "Self-preference (own completion chosen; 0.5 = none)",
         df[df.opponent != "all"]),
        ("length_slope", 0.0, "Length bias (slope on the length difference; 0 = none)", pooled),
    ):  # fmt: skip
        if m not in cols or not {f"{m}_ci_low", f"{m}_ci_high"} <= cols:
            continue
        rows = who.dropna(subset=[m, f"{m}_ci_low", f"{m}_ci_high"])
        if rows.empty:
            continue
        names = rows.judge + np.where(rows.opponent == "all", "", " vs " + rows.opponent)
        sig = (rows[f"{m}_ci_low"] > ref) | (rows[f"{m}_ci_high"] < ref)
        listed = [
            _interval_text(n, r[m], r[f"{m}_ci_low"], r[f"{m}_ci_high"])
            for n, (_, r), keep in zip(names, rows.iterrows(), sig, strict=True)
            if keep
        ]
        text = ", ".join(listed) if listed else "none"
        out.append(
            f'<li class="sig-{m}">{what}, 95% interval excludes {ref:g}: {text} '
            f"({len(listed)} of {len(rows)}).</li>"
        )
    if "position_consistency" in cols and pooled["position_consistency"].notna().any():
        rows = pooled.dropna(subset=["position_consistency"])
        consistency = ", ".join(
            f"<b>{esc(r.judge)}</b> {r.position_consistency:.3f}" for r in rows.itertuples()
        )
        out.append(
            '<li class="position-consistency">Position consistency (same verdict with the '
            f"order swapped; 1 = none of the verdicts follows the slot): {consistency}.</li>"
        )
    return out


def _perturbation_sentences(wh: Warehouse) -> list[str]:
    """Robustness and error rates of perturbation_bias (95% intervals)."""
    if wh.missing("perturbation_bias"):
        return []
    df = wh.df("select * from perturbation_bias order by bias_type, judge")
    out = []
    for m, ref, what in (
        ("robustness_rate", 1.0, "Perturbation robustness (verdict unchanged; 1 = robust)"),
        ("error_rate", 0.0, "Perturbation error rate (score change; 0 = none)"),
    ):
        if not {m, f"{m}_ci_low", f"{m}_ci_high"} <= set(df.columns):
            continue
        rows = df.dropna(subset=[m, f"{m}_ci_low", f"{m}_ci_high"])
        if rows.empty:
            continue
        sig = (rows[f"{m}_ci_low"] > ref) | (rows[f"{m}_ci_high"] < ref)
        listed = [
            _interval_text(f"{r.judge} / {r.bias_type}", r[m], r[f"{m}_ci_low"], r[f"{m}_ci_high"])
            for (_, r), keep in zip(rows.iterrows(), sig, strict=True)
            if keep
        ]
        out.append(
            f'<li class="sig-{m}">{what}, 95% interval excludes {ref:g}: '
            f"{', '.join(listed) or 'none'} ({len(listed)} of {len(rows)} judge x bias type).</li>"
        )
    return out


def _bias_sentences(wh: Warehouse) -> list[str]:
    """Self- and family-bias of the main fit, and the robustness of the significant ones."""
    level = percent(bias_ci_level(wh))
    est = wh.df(
        "select term_type, coalesce(judge, family) as name, judge, family, estimate, ci_low, "
        "ci_high, significant from bias_estimates where analysis = 'main' and slice = 'all' "
        "and term_type in ('self', 'family') order by term_type, estimate desc"
    )
    items = []
    for term, what, who in (
        ("self", "Self-bias (a judge favours its own model)", "judges"),
        ("family", "Family-bias (a judge favours other models of its family)", "families"),
    ):
        sub = est[est.term_type == term]
        pos = sub[sub.significant & (sub.estimate > 0)]
        neg = sub[sub.significant & (sub.estimate < 0)]
        ns = sub[~sub.significant]
        text = (
            f"{what}, main fit: significant ({level} interval excludes 0) for "
            f"{len(pos) + len(neg)} of {len(sub)} {who}."
        )
        items.append(f'<li class="sig-{term}-summary">{text}</li>')
        for cls, rows, label in (
            ("positive", pos, "Significantly positive (scores higher than humans would predict)"),
            ("negative", neg, "Significantly negative (scores lower)"),
            ("not-significant", ns, "Not significant"),
        ):
            if len(rows):
                listed = ", ".join(_est_text(r) for _, r in rows.iterrows())
                items.append(f'<li class="sig-{term}-{cls}">{label}: {listed}.</li>')
        if term == "self":
            judges = set(judge_families(wh)["judge"])
            missing = sorted(judges - set(sub["name"]))
            if missing:
                items.append(
                    '<li class="sig-self-not-estimable">Not estimable (no rating of its own '
                    "model, or collinear): "
                    + ", ".join(f"<b>{esc(j)}</b>" for j in missing)
                    + ".</li>"
                )
    return items + _robustness_sentences(wh, est)


def _robustness_sentences(wh: Warehouse, main: pd.DataFrame) -> list[str]:
    variants = wh.df(
        "select analysis, slice, judge, estimate, significant from bias_estimates "
        "where term_type = 'self' and analysis in ('length_controlled', 'llm_reference', "
        "'without_weakest')"
    )
    sig = main[(main.term_type == "self") & main.significant]
    if variants.empty or sig.empty:
        return []
    out = []
    for _, r in sig.iterrows():
        v = variants[variants.judge == r["name"]]
        if v.empty:
            continue
        same = v[v.significant & ((v.estimate > 0) == (r.estimate > 0))]
        lost = [variant_label(a, s) for a, s in zip(v.analysis, v.slice, strict=True)]
        lost = [x for x, ok in zip(lost, v.index.isin(same.index), strict=True) if not ok]
        tail = f"; not in: {', '.join(lost)}" if lost else ""
        out.append(
            f'<li class="sig-robust"><b>{esc(r["name"])}</b>: keeps its sign and '
            f"significance in {len(same)} of {len(v)} robustness fits{esc(tail)}.</li>"
        )
    if not out:
        return []
    return [
        "<li>Robustness of the significant self-biases (length-controlled, LLM-reference and "
        "without-weakest-models fits):<ul>" + "".join(out) + "</ul></li>"
    ]


def _listed_item(
    wh: Warehouse, table: str, sql: str, cls: str, lead: str, row: Callable[[Any], str]
) -> list[str]:
    """One <li> listing the rows of ``sql`` (none when the table is missing or empty,
    or the query gives no row). ``row`` formats one row of ``itertuples()``: a namedtuple
    of the query's columns."""
    if wh.missing(table):
        return []
    t = wh.df(sql)
    if t.empty:
        return []
    return [f'<li class="{cls}">{lead}{", ".join(row(r) for r in t.itertuples())}.</li>']


def _agreement_sentences(wh: Warehouse) -> list[str]:
    out = _listed_item(
        wh,
        "agreement_annotators",
        "select dimension, alpha, level_of_measurement as level from agreement_annotators "
        "where alpha is not null order by dimension = 'all', dimension",
        "annotator-alpha",
        "Agreement between human annotators (Krippendorff's alpha per dimension, at the "
        "level of measurement of its scale): ",
        lambda r: (
            f"<b>{esc(r.dimension)}</b> {r.alpha:.3f} ({esc(r.level)}"
            + (", below 0.667)" if r.alpha < 0.667 else ")")
        ),
    )
    out += _listed_item(
        wh,
        "agreement_judge_human",
        "select judge, spearman, spearman_ci_low as lo, spearman_ci_high as hi "
        "from agreement_judge_human where dimension = 'all' and spearman is not null "
        "order by spearman desc",
        "judge-human",
        "Judge-human agreement (Spearman, all dimensions, 95% interval): ",
        lambda r: f"<b>{esc(r.judge)}</b> {_signed(r.spearman)} [{_signed(r.lo)}, {_signed(r.hi)}]",
    )
    out += _listed_item(
        wh,
        "self_vs_peer_tests",
        "select judge, mean_self_minus_received as d, p_self_received as p "
        "from self_vs_peer_tests where framing = 'positive' and p_self_received < 0.05 "
        "order by d desc",
        "sig-self-vs-peer",
        "Self vs peers (positive frame, paired t-test, p &lt; 0.05): own completion scored "
        "differently than its peers score it (S - R) for ",
        lambda r: f"<b>{esc(r.judge)}</b> ({_signed(r.d)})",
    )
    if not wh.missing("agreement_counterfactual"):
        t = wh.df(
            "select judge, alpha_observed, alpha_calibrated, correctable_share "
            "from agreement_counterfactual where correctable_share is not null "
            "order by correctable_share desc limit 1"
        )
        if len(t):
            r = t.iloc[0]
            out.append(
                f"<li>Largest share of judge-human disagreement removed by calibrating offset "
                f"and scale: <b>{esc(r.judge)}</b> ({r.correctable_share:.0%}; alpha "
                f"{r.alpha_observed:.2f} → {r.alpha_calibrated:.2f}).</li>"
            )
    if not wh.missing("pairwise_bias"):
        cols = wh.columns("pairwise_bias")
        if {"eo_bias", "eo_bias_ci_low", "eo_bias_ci_high"} <= set(cols):
            where = " and opponent = 'all'" if "opponent" in cols else ""
            t = wh.df(
                "select judge, eo_bias from pairwise_bias where (eo_bias_ci_low > 0 "
                f"or eo_bias_ci_high < 0){where} order by eo_bias desc"
            )
            if len(t):
                listed = ", ".join(
                    f"<b>{esc(r.judge)}</b> ({_signed(r.eo_bias)})" for r in t.itertuples()
                )
                out.append(
                    '<li class="sig-eo">Pairwise equal-opportunity self-preference bias, '
                    f"interval excludes 0: {listed}.</li>"
                )
    return out


def status_html(wh: Warehouse, db_path: Path) -> str:
    """The warning at the top: the last build failed, was killed or is running, or
    the tables are not (or no longer) validated. Empty when all is well."""
    problems = warehouse_status(db_path, wh.con).problems
    return "".join(f'<p class="status">{esc(p)}</p>' for p in problems)


def provenance_html(wh: Warehouse, db_path: Path) -> str:
    parts = []
    state = warehouse_status(db_path, wh.con)
    rec = state.validation
    if rec is not None and not state.validation_current:
        parts.append(
            '<p class="validation failed">Not validated: the validation record '
            f"({esc(rec.get('validated_at'))}, data directory {esc(rec.get('data_dir'))}) "
            "is of an earlier build of these tables; run <code>judge-bias validate</code>.</p>"
        )
    elif rec is not None:
        status = "passed" if rec.get("success") else "FAILED"
        parts.append(
            f'<p class="validation {status.lower()}">Validation {status}: '
            f"{rec.get('expectations_met')} of {rec.get('expectations')} expectations met, "
            f"{len(rec.get('critical_failures', []))} critical failures, "
            f"{len(rec.get('warnings', []))} warnings (validated {esc(rec.get('validated_at'))}"
            f", data directory {esc(rec.get('data_dir'))}).</p>"
        )
        if rec.get("database") and Path(rec["database"]).resolve() != db_path.resolve():
            parts.append(
                f"<p>This file is the BI snapshot of <code>{esc(rec['database'])}</code>, "
                "published after that validation (the record the snapshot carries).</p>"
            )
        issues = rec.get("critical_failures", []) + rec.get("warnings", [])
        if issues:
            parts.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in issues) + "</ul>")
    else:
        parts.append(
            f"<p>No validation record ({esc(validation_path(db_path).name)}) beside the "
            "database: it was not built by <code>judge-bias build</code>; run "
            "<code>judge-bias validate</code>.</p>"
        )
    if "input_row_counts" in wh.tables:
        parts.append("<h3>Input rows (rows read = accepted + rejected)</h3>")
        parts.append(html_table(wh.df("select * from input_row_counts order by source")))
        # the build summary's words (this load's rows and watermark window, late rows)
        files = read_input_counts(wh.con)
        parts.extend(
            f"<p><strong>{esc(f.late_warning)}</strong></p>" for f in files if f.late_warning
        )
        parts.append(f"<pre>{esc(format_summary(files, late=False))}</pre>")
        if loads := load_lines(wh.con):  # an incremental warehouse's loads
            parts.append("<h3>Loads (kinds, rows kept from each, watermark window)</h3>")
            parts.append("<pre>" + esc("\n".join(loads)) + "</pre>")
    else:
        parts.append("<p>Table input_row_counts is not in this database.</p>")
    if "rejected_rows" in wh.tables:
        rej = wh.df(
            "select source, reason_code, count(*) as n, min(reason) as example "
            "from rejected_rows group by all order by source, n desc"
        )
        parts.append("<h3>Rejected rows by reason</h3>")
        parts.append(html_table(rej) if len(rej) else "<p>No input row was rejected.</p>")
    if "bias_fits" in wh.tables:
        fits = wh.df(
            "select analysis, slice, model_type, n_obs, n_params, r_squared, notes "
            "from bias_fits order by all"
        )
        parts.append(
            "<details><summary>Regression fits and their notes (bias_fits)</summary>"
            + html_table(fits)
            + "</details>"
        )
    return "".join(parts)


def _count(n: int, noun: str) -> str:
    """'1 judge', '2 judges', '16,137 judge ratings' (newuser20: '1 judges')."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def overview_html(wh: Warehouse) -> str:
    if reason := wh.missing("fct_judge_ratings"):
        if wh.missing("input_row_counts"):
            return f"<p>No judge ratings to report on: {esc(reason)}.</p>"
        counts = wh.df(
            "select source, rows_read, rows_accepted from input_row_counts "
            "where rows_read > 0 order by source"
        )
        listed = ", ".join(
            f"{r.source.replace('_', ' ')} {r.rows_accepted:,} accepted of {r.rows_read:,} read"
            for r in counts.itertuples()
        )
        ratings = counts[counts.source == "judge_ratings"].rows_accepted.sum()
        if ratings > 0:  # read and accepted, but the build stopped before the fact table
            return (
                f"<p>The inputs were read ({esc(listed)}), but {esc(reason)}: the build "
                "stopped before the tables built on them; the analyses below are those of "
                "the tables present.</p>"
            )
        return f"<p>No judge rating was accepted ({esc(reason)}); inputs: {esc(listed)}.</p>"
    r = wh.df(
        "select count(*) as ratings, count(distinct judge) as judges, count(distinct model) "
        "as models, count(distinct prompt_id) as prompts, count(distinct dimension) as "
        "dimensions, count(human_score_norm) as with_human from fct_judge_ratings"
    ).iloc[0]
    # the facts are built before the input gates (build.FIRST_PHASE_MODELS): a build
    # stopped there keeps them, on this folder's accepted rows, and drops the rest
    stopped = (
        " The build stopped at the input gates: the tables built on these ratings are "
        "missing; the analyses below are those of the tables present."
        if "agg_judge_model_scores" not in wh.tables
        else ""
    )
    return (
        f"<p>{_count(r.ratings, 'judge rating')} by {_count(r.judges, 'judge')} of "
        f"{_count(r.models, 'model')} on {_count(r.prompts, 'prompt')} and "
        f"{_count(r.dimensions, 'dimension')}; {r.with_human:,} of them have a "
        "human reference score. Scores are normalised to 0-1 (0 = worst label, 1 = best)."
        f"{stopped}</p>"
    )
