"""Optional dependencies of the importers (pyproject's extras): the core install
does not carry them; an importer that needs one imports it through ``require``,
which turns its absence into a one-line error naming the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from judge_bias.errors import InputError


class MissingExtraError(InputError):
    """An optional dependency is not installed (a usage error: exit 2, one line)."""


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module``, or raise MissingExtraError naming ``pip install judge-bias[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{what} needs the optional dependency {module.split('.')[0]} "
            f"({exc.name or module} is not installed): pip install 'judge-bias[{extra}]'"
        ) from exc
