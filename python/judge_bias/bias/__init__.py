"""The Play Favorites bias regressions: self- and family-bias against human reference scores.

- ``sufficient``: OLS (and HC0/HC1/HC3/cluster errors) from SQL cell sufficient statistics.
- ``regression``: the model specification, term support and the fit's notes.
- ``ordinal``: the ordered-logit robustness fit on compressed counts.
- ``settings``: the dbt vars the analyses read (one home for their defaults).
- ``fit_inputs``: the sufficient statistics the analyses fit from.
- ``gam``: the GAM robustness fit (per-judge cubic regression spline of the reference).
- ``reference``: the independent reference (statsmodels formula OLS on the rows).
- ``analyses``: the registry of analyses (main, by_dimension, ..., without_weakest) that
  int_bias_results runs, and ``Settings`` (the dbt vars they read).
- ``dbt``: int_bias_results as its dbt model file calls it.
"""

__all__ = [
    "analyses",
    "dbt",
    "fit_inputs",
    "gam",
    "ordinal",
    "reference",
    "regression",
    "settings",
    "sufficient",
]
