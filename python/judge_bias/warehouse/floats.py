"""The tolerance with which the checks compare computed doubles.

Two values computed by different routes may differ in the last bits (a mean of
one pre-aggregated label, 0.667 * 3 / 3, is 0.6670000000000001), so a check
that compares them exactly fails valid data. Every check compares within
``FLOAT_ABS_TOL + FLOAT_REL_TOL * max(|a|, |b|)``. The dbt macros float_le,
float_eq and float_between (macros/floats.sql) hold the same two numbers;
tests/test_floats.py checks that they agree.
"""

from __future__ import annotations

FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12


def float_tolerance(a: float, b: float) -> float:
    """The slack allowed between two computed doubles a and b."""
    return FLOAT_ABS_TOL + FLOAT_REL_TOL * max(abs(a), abs(b))


def float_le(a: float, b: float) -> bool:
    """a <= b, within the tolerance."""
    return a <= b or a - b <= float_tolerance(a, b)
