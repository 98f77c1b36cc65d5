"""Statistical helpers shared by the topic packages (pairwise, ppi, agreement,
perturbation, bias, drift): nothing here is a topic of its own.

- ``intervals``: Wilson, Newcombe, prompt-clustered (CR1) rates and bootstrap helpers.
- ``level_intervals``: intervals at any level for statistics of clustered units (items
  of one prompt), shared by the drift, stability and binary-agreement marts.
- ``numeric``: coercion of input columns to floats, with the count of values that are not.
- ``fit_warnings``: statsmodels' warnings that the fits report in notes, ignored by
  filters installed once (thread-safe, unlike catch_warnings).
- ``scalars``: one value's checks (a finite number), in plain Python for the importers.
- ``binary_agreement``: binary and graded agreement of a judge with the human reference
  (agreement_binary).
- ``binary_cells``: agreement_binary's statistics from per-prompt cells.
"""

__all__ = [
    "binary_agreement",
    "binary_cells",
    "fit_warnings",
    "intervals",
    "level_intervals",
    "numeric",
    "scalars",
]
