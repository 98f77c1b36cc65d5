"""The settings of the drift and stability marts: the dbt vars they read, with their
defaults here and only here (dbt passes '' for a var the user did not set)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from judge_bias.errors import SettingError
from judge_bias.settings import CI_LEVEL, setting


@dataclass(frozen=True)
class DriftSettings:
    """dbt vars of judge_drift, judge_stability and agreement_binary (docs/drift.md)."""

    ci_level: float = CI_LEVEL  # shared: its home is judge_bias.settings
    # a rating passes when its normalised score is at least this
    pass_threshold: float = 0.5
    # the drift flag's practical threshold on the 0-1 scale (shift, accuracy change)
    drift_min_shift: float = 0.05
    # the drift flag fires when the pass-flip rate's lower bound exceeds this: above
    # the judge's own rerun pass_cross_rate (a noisy unchanged judge flips too)
    drift_max_flip_rate: float = 0.20
    # prompt-cluster bootstrap resamples (kappa, alpha, AC1) and their seed
    n_boot: int = 500
    seed: int = 20250101

    def __post_init__(self) -> None:
        if not 0.0 < self.ci_level < 1.0:
            raise SettingError(f"ci_level must be between 0 and 1, not {self.ci_level}")
        if not 0.0 <= self.pass_threshold <= 1.0:
            raise SettingError(f"pass_threshold must be in [0, 1], not {self.pass_threshold}")
        if self.drift_min_shift < 0 or not 0 <= self.drift_max_flip_rate <= 1:
            raise SettingError("drift_min_shift must be >= 0 and drift_max_flip_rate in [0, 1]")
        if self.n_boot < 1:
            raise SettingError(f"n_boot must be at least 1, not {self.n_boot}")


def _as_int(value: object) -> Any:
    return int(str(value))


def _as_float(value: object) -> Any:
    return float(str(value))


def settings_from_config(config_get: Callable[[str], object]) -> DriftSettings:
    """DriftSettings from a dbt Python model's ``dbt.config.get`` (or dict.get), each
    var read through judge_bias.settings.setting (None, '' and 'None' are unset)."""
    defaults = DriftSettings()
    values: dict[str, object] = {}
    for f in fields(DriftSettings):
        cast = _as_int if f.type == "int" else _as_float
        values[f.name] = setting(config_get, f.name, getattr(defaults, f.name), cast)
    return DriftSettings(**values)  # type: ignore[arg-type]
