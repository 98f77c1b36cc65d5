"""Features of a pairwise judgment computed from the two completions.

``length_difference_feature`` is the tanh-normalised length difference of the
pairwise length-bias model (autograder_bayesian_glms.txt, Section 2.5): the
token-length difference of the first and second completion, divided by the
sample standard deviation (ddof 1) of the lengths of all completions of that
prompt (as in ``length_feature`` of the rating marts), squashed into (-1, 1)
by tanh so that a few very long completions do not dominate the slope.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def length_difference_feature(
    length_first: np.ndarray | pd.Series,
    length_second: np.ndarray | pd.Series,
    sd: np.ndarray | pd.Series | float,
) -> np.ndarray:
    """tanh((length_first - length_second) / sd), elementwise.

    ``sd`` is the sample standard deviation of the lengths of the prompt's
    completions. Equal lengths give 0 whatever ``sd``; a difference with a
    missing or zero ``sd`` (lengths unknown) gives NaN.
    """
    first = np.asarray(length_first, dtype=float)
    second = np.asarray(length_second, dtype=float)
    scale = np.broadcast_to(np.asarray(sd, dtype=float), first.shape)
    diff = first - second
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.tanh(diff / np.where(scale > 0, scale, np.nan))
    return np.where(diff == 0, 0.0, out)
