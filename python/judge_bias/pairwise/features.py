"""Features of a pairwise judgment shared by the simulator and the pairwise marts.

The length feature of an ordered pair is the tanh of the length difference
relative to the pair's mean length:

    x = tanh((length_first - length_second) / ((length_first + length_second) / 2))

It needs only the two lengths (no other completion of the prompt), is
scale-free (tokens or words give the same x when they are proportional), is
antisymmetric (swapping the slots flips its sign), and lies in
(-tanh(2), tanh(2)) = (-0.964, 0.964). It is NaN when a length is missing,
negative, or both are 0. The simulator plants its length preference as a
logistic slope on this x; the pairwise marts estimate the slope on it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def length_difference_feature(
    length_first: npt.ArrayLike, length_second: npt.ArrayLike
) -> np.ndarray:
    """tanh((length_first - length_second) / mean of the two), elementwise; NaN when
    either length is missing or negative, or both are 0."""
    a = np.asarray(length_first, dtype=float)
    b = np.asarray(length_second, dtype=float)
    mean = (a + b) / 2.0
    valid = (a >= 0) & (b >= 0) & (mean > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.tanh((a - b) / mean)
    return np.where(valid, x, np.nan)
