"""Statistical helpers shared by the topic packages (pairwise, ppi, agreement,
perturbation, bias): nothing here is a topic of its own.

- ``intervals``: Wilson, Newcombe, prompt-clustered (CR1) rates and bootstrap helpers.
- ``numeric``: coercion of input columns to floats, with the count of values that are not.
- ``fit_warnings``: statsmodels' warnings that the fits report in notes, ignored by
  filters installed once (thread-safe, unlike catch_warnings).
- ``scalars``: one value's checks (a finite number), in plain Python for the importers.
"""

__all__ = ["fit_warnings", "intervals", "numeric", "scalars"]
