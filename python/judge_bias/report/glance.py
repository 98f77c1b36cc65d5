"""The report's first screen ("At a glance"): the judges' verdicts (judge_scorecard),
the largest significant biases with their intervals (bias_estimates, pairwise_bias),
and what failed or was skipped (rejected input rows, GLM fits not ok, analyses the
data does not support). Every detail section below it is collapsed."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd

from judge_bias.report.base import Panel, Warehouse, bias_ci_level, esc, fmt_value, percent

# most to least severe; a verdict not listed here comes last, as written
VERDICT_ORDER = (
    "avoid",
    "avoid for self-family models",
    "use with debiasing",
    "insufficient evidence",
    "use",
)
TOP_BIASES = 5
GLM_OK = ("ok", "not requested")


def _signed(v: float) -> str:
    return fmt_value(float(v), 3, "+")


def short_titles(panels: Sequence[Panel]) -> dict[str, str]:
    """Each panel's label in the navigation: the part of its title before ":",
    unless two panels share it (the autograder GLM's), then the whole title."""
    heads = [p.title.split(":")[0] for p in panels]
    return {
        p.key: head if heads.count(head) == 1 else p.title
        for p, head in zip(panels, heads, strict=True)
    }


def verdict_items(wh: Warehouse) -> list[str]:
    """One <li> per verdict of judge_scorecard (all dimensions pooled), most severe
    first, naming its judges; "avoid" with each judge's reasons."""
    if wh.missing("judge_scorecard"):
        return []
    df = wh.df(
        "select judge, verdict, verdict_reasons from judge_scorecard "
        "where dimension = 'all' order by judge"
    )
    if df.empty:
        return []
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    out = []
    for verdict in sorted(df.verdict.unique(), key=lambda v: (rank.get(v, len(rank)), v)):
        rows = df[df.verdict == verdict]
        if verdict == "avoid":
            names = ", ".join(
                f"<b>{esc(r.judge)}</b>"
                + (f" ({esc(r.verdict_reasons)})" if isinstance(r.verdict_reasons, str) else "")
                for r in rows.itertuples()
            )
        else:
            names = ", ".join(f"<b>{esc(j)}</b>" for j in rows.judge)
        out.append(f'<li class="glance-verdict"><i>{esc(verdict)}</i>: {names}</li>')
    return out


def largest_biases(wh: Warehouse, top: int = TOP_BIASES) -> pd.DataFrame:
    """The ``top`` significant self- and family-biases of the main fit, by absolute
    size (score units), then the significant pairwise equal-opportunity biases
    (probability units): columns what, name, estimate, ci_low, ci_high, unit."""
    frames = []
    if not wh.missing("bias_estimates"):
        est = wh.df(
            "select term_type || '-bias' as what, coalesce(judge, family) as name, estimate, "
            "ci_low, ci_high from bias_estimates where analysis = 'main' and slice = 'all' "
            "and term_type in ('self', 'family') and significant "
            "order by abs(estimate) desc, name"
        ).head(top)
        est["unit"] = f"score units 0-1, {percent(bias_ci_level(wh))} interval"
        frames.append(est)
    if not wh.missing("pairwise_bias"):
        cols = set(wh.columns("pairwise_bias"))
        if {"eo_bias", "eo_bias_ci_low", "eo_bias_ci_high"} <= cols:
            where = " and opponent = 'all'" if "opponent" in cols else ""
            eo = wh.df(
                "select 'pairwise self-preference' as what, judge as name, eo_bias as "
                "estimate, eo_bias_ci_low as ci_low, eo_bias_ci_high as ci_high "
                "from pairwise_bias where (eo_bias_ci_low > 0 or eo_bias_ci_high < 0)"
                f"{where} order by abs(eo_bias) desc, judge"
            ).head(top)
            eo["unit"] = "probability, 95% interval"
            frames.append(eo)
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def glm_fit_lines(wh: Warehouse) -> list[str]:
    """The GLM fits whose status is not ok (error, then warning, then skipped), one
    text per status and model: "status: model on dimension, ..." with the reason of
    an error or a skip (the first 120 characters; a warning's diagnostics are in the
    GLM sections). Fits not requested are not problems."""
    if wh.missing("glm_fits"):
        return []
    df = wh.df(
        "select model, dimension, status, coalesce(notes, '') as notes from glm_fits "
        f"where status not in {GLM_OK} order by model, dimension"
    )
    order = {"error": 0, "warning": 1, "skipped": 2}
    df["why"] = ["" if s == "warning" else n for s, n in zip(df.status, df.notes, strict=True)]
    out = []
    groups = df.groupby(["status", "model", "why"], sort=False)
    for (status, model, why), g in sorted(groups, key=lambda x: (order.get(x[0][0], 3), x[0])):
        reason = f" ({why[:120]}{'...' if len(why) > 120 else ''})" if why else ""
        out.append(f"{status}: {model} on {', '.join(g.dimension)}{reason}")
    return out


# how the report heads the sections it does not draw: the data does not support them,
# or their table is missing after a build that did not finish (summary.unbuilt_panels)
UNSUPPORTED = "Not supported by this data"
UNBUILT = "Not built: the last build did not reach them"


def by_heading(absent: Sequence[Panel], unbuilt: Collection[str]) -> list[tuple[str, list[Panel]]]:
    """The absent panels under their heading (``unbuilt``: the keys not built), the
    headings without a panel left out."""
    groups = [
        (UNBUILT, [p for p in absent if p.key in unbuilt]),
        (UNSUPPORTED, [p for p in absent if p.key not in unbuilt]),
    ]
    return [(heading, panels) for heading, panels in groups if panels]


def _failed_items(wh: Warehouse, absent: Sequence[Panel], unbuilt: Collection[str]) -> list[str]:
    out = []
    if not wh.missing("input_row_counts"):
        rej = wh.df(
            "select source, rows_rejected, rows_read from input_row_counts "
            "where rows_rejected > 0 order by source"
        )
        if len(rej):
            listed = ", ".join(
                f"{esc(r.source)} {r.rows_rejected:,} of {r.rows_read:,}" for r in rej.itertuples()
            )
            out.append(
                f'<li class="glance-rejected">Rejected input rows: {listed} (reasons in '
                '<a href="#provenance">Provenance</a>).</li>'
            )
        else:
            out.append('<li class="glance-rejected">No input row was rejected.</li>')
    problems = glm_fit_lines(wh)
    if problems:
        listed = "; ".join(esc(x) for x in problems[:6])
        more = f"; and {len(problems) - 6} more" if len(problems) > 6 else ""
        out.append(f'<li class="glance-glm">GLM fits not ok: {listed}{more}.</li>')
    for heading, panels in by_heading(absent, unbuilt):
        names = list(dict.fromkeys(short_titles(panels).values()))
        out.append(
            f'<li class="glance-unsupported">{esc(heading)} ({len(panels)} '
            f"sections): {esc('; '.join(names))} (reasons in "
            '<a href="#significant">What is significant</a>).</li>'
        )
    return out


def glance_html(wh: Warehouse, absent: Sequence[Panel] = (), unbuilt: Collection[str] = ()) -> str:
    """The first screen of the report: verdicts, largest biases, what failed."""
    parts = []
    verdicts = verdict_items(wh)
    if verdicts:
        parts.append(
            '<p class="glance-head">Verdicts (<a href="#scorecard">judge scorecard</a>, '
            "all dimensions):</p><ul>" + "".join(verdicts) + "</ul>"
        )
    biases = largest_biases(wh)
    if len(biases):
        items = "".join(
            f'<li class="glance-bias">{esc(r.what)} <b>{esc(r.name)}</b> '
            f"{_signed(r.estimate)} [{_signed(r.ci_low)}, {_signed(r.ci_high)}] "
            f"({esc(r.unit)})</li>"
            for r in biases.itertuples()
        )
        parts.append(
            '<p class="glance-head">Largest significant biases (interval excludes 0; '
            '<a href="#significant">all of them</a>):</p>'
            f"<ul>{items}</ul>"
        )
    elif not wh.missing("bias_estimates") or not wh.missing("pairwise_bias"):
        parts.append('<p class="glance-head">No significant bias in this data.</p>')
    failed = _failed_items(wh, absent, unbuilt)
    if failed:
        parts.append(
            '<p class="glance-head">What failed or was skipped:</p><ul>' + "".join(failed) + "</ul>"
        )
    return "".join(parts)
