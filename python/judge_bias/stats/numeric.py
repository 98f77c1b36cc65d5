"""Strict numeric columns for the row routes of the stats (issue 29, defect 6).

The rows these functions take are checked in SQL (``int_*_checked``): a value
that does not parse is a rejected row there, with its reason. A non-numeric
value reaching pandas is therefore a caller's error, and ``pd.to_numeric(...,
errors='coerce')`` would silently turn it into a missing value (a judgment
without a length, a p_first, a score) and change the estimates; ``to_float``
raises instead. Missing values stay missing (they are counted where used).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def to_float(values: pd.Series | None, name: str, n: int) -> np.ndarray:
    """``values`` as floats (NaN where missing; all NaN when the column is absent:
    ``values`` None, ``n`` rows); ValueError naming the column, the count and an
    example when a present value is not a number."""
    if values is None:
        return np.full(n, np.nan)
    parsed = pd.to_numeric(values, errors="coerce")
    bad = parsed.isna().to_numpy() & values.notna().to_numpy()
    if bad.any():
        example = values[bad].iloc[0]
        raise ValueError(
            f"{name}: {int(bad.sum())} of {len(values)} values are not numbers "
            f"(e.g. {example!r}); check the rows in SQL first"
        )
    return parsed.to_numpy(dtype=float)
