"""Assembling the report: run the registered panels, render figures, write HTML or Markdown."""

from __future__ import annotations

import base64
import html
import io
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pandas as pd

if TYPE_CHECKING:
    pass
from judge_bias.report.base import Panel, Warehouse, esc, fmt_value, registered_panels
from judge_bias.report.glance import glance_html
from judge_bias.report.summary import (
    overview_html,
    provenance_html,
    significance_html,
    status_html,
    unbuilt_panels,
)

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1250px;
margin:1.5em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
.caption{color:#444;font-size:.95em;max-width:70em}.absent{color:#8a5a00;font-style:italic}
img{max-width:100%;height:auto;border:1px solid #eee}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0;max-width:100%}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}
thead th{background:#f3f3f3}td.better{background:#d9f2d9}td.worse{background:#f8d7d7}
td.own{font-weight:bold;outline:2px solid #c00;outline-offset:-3px}
.validation.passed{color:#176317;font-weight:bold}.validation.failed{color:#b00;font-weight:bold}
.status{color:#b00;font-weight:bold;border:2px solid #b00;padding:.4em .6em;
overflow-wrap:anywhere}
#glance{border:1px solid #ccc;background:#fafafa;padding:0 1em .4em;margin:1em 0}
#glance h2{margin-top:.5em;border:0}#glance ul{margin:.2em 0 .5em}.glance-head{margin:.4em 0 0}
details.detail>summary{cursor:pointer;border-bottom:1px solid #ccc;margin-top:.9em}
details.detail>summary h2{display:inline;border:0;font-size:1.25em;margin:0}
details.detail>section{scroll-margin-top:3em}
"""


def build_panels(wh: Warehouse) -> list[Panel]:
    panels = []
    for make in registered_panels():
        try:
            panels.append(make(wh))
        except (duckdb.Error, KeyError, ValueError) as exc:  # a malformed table: say so
            name = make.__name__.removeprefix("panel_")
            panels.append(Panel(name, name, absent=f"could not draw this panel: {exc}"))
    return panels


def _render(panel: Panel, png_dir: Path | None) -> None:
    if panel.figure is None:
        return
    buf = io.BytesIO()
    panel.figure.savefig(buf, format="png", dpi=100)
    data = buf.getvalue()
    panel.png = base64.b64encode(data).decode("ascii")
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        (png_dir / f"{panel.key}.png").write_bytes(data)
    panel.figure = None  # free it


def _gather(
    db_path: str | Path,
) -> tuple[Path, list[Panel], list[Panel], str, str, str, str, str]:
    """Read the warehouse once: the drawn panels, the absent ones, the significance
    text, the overview, the provenance, the build status warning and the first
    screen ("At a glance"), all HTML."""
    import matplotlib

    matplotlib.use("Agg")
    db = Path(db_path)
    if not db.exists():
        raise FileNotFoundError(f"no warehouse at {db}: run judge-bias build first")
    con = duckdb.connect(str(db), read_only=True)
    try:
        wh = Warehouse(con)
        panels = build_panels(wh)
        drawn = [p for p in panels if not p.absent]
        absent = [p for p in panels if p.absent]
        unbuilt = unbuilt_panels(wh, db, absent)
        significance = significance_html(wh, absent, unbuilt)
        provenance = provenance_html(wh, db)
        overview = overview_html(wh)
        status = status_html(wh, db)
        glance = glance_html(wh, absent, unbuilt)
    finally:
        con.close()
    return db, drawn, absent, significance, overview, provenance, status, glance


def _detail(key: str, title: str, body: str) -> str:
    """A collapsed section: its title is the summary; a link to ``#key`` opens it
    (the browser opens a closed <details> around the target of a fragment)."""
    return (
        f'<details class="detail"><summary><h2>{esc(title)}</h2></summary>'
        f'<section id="{key}">{body}</section></details>'
    )


def html_report(db_path: str | Path, png_dir: str | Path | None = None) -> str:
    """The self-contained HTML report of the warehouse at ``db_path``: the panels the
    data supports; the others are named, with the reason, in one line at the end of
    "What is significant"."""
    db, panels, _, significance, overview, provenance, status, glance = _gather(db_path)
    out_dir = Path(png_dir) if png_dir else None
    sections = []
    for p in panels:
        _render(p, out_dir)
        body = []
        if p.caption:
            body.append(f'<p class="caption">How to read it: {esc(p.caption)}</p>')
        if p.png:
            body.append(f'<img alt="{esc(p.title)}" src="data:image/png;base64,{p.png}">')
        body.append(p.html)
        sections.append(_detail(p.key, p.title, "".join(body)))
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>judge-bias report: {esc(db.name)}</title><style>{CSS}</style></head><body>"
        f"<h1>judge-bias report</h1><p>Warehouse <code>{esc(db)}</code>, report written "
        f"{stamp}.</p>{status}{overview}"
        f'<section id="glance"><h2>At a glance</h2>{glance}</section>'
        + '<p class="sections">The sections below open when clicked (or linked to):</p>'
        + _detail("significant", "What is significant", significance)
        + "".join(sections)
        + _detail("provenance", "Provenance", provenance)
        + "</body></html>\n"
    )


def write_report(db_path: str | Path, out: str | Path, png_dir: str | Path | None = None) -> Path:
    """Write the report: HTML, or the plain Markdown summary when ``out`` ends in .md."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = text_report(db_path) if path.suffix == ".md" else html_report(db_path, png_dir)
    path.write_text(text, encoding="utf-8")
    return path


def _md_table(df: pd.DataFrame, digits: int = 3) -> str:
    cols = [str(c) for c in df.columns]
    rows = [[fmt_value(v, digits).replace("|", "\\|").replace("\n", " ") for v in r]
            for r in df.itertuples(index=False)]  # fmt: skip
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows])


def _markdown(fragment: str) -> str:
    """An HTML fragment of the report as Markdown: bold kept, lists as bullets,
    tables as Markdown tables, other tags dropped."""
    parts = []
    for chunk in re.split(r"(<table.*?</table>)", fragment, flags=re.S):
        if chunk.startswith("<table"):
            parts.append(_md_table(_html_table_frame(chunk)))
            continue
        text = re.sub(r"</?b>", "**", chunk)
        text = re.sub(r"<li[^>]*>", "\n- ", text)
        text = re.sub(r"<p[^>]*>", "\n\n", text)
        text = re.sub(r"<h3>", "\n\n### ", text)
        text = re.sub(r"</(p|ul|h3|details|summary)>", "\n", text)
        parts.append(html.unescape(re.sub(r"<[^>]+>", "", text)).strip())
    return "\n\n".join(p for p in parts if p)


CELL = r"<t[hd][^>]*>(.*?)</t[hd]>"


def _html_table_frame(table: str) -> pd.DataFrame:
    """A table written by html_table (or the leaderboard) back as a frame of text."""
    rows = [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(CELL, r)]
        for r in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    ]
    return pd.DataFrame(rows[1:], columns=rows[0]) if rows else pd.DataFrame()


def text_report(db_path: str | Path) -> str:
    """The report as Markdown: the same sections as the HTML report (what is
    significant, every panel's caption and tables, provenance), figures left out."""
    db, panels, _, significance, overview, provenance, status, glance = _gather(db_path)
    parts = [f"# judge-bias warehouse: {db}", _markdown(status), _markdown(overview)]
    parts += ["## At a glance", _markdown(glance)]
    parts += ["## What is significant", _markdown(significance)]
    for p in panels:
        p.figure = None
        parts.append(f"## {p.title}")
        if p.caption:
            parts.append(f"How to read it: {p.caption} (The figure is in the HTML report.)")
        parts += [_md_table(f) for f in p.frames] or [_markdown(p.html)]
    parts += ["## Provenance", _markdown(provenance)]
    return "\n\n".join(x for x in parts if x) + "\n"
