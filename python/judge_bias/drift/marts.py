"""The dbt models' entry points of judge_drift, judge_stability and agreement_binary:
(ref, get, session), the one shape of every model file; the rows are read whole
(per item and judge: bounded by the ratings the build holds)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.drift.settings import settings_from_config
from judge_bias.drift.stability import judge_stability_mart
from judge_bias.drift.versions import judge_drift_mart
from judge_bias.stats.binary_agreement import agreement_binary_mart
from judge_bias.warehouse.frames import to_pandas

Ref = Callable[[str], object]
Get = Callable[[str], object]


def judge_drift(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """judge_drift from int_drift_items and int_judge_versions."""
    items, pairs = to_pandas(ref("int_drift_items")), to_pandas(ref("int_judge_versions"))
    return judge_drift_mart(items, pairs, settings_from_config(get))


def judge_stability(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """judge_stability from int_stability_items."""
    return judge_stability_mart(to_pandas(ref("int_stability_items")), settings_from_config(get))


def agreement_binary(ref: Ref, get: Get, session=None) -> pd.DataFrame:
    """agreement_binary from int_agreement_binary_ratings."""
    s = settings_from_config(get)
    return agreement_binary_mart(
        to_pandas(ref("int_agreement_binary_ratings")),
        pass_threshold=s.pass_threshold,
        level=s.ci_level,
        n_boot=s.n_boot,
        seed=s.seed,
    )
