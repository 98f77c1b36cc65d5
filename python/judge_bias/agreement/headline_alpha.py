"""The headline Krippendorff alpha of agreement_annotators: the alpha at the level of
measurement of the dimension's scale (rating_scales.scale_level, carried as
int_dimension_scales.level_of_measurement). A categorical scale scored 0..k-1 only
to store its labels (JUDGE-BENCH's No / Yes / Unsure) is nominal: interval alpha
would read 'Unsure' as twice 'No'. A scale that states no level is interval, the
headline before the column existed. The pooled row (`all`) takes the level every
dimension shares; with mixed levels it has no headline alpha, and its notes name
each dimension's level.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

LEVELS = ("nominal", "ordinal", "interval")
DEFAULT_LEVEL = "interval"


def headline_level(dimension_levels: list[str]) -> str:
    """The level of measurement of a row's headline alpha: the dimension's level (one
    entry), or on the pooled row the level every dimension shares, else ``mixed``."""
    distinct = set(dimension_levels)
    return distinct.pop() if len(distinct) == 1 else "mixed"


def with_headline_alpha(out: pd.DataFrame, levels: Mapping[str, str] | None) -> pd.DataFrame:
    """``level_of_measurement`` and ``alpha`` (the alpha at that level) beside the
    three alphas of agreement_annotators. ``levels``: dimension -> nominal, ordinal or
    interval (int_dimension_scales); a dimension missing from it is interval. The
    pooled row takes the shared level; with mixed levels its alpha is null and the
    notes say so (one level's distance on another level's scores would be wrong)."""
    levels = levels or {}
    dims = [d for d in out["dimension"] if d != "all"]
    level_of = {d: levels.get(d, DEFAULT_LEVEL) for d in dims}
    pooled = headline_level(list(level_of.values())) if dims else DEFAULT_LEVEL
    out = out.copy()
    out["level_of_measurement"] = [pooled if d == "all" else level_of[d] for d in out["dimension"]]
    out["alpha"] = [
        r[f"alpha_{r['level_of_measurement']}"] if r["level_of_measurement"] in LEVELS else None
        for r in out.to_dict("records")
    ]
    if pooled == "mixed":
        mixed = ", ".join(f"{d} {level_of[d]}" for d in sorted(level_of))
        note = f"no pooled headline alpha: the dimensions' scales mix levels ({mixed})"
        is_all = out["dimension"] == "all"
        out.loc[is_all, "notes"] = [
            f"{n}; {note}" if isinstance(n, str) else note for n in out.loc[is_all, "notes"]
        ]
    out["level_of_measurement"] = out["level_of_measurement"].astype("string")
    out["alpha"] = pd.to_numeric(out["alpha"]).astype("float64")
    out["notes"] = out["notes"].astype("string")
    return out
