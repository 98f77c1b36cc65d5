"""The code layout of issue 32, checked on the source: one settings rule, errors by
kind, public helpers public, one shape of dbt Python model, and a pairwise reference
that imports nothing of the route the marts run."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import numpy as np
import pytest

from judge_bias.cli import error_line
from judge_bias.errors import (
    EXIT_FAILED,
    EXIT_NUMERICAL,
    EXIT_USAGE,
    InputError,
    NumericalError,
    SettingError,
)
from judge_bias.glm.fit import FitSettings
from judge_bias.glm.runner import GlmConfig
from judge_bias.settings import CI_LEVEL, setting

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = PROJECT / "python" / "judge_bias"


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PROJECT / "python").with_suffix("").parts)


def _imports(path: Path) -> list[ast.ImportFrom]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]


@pytest.mark.parametrize("unset", [None, "", "None"])
def test_unset_means_the_default_for_every_reader(unset: object) -> None:
    get = {"glm_draws": unset, "glm_seed": unset, "ci_level": unset, "glm_priors": unset}.get
    config = GlmConfig.from_vars(get)
    assert config.settings.draws == FitSettings().draws
    assert config.settings.seed == FitSettings().seed
    assert config.settings.ci_level == CI_LEVEL
    assert setting(get, "ci_level", 0.5, float) == 0.5


def test_a_bad_setting_names_the_var() -> None:
    with pytest.raises(SettingError, match="glm_draws: 'many'"):
        GlmConfig.from_vars({"glm_draws": "many"}.get)
    with pytest.raises(SettingError, match="ci_level must be between 0 and 1"):
        GlmConfig.from_vars({"ci_level": "1.5"}.get)


def test_ci_level_is_declared_once_in_dbt_project() -> None:
    text = (PROJECT / "dbt_project.yml").read_text(encoding="utf-8")
    assert len(re.findall(r"^\s*\+ci_level:", text, flags=re.M)) == 1
    assert "+ci_level: \"{{ var('ci_level', '') }}\"" in text


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (InputError("judge_ratings.csv: no header"), EXIT_USAGE),
        (SettingError("ci_level must be between 0 and 1"), EXIT_USAGE),
        (FileNotFoundError("no such folder"), EXIT_USAGE),
        (NumericalError("the separation check's linear program failed"), EXIT_NUMERICAL),
        (np.linalg.LinAlgError("singular matrix"), EXIT_NUMERICAL),
        (ValueError("operands could not be broadcast"), EXIT_FAILED),
        (KeyError("judge"), EXIT_FAILED),
    ],
)
def test_exit_codes_by_kind_of_error(exc: Exception, code: int) -> None:
    got, line = error_line(argparse.Namespace(command="build", db="x.duckdb"), exc)
    assert got == code
    assert "\n" not in line
    assert ("unexpected" in line) == (code == EXIT_FAILED)


def test_no_module_imports_another_modules_underscore_names() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in _imports(path):
            if node.module.startswith("judge_bias"):
                found += [
                    f"{_module(path)}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert not found, found


def test_the_pairwise_reference_imports_nothing_of_the_marts_route() -> None:
    # shared: the marts' columns (the contract), the length feature, stats helpers
    allowed = {"judge_bias.pairwise.columns", "judge_bias.pairwise.features"}
    for path in (PACKAGE / "pairwise" / "reference").glob("*.py"):
        for node in _imports(path):
            m = node.module
            if m.startswith("judge_bias.pairwise") and not m.startswith(
                "judge_bias.pairwise.reference"
            ):
                assert m in allowed, f"{path.name} imports {m}"
            if m == "judge_bias.pairwise":
                pytest.fail(f"{path.name} imports from judge_bias.pairwise: {node.names}")


def test_every_dbt_python_model_has_one_shape() -> None:
    """A literal config dict of dbt.config.get calls, a literal relations dict of
    dbt.ref calls, and one call into the package taking (ref, get, session)."""
    loaders = PROJECT / "models" / "staging" / "inputs" / "base"
    for path in (PROJECT / "models").rglob("*.py"):
        if path.parent == loaders:
            continue  # the input loaders: one call each, no parents
        fn = next(n for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef))
        body = [s for s in fn.body if not isinstance(s, ast.Expr)]
        assert [type(s).__name__ for s in body] == ["Assign", "Assign", "Return"], path.name
        config, relations, ret = body
        assert isinstance(config, ast.Assign) and isinstance(relations, ast.Assign)
        assert [t.id for t in config.targets] == ["config"]  # type: ignore[attr-defined]
        assert [t.id for t in relations.targets] == ["relations"]  # type: ignore[attr-defined]
        assert isinstance(config.value, ast.Dict) and isinstance(relations.value, ast.Dict)
        for key, value in zip(relations.value.keys, relations.value.values, strict=True):
            assert (
                isinstance(value, ast.Call) and ast.unparse(value) == f"dbt.ref({ast.unparse(key)})"
            )
        assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call)
        assert [ast.unparse(a) for a in ret.value.args] == [
            "relations.__getitem__",
            "config.get",
            "session",
        ], path.name
