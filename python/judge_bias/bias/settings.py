"""The settings of the bias analyses: the dbt vars they read, with their defaults in one
place (``Settings``), read by ``judge_bias.settings.setting`` (its one rule for unset).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from judge_bias.bias.gam import MIN_KNOTS, N_KNOTS
from judge_bias.bias.regression import (
    MIN_TERM_SUPPORT,
    SE_TYPES,
)
from judge_bias.errors import SettingError
from judge_bias.limits import Budget
from judge_bias.settings import CI_LEVEL, setting


@dataclass(frozen=True)
class Settings:
    """dbt vars of the bias analyses (dbt_project.yml documents each)."""

    se_type: str = "HC0"
    ci_level: float = CI_LEVEL
    weakest_k: int = 2
    weakest_models: tuple[str, ...] = ()
    task_groups: dict[str, str] = field(default_factory=dict)
    min_term_support: int = MIN_TERM_SUPPORT
    gam_knots: int = N_KNOTS
    budget: Budget = field(default_factory=Budget)  # memory_budget, max_fits, ...

    def __post_init__(self) -> None:
        if self.se_type not in SE_TYPES:
            raise SettingError(
                f"se_type must be one of {', '.join(SE_TYPES)}, not {self.se_type!r}"
            )
        if not 0.0 < self.ci_level < 1.0:
            raise SettingError(f"ci_level must be between 0 and 1, not {self.ci_level}")
        if self.gam_knots < MIN_KNOTS:
            raise SettingError(
                f"gam_knots must be at least {MIN_KNOTS} (a natural cubic spline on fewer "
                f"knots is a straight line), not {self.gam_knots}"
            )


def settings_from_config(config_get: Callable[[str], object]) -> Settings:
    """Settings from a dbt Python model's ``dbt.config.get``."""

    defaults = Settings()  # the one home of the defaults

    def _get(key: str) -> object:
        return setting(config_get, key, getattr(defaults, key), lambda v: v)

    weakest = _get("weakest_models")
    if isinstance(weakest, str):
        weakest = tuple(w.strip() for w in weakest.split(",") if w.strip())
    elif not isinstance(weakest, list | tuple):
        raise SettingError(
            f"weakest_models is a list of model names, not {weakest!r} "
            "(weakest_k sets how many weakest models the data chooses)"
        )
    groups = _get("task_groups")
    if isinstance(groups, str):
        groups = ast.literal_eval(groups)  # a dict written as text, JSON or Python
    return Settings(
        se_type=str(_get("se_type")),
        ci_level=float(str(_get("ci_level"))),
        weakest_k=int(str(_get("weakest_k"))),
        weakest_models=tuple(weakest),
        task_groups=dict(groups),  # type: ignore[call-overload]
        min_term_support=int(str(_get("min_term_support"))),
        gam_knots=int(str(_get("gam_knots"))),
        budget=Budget.from_dbt(config_get),
    )
