"""The settings of the PPI marts: the dbt vars they read, with their defaults in one
place (``PpiSettings``), read by ``judge_bias.settings.setting``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from judge_bias.errors import SettingError
from judge_bias.limits import Budget
from judge_bias.ppi.estimator import INTERVALS
from judge_bias.settings import CI_LEVEL, parse_ci_level, setting


@dataclass(frozen=True)
class PpiSettings:
    """ci_level of the PPI and human-only intervals; ppi_lambda None tunes lambda
    per stratum (PPI++), a number in [0, 1] fixes it (1: plain PPI, 0: the
    human-only mean); ppi_interval "skew" is Hall's skewness-corrected interval,
    "wald" ppi_py's."""

    ci_level: float = CI_LEVEL
    ppi_lambda: float | None = None
    ppi_interval: str = "skew"
    budget: Budget = field(default_factory=Budget)


def parse_lambda(value: object) -> float | None:
    """A ppi_lambda value: 'tuned' (PPI++) or a number in [0, 1]."""
    if value == "tuned":
        return None
    lam = float(value)  # type: ignore[arg-type]
    if not 0 <= lam <= 1:
        raise SettingError(f"ppi_lambda must be empty (tuned) or in [0, 1], not {value!r}")
    return lam


def parse_interval(value: object) -> str:
    """A ppi_interval value: one of ``estimator.INTERVALS``."""
    if value not in INTERVALS:
        raise SettingError(f"ppi_interval must be one of {', '.join(INTERVALS)}, not {value!r}")
    return str(value)


def settings_from_config(get: Callable[[str], object]) -> PpiSettings:
    """PpiSettings from a dbt Python model's config (``get(key)``)."""
    defaults = PpiSettings()
    return PpiSettings(
        ci_level=setting(get, "ci_level", defaults.ci_level, parse_ci_level),
        ppi_lambda=setting(get, "ppi_lambda", defaults.ppi_lambda, parse_lambda),
        ppi_interval=setting(get, "ppi_interval", defaults.ppi_interval, parse_interval),
        budget=Budget.from_dbt(get),
    )
