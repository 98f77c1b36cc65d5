"""The settings of the comparison marts (model_comparisons, label_budget): the dbt vars
they read, their defaults here and only here; dbt passes '' for a var left unset."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from judge_bias.errors import SettingError
from judge_bias.settings import CI_LEVEL, setting

# Multiple-testing adjustments across the model pairs of one judge x dimension, named
# as statsmodels.stats.multitest.multipletests names them (the tests' reference).
ADJUSTMENTS = ("holm", "fdr_bh")


@dataclass(frozen=True)
class Settings:
    """dbt vars of the comparison marts (dbt_project.yml documents each).

    ci_level: the intervals' level; its complement is the tests' alpha.
    power: the power of the minimum detectable difference (two-sided test at alpha).
    target_half_width: label_budget's target half-width of the interval of a model's
    mean human score, on the normalised 0-1 scale.
    ppi_lambda: None tunes lambda per stratum (PPI++), a number in [0, 1] fixes it
    (the same var as ppi_model_scores)."""

    ci_level: float = CI_LEVEL  # shared: its home is judge_bias.settings
    power: float = 0.80
    target_half_width: float = 0.05
    ppi_lambda: float | None = None

    def __post_init__(self) -> None:
        for name in ("ci_level", "power"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise SettingError(f"{name} must be between 0 and 1, not {value!r}")
        if not 0.0 < self.target_half_width < 1.0:
            raise SettingError(
                f"budget_half_width must be in (0, 1) on the 0-1 scale, not "
                f"{self.target_half_width!r}"
            )
        if self.ppi_lambda is not None and not 0.0 <= self.ppi_lambda <= 1.0:
            raise SettingError(f"ppi_lambda must be empty or in [0, 1], not {self.ppi_lambda!r}")

    @property
    def alpha(self) -> float:
        return 1.0 - self.ci_level


def settings_from_config(config_get: Callable[[str], object]) -> Settings:
    """Settings from a dbt Python model's ``dbt.config.get`` (keys ci_level,
    comparison_power, budget_half_width, ppi_lambda)."""
    from judge_bias.ppi.settings import parse_lambda

    defaults = Settings()

    def _float(key: str, default: float) -> float:
        return setting(config_get, key, default, lambda v: float(str(v)))

    return Settings(
        ci_level=_float("ci_level", defaults.ci_level),
        power=_float("comparison_power", defaults.power),
        target_half_width=_float("budget_half_width", defaults.target_half_width),
        ppi_lambda=setting(config_get, "ppi_lambda", defaults.ppi_lambda, parse_lambda),
    )
