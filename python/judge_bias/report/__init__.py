"""The report of a built warehouse: one self-contained HTML file of figures and tables.

`html_report` reads the marts (read-only) and draws, with matplotlib (Agg), every
section registered with ``@panel(order)`` (``base``), in the modules below.
Every figure is embedded as a base64 PNG; a panel whose table is missing or empty is
replaced by a line saying why (``Warehouse.missing``). `text_report` is the plain
Markdown summary (`judge-bias report --out FILE.md`).

- ``base``: the Panel and Warehouse types, the panel registry, table formatting and the
  matplotlib helpers.
- ``glance``: the first screen ("At a glance").
- ``bias``: forest plots, per dimension, heatmap, robustness.
- ``leaderboard``: the debiased leaderboard.
- ``agreement``: annotators, judge vs human, self vs peer, counterfactual.
- ``pairwise``: pairwise judgments and perturbations.
- ``pairwise_human``: pairwise bias against human verdicts.
- ``scorecard``: the judge scorecard and the cross-family panel.
- ``ppi``: human-scale scores by stratified PPI.
- ``comparisons``: paired model differences and the label budget.
- ``glm``: the autograder GLMs (effect forests, model comparison, agreement).
- ``drift``: judge drift, rerun stability, pass/fail agreement.
- ``summary``: what is significant, the overview and the provenance.
- ``render``: runs the registered panels and writes HTML or Markdown.

A new section is one function in one of these modules (or a new module imported
below) decorated with ``@panel(order)``.
"""

# Importing the section modules registers their panels, in this order of files.
from judge_bias.report import (  # noqa: F401
    agreement,
    bias,
    comparisons,
    drift,
    glm,
    leaderboard,
    pairwise,
    pairwise_human,
    ppi,
    scorecard,
)
from judge_bias.report.base import HUMAN, Panel, Warehouse, panel, registered_panels
from judge_bias.report.bias import heatmap_data
from judge_bias.report.leaderboard import leaderboard_rank_agreement
from judge_bias.report.render import html_report, text_report, write_report

__all__ = [
    "HUMAN",
    "Panel",
    "Warehouse",
    "heatmap_data",
    "html_report",
    "leaderboard_rank_agreement",
    "panel",
    "registered_panels",
    "text_report",
    "write_report",
]
