"""The sufficient statistics of the comparison marts from unit rows, as the SQL
computes them (int_ppi_stratum_moments, int_comparison_cross_moments): for tests,
simulations and small data held in pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_bias.comparisons.paired import CROSS_JUDGE, KEYS, SEP
from judge_bias.ppi.clusters import cross_moments
from judge_bias.ppi.estimator import moments as stratum_moments

UNIT_COLUMNS = ("judge", "is_panel", "model", "prompt_id", "dimension", "stratum", "y", "yhat")


def moments_from_units(units: pd.DataFrame) -> pd.DataFrame:
    """int_ppi_stratum_moments' columns per judge x model x dimension x stratum from
    units with y (NaN: unlabelled) and yhat."""
    rows = []
    for key, g in units.groupby([*KEYS, "model", "stratum"], sort=True):
        lab = g["y"].notna().to_numpy()
        m = stratum_moments(g["y"].to_numpy()[lab], g["yhat"].to_numpy()[lab],
                            g["yhat"].to_numpy()[~lab])  # fmt: skip
        rows.append(dict(zip([*KEYS, "model", "stratum"], key, strict=True)) | m)
    out = pd.DataFrame(rows)
    out["n_human_na"] = 0
    out["n_judge_na"] = 0
    return out


def cross_from_units(units: pd.DataFrame) -> pd.DataFrame:
    """int_comparison_cross_moments' columns: per judge x dimension x pair of model x
    stratum, the CROSS_SUMS over the pairs of units of one prompt (a unit: a model x
    dimension at the prompt; pairs ordered by model then dimension) and gg, the sum of
    the products of the judge scores centred on their model x stratum's mean."""
    u = units.copy()
    u["labelled"] = u["y"].notna()
    u["_stratum"] = u["stratum"]
    u["stratum"] = u["model"] + SEP + u["stratum"]
    u["unit"] = u["model"] + SEP + u["unit_dimension"]
    cross = cross_moments(u, KEYS, ["prompt_id"], "unit")
    u["dg"] = u["yhat"] - u.groupby([*KEYS, "stratum"])["yhat"].transform("mean")
    cols = [*KEYS, "prompt_id", "unit", "stratum", "dg"]
    pairs = u[cols].merge(u[cols], on=[*KEYS, "prompt_id"], suffixes=("_a", "_b"))
    pairs = pairs[pairs["unit_a"] < pairs["unit_b"]]
    pairs[CROSS_JUDGE] = pairs["dg_a"] * pairs["dg_b"]
    gg = pairs.groupby([*KEYS, "stratum_a", "stratum_b"], as_index=False)[CROSS_JUDGE].sum()
    cross = cross.merge(gg, on=[*KEYS, "stratum_a", "stratum_b"], how="left")
    if cross.empty:  # no prompt with two units
        names = ["first_model", "first_stratum", "second_model", "second_stratum"]
        return cross.drop(columns=["stratum_a", "stratum_b"]).reindex(
            columns=[*KEYS, *names, *cross.columns.drop([*KEYS, "stratum_a", "stratum_b"])]
        )
    for side, name in (("a", "first"), ("b", "second")):
        split = cross[f"stratum_{side}"].str.split(SEP, n=1, expand=True)
        cross[f"{name}_model"], cross[f"{name}_stratum"] = split[0], split[1]
    return cross.drop(columns=["stratum_a", "stratum_b"])


def pooled_units(units: pd.DataFrame) -> pd.DataFrame:
    """``units`` (one dimension each) plus their copies in the rows pooling the
    dimensions (dimension `all`); unit_dimension keeps the unit's own dimension."""
    one = units.assign(unit_dimension=units["dimension"])
    pooled = one.assign(dimension="all")
    return pd.concat([one, pooled], ignore_index=True)


def statistics(units: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(moments, cross) from units of one dimension each (``UNIT_COLUMNS``)."""
    missing = [c for c in UNIT_COLUMNS if c not in units.columns]
    if missing:
        raise ValueError(f"unit columns missing: {', '.join(missing)}")
    u = pooled_units(units)
    if np.isnan(u["yhat"].to_numpy(dtype=float)).any():
        raise ValueError("a unit without a judge score: leave it out (status judge_na)")
    return moments_from_units(u), cross_from_units(u)
