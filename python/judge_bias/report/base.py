"""What every report section shares: the Panel and Warehouse types, the panel registry,
table formatting and the matplotlib helpers (one interval/forest helper, colours, legends).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import duckdb
import pandas as pd

from judge_bias.inputs.summary import input_note

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import ColorType


HUMAN = "human reference"


UNIT = "normalised score units (0-1 scale)"


ROBUSTNESS_VARIANTS = ("main", "length_controlled", "gam", "llm_reference", "without_weakest")


PAIRWISE_METRICS = {
    "position_consistency": ("position consistency", 1.0, "same verdict when the order is swapped"),
    "first_slot_rate": ("first-slot rate", 0.5, "share of verdicts for the first slot"),
    "self_preference_rate": ("self-preference rate", 0.5, "share of own-vs-other pairs won"),
    "self_preference_rate_ties_half": (
        "self-preference rate, ties half",
        0.5,
        "the same, a tie counting half a win (AlpacaEval)",
    ),
    "self_preference_prob": ("self-preference probability", 0.5, "mean probability on own"),
    "eo_bias": ("equal-opportunity bias", 0.0, "P(prefer y1 | own) - P(prefer y1 | other)"),
    "length_slope": ("length slope", 0.0, "slope on the length difference (0 = no effect)"),
}


# a panel's reason when its table is missing (Warehouse.missing); after a build that did
# not finish the report heads such panels "Not built" (summary.unbuilt_panels)
NOT_IN_DATABASE = "is not in this database"
MISSING_TABLE = re.compile(rf"\btable \S+ {NOT_IN_DATABASE}")


@dataclass
class Panel:
    """One section of the report: a figure and/or HTML, or the reason it is absent."""

    key: str
    title: str
    caption: str = ""
    figure: Figure | None = None
    html: str = ""
    absent: str | None = None
    png: str | None = field(default=None, repr=False)  # base64, filled when rendered
    frames: list[pd.DataFrame] = field(default_factory=list, repr=False)  # for Markdown


# --------------------------------------------------------------------------- registry

PanelFn = Callable[["Warehouse"], Panel]
_REGISTRY: dict[str, tuple[int, PanelFn]] = {}


def panel(order: int) -> Callable[[PanelFn], PanelFn]:
    """Register a report section. ``@panel(order)`` above a ``panel_<key>(wh) -> Panel``
    function puts that section in every report, in ascending ``order`` (the built-in
    sections use multiples of 10, so a new one fits between two). The function returns
    a Panel, or ``Panel(key, title, absent=wh.missing(...))`` when its tables are empty."""

    def register(fn: PanelFn) -> PanelFn:
        _REGISTRY[fn.__name__] = (order, fn)
        return fn

    return register


def registered_panels() -> list[PanelFn]:
    """The registered panel functions in report order."""
    return [fn for _, fn in sorted(_REGISTRY.values(), key=lambda x: x[0])]


class Warehouse:
    """Read-only access to a built warehouse, tolerant of missing tables."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.tables = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }

    def df(self, sql: str) -> pd.DataFrame:
        return self.con.execute(sql).df()

    def columns(self, table: str) -> list[str]:
        return [r[0] for r in self.con.execute(f'describe "{table}"').fetchall()]

    def missing(self, *tables: str, source: str | None = None) -> str | None:
        """Why a panel built on ``tables`` cannot be drawn (None when it can); with the
        input file kind ``source``, what became of that file (absent, all rejected)."""
        for t in tables:
            if t not in self.tables:
                reason = f"table {t} {NOT_IN_DATABASE}"
            elif self.con.execute(f'select count(*) from "{t}"').fetchall()[0][0] == 0:
                reason = f"table {t} has no rows"
            else:
                continue
            note = input_note(self.con, source) if source else None
            return reason + (f" ({note})" if note else "")
        return None


def esc(x: object) -> str:
    return html.escape(str(x))


def fmt_value(x: object, digits: int = 3, sign: str = "") -> str:
    """A value as table text: "" for None/NaN, floats to ``digits`` places (``sign``
    "+": with a plus sign), and never "-0.000": a negative value that rounds to zero
    is written as zero."""
    if x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, float):
        if round(x, digits) == 0:
            x = 0.0
        return f"{x:{sign}.{digits}f}"
    return str(x)


def html_table(df: pd.DataFrame, digits: int = 3) -> str:
    # a long column name may break after an underscore, not inside a word
    head = "".join(f"<th>{esc(c).replace('_', '_<wbr>')}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(fmt_value(v, digits))}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _with_intervals(df: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Each measure with ``_ci_low``/``_ci_high`` columns as one cell "value [low, high]"."""
    out = df.copy()
    for c in [c for c in df.columns if f"{c}_ci_low" in df and f"{c}_ci_high" in df]:
        lo, hi = df[f"{c}_ci_low"], df[f"{c}_ci_high"]
        out[c] = [
            fmt_value(v, digits)
            + (f" [{fmt_value(a, digits)}, {fmt_value(b, digits)}]" if fmt_value(a) else "")
            for v, a, b in zip(df[c], lo, hi, strict=True)
        ]
        out = out.drop(columns=[f"{c}_ci_low", f"{c}_ci_high"])
    return out


def attach_table(p: Panel, df: pd.DataFrame, digits: int = 3) -> None:
    """Add a table to a panel (HTML and Markdown): measures with their interval in one
    cell, and a text column with the same value on every row (a method, a note)
    said once in the caption instead."""
    df = _with_intervals(df, digits)
    empty = [c for c in df.columns if len(df) and all(fmt_value(v) == "" for v in df[c])]
    same = [
        c
        for c in df.columns
        if c not in empty
        and len(df) > 1
        and isinstance(df[c].iloc[0], str)
        and df[c].nunique(dropna=False) == 1
    ]
    if same:
        said = "; ".join(f"{c}: {df[c].iloc[0]}" for c in same)
        p.caption = f"{p.caption} Every row of the table has {said}.".strip()
    if empty:
        said = ", ".join(empty)
        p.caption = f"{p.caption} Not in this data (no value in any row): {said}.".strip()
    df = df.drop(columns=same + empty)
    p.html += html_table(df, digits)
    p.frames.append(df)


RGB = tuple[float, float, float]


def tab10_colours() -> tuple[RGB, ...]:
    """Matplotlib's tab10 palette (a ListedColormap of ten RGB tuples)."""
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap

    return cast("tuple[RGB, ...]", cast(ListedColormap, colormaps["tab10"]).colors)


def family_colours(families: Sequence[str]) -> dict[str, RGB]:
    palette = tab10_colours()
    return {f: palette[i % len(palette)] for i, f in enumerate(sorted(set(families)))}


def judge_families(wh: Warehouse) -> pd.DataFrame:
    """Every judge with its family, ordered by family then name."""
    if "agg_judge_model_scores" in wh.tables:
        df = wh.df(
            "select judge, any_value(judge_family) as family from agg_judge_model_scores "
            "group by judge"
        )
    elif "bias_estimates" in wh.tables:
        df = wh.df(
            "select judge, any_value(family) as family from bias_estimates "
            "where judge is not null group by judge"
        )
    else:
        return pd.DataFrame(columns=["judge", "family"])
    df["family"] = df["family"].fillna("(unknown)")
    return df.sort_values(["family", "judge"]).reset_index(drop=True)


def bias_ci_level(wh: Warehouse) -> float | None:
    """The level of bias_estimates' intervals, read from its ci_level column (the
    setting's one home is judge_bias.settings; the report keeps no default)."""
    if "bias_estimates" in wh.tables:
        rows = wh.con.execute("select max(ci_level) from bias_estimates").fetchall()
        if rows and rows[0][0] is not None:
            return float(rows[0][0])
    return None


def percent(level: float | None) -> str:
    """``level`` as a percentage; '' when there is none (a table without rows)."""
    return "" if level is None else f"{level * 100:.0f}%"


def new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def draw_interval(
    ax: Axes,
    y: float,
    est: float,
    lo: float,
    hi: float,
    colour: ColorType,
    filled: bool = True,
    marker: str = "o",
    size: float = 6,
    label: str | None = None,
) -> None:
    """One point estimate with its interval; hollow marker when not significant."""
    ax.errorbar(
        [est],
        [y],
        xerr=[[max(est - lo, 0.0)], [max(hi - est, 0.0)]],
        fmt=marker,
        color=colour,
        ecolor=colour,
        markerfacecolor=colour if filled else "white",
        markeredgecolor=colour,
        markersize=size,
        elinewidth=1.6,
        capsize=3,
        label=label,
    )


def zero_line(ax: Axes, x: float = 0.0) -> None:
    ax.axvline(x, color="0.35", linestyle="--", linewidth=1, zorder=0)


def significance_legend(
    fig: Figure, families: Mapping[str, ColorType], level: float | None
) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], marker="o", linestyle="", color=c, markersize=7, label=f)
        for f, c in families.items()
    ]
    handles += [
        Line2D([], [], marker="o", linestyle="", color="0.3", markersize=7, label="significant"),
        Line2D(
            [],
            [],
            marker="o",
            linestyle="",
            color="0.3",
            markerfacecolor="white",
            markersize=7,
            # bias_estimates.significant: the interval excludes 0, the term has
            # min_term_support ratings, and a standard error of 0 goes with
            # |estimate| > 1e-9 (an exact effect, not a rounded zero)
            label=f"not significant ({percent(level)} interval contains 0, too few ratings, "
            "or a rounded zero of standard error 0)",
        ),
    ]
    fig.legend(
        handles=handles,
        title="colour: judge family; fill: significance",
        loc="outside lower center",
        ncols=min(len(handles), 6),
        fontsize=8,
        title_fontsize=8,
    )


def no_value_reason(table: str, df: pd.DataFrame, columns: Sequence[str]) -> str | None:
    """Why a panel over ``columns`` of ``df`` has nothing to draw (None when a value
    exists): every value null, with the table's distinct notes (valid data such as
    constant scores leaves a statistic undefined; an empty plot would say nothing)."""
    present = [c for c in columns if c in df.columns]
    if not present:  # a warehouse older than the columns
        return f"{table} has none of the columns {', '.join(columns)}"
    if any(df[c].notna().any() for c in present):
        return None
    notes = sorted({str(n) for n in df.get("notes", pd.Series(dtype=object)).dropna() if n})
    why = f": {'; '.join(notes)}" if notes else ""
    return f"no row of {table} has a value of {', '.join(present)}{why}"


def dodged_intervals(
    ax: Axes,
    names: list[str],
    series: list[tuple[str, pd.DataFrame, str, str, str]],
    key: str,
    palette: Sequence[ColorType] | None = None,
) -> None:
    """Per name (y), one interval per series: (label, frame, est, lo, hi) dodged."""
    palette = palette or tab10_colours()
    ordered = names[::-1]
    step = 0.7 / max(len(series), 1)
    for s, (label, frame, est, lo, hi) in enumerate(series):
        f = frame.set_index(key)
        first = True
        for i, name in enumerate(ordered):
            if name not in f.index or pd.isna(f.loc[name, est]):
                continue
            r = f.loc[name]
            y = i + 0.35 - step / 2 - s * step
            low = r[lo] if lo in f.columns and not pd.isna(r[lo]) else r[est]
            high = r[hi] if hi in f.columns and not pd.isna(r[hi]) else r[est]
            colour = palette[s % len(palette)]
            draw_interval(ax, y, r[est], low, high, colour, True, "o", 5, label if first else None)
            first = False
    ax.set_yticks(range(len(ordered)), ordered)
    ax.set_ylim(-0.6, max(len(ordered), 1) - 0.4)
    ax.grid(axis="x", alpha=0.3)
