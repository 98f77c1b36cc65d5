"""Scalar checks shared by the importers and the statistics, in plain Python: the
importers load neither numpy nor pandas, and this module keeps it so."""

from __future__ import annotations

import math
from typing import TypeGuard


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """A finite real number: an int or a float (numpy's float64 is one), never a bool,
    None, NaN, an infinity or a string of digits (a mapped CSV cell is text:
    ``inputs.importers.mapping`` asks its own question of it)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
