"""The one reader of settings (dbt vars, passed to the Python models as config
keys) and the defaults every topic shares. A topic's own defaults live in its
``settings.py`` (``bias.settings``, ``ppi.settings``, ``glm.fit.FitSettings``) and
``limits`` (memory budget and caps); each reads its vars through ``setting``.

One rule for "unset": dbt passes '' for a var the user did not set, and None,
'' and 'None' (the text YAML or a shell may give for a null) all mean unset, so the
topic's default applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from judge_bias.errors import SettingError

T = TypeVar("T")

UNSET = (None, "", "None")
# the level of every interval in the marts (bias regressions, GLMs, PPI): ci_level
CI_LEVEL = 0.90


def is_unset(value: object) -> bool:
    """Whether a config value means "not set" (None, '' or 'None')."""
    return isinstance(value, str | type(None)) and value in UNSET


def setting(get: Callable[[str], object], name: str, default: T, cast: Callable[[object], T]) -> T:
    """``cast(get(name))``, or ``default`` when the value is unset; a value ``cast``
    refuses becomes a SettingError naming the var."""
    value = get(name)
    if is_unset(value):
        return default
    try:
        return cast(value)
    except SettingError:
        raise
    except (TypeError, ValueError) as exc:
        raise SettingError(f"{name}: {value!r} is not a valid value ({exc})") from exc


def parse_ci_level(value: object) -> float:
    """A ci_level value: a number strictly between 0 and 1."""
    level = float(str(value))
    if not 0.0 < level < 1.0:
        raise SettingError(f"ci_level must be between 0 and 1, not {value!r}")
    return level
