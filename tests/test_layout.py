"""The README's Layout picture is true: every path it names exists, every dbt model
folder and every Python subpackage is named in it; a module over 500 lines is a
warning (split on meaning, not to meet a number), never a failure."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = PROJECT / "python" / "judge_bias"
MAX_MODULE_LINES = 500


def _layout() -> str:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Layout")
    return readme[start : readme.index("\n## ", start + 1)]


def _named_paths(text: str) -> set[str]:
    return set(
        re.findall(r"(?<![\w/.])((?:models|python|macros|dbt_tests|seeds|tests)/[\w/.]*)", text)
    )


def test_every_path_the_layout_names_exists() -> None:
    paths = _named_paths(_layout())
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (PROJECT / p.rstrip(".")).exists())
    assert not missing, f"README Layout names paths that do not exist: {missing}"


def test_every_model_folder_and_subpackage_is_named() -> None:
    named = {p.rstrip("/") for p in _named_paths(_layout())}
    folders = {
        str(d.relative_to(PROJECT))
        for d in (PROJECT / "models").rglob("*")
        if d.is_dir() and any(f.suffix in {".sql", ".py"} for f in d.iterdir())
    }
    subpackages = {
        str(d.relative_to(PROJECT))
        for d in PACKAGE.iterdir()
        if d.is_dir() and (d / "__init__.py").exists()
    }
    unnamed = sorted((folders | subpackages) - named)
    assert not unnamed, f"README Layout does not name: {unnamed}"


def test_package_root_holds_only_the_entry_points() -> None:
    # the command, and the vocabularies every subpackage imports: the resource
    # limits, the error kinds and the one settings reader
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "cli.py", "errors.py", "limits.py", "settings.py"], root


def test_every_subpackage_says_what_it_is_for() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        text = init.read_text(encoding="utf-8")
        assert text.startswith('"""'), f"{init} has no docstring"


def _packages() -> list[Path]:
    """Every package under judge_bias but the root (subpackages of subpackages too:
    inputs/importers, pairwise/reference)."""
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


def _modules(package: Path) -> set[str]:
    """The package's modules and subpackages, by name."""
    files = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    return files | {p.parent.name for p in package.glob("*/__init__.py")}


def test_every_package_lists_every_module() -> None:
    """The docstring of every package has a ``- ``name``:`` line for each of its
    modules and subpackages; a package whose ``__init__`` only lists its modules
    (no imports) has them all in ``__all__``, where one that re-exports functions
    (glm, report, importers) keeps its API there. Fails on session 22's warehouse
    docstring (no checks, floats, frames, gx, incremental, spark, glm_fit_status) and
    on session 23's others (glm 11, importers 16, bench 5, inputs 3, stats 3 missing)."""
    import ast

    packages = _packages()
    assert {"warehouse", "importers", "reference"} <= {p.name for p in packages}
    for package in packages:
        init = package / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or ""
        listed = set(re.findall(r"^- ``(\w+)``:", doc, flags=re.MULTILINE))
        modules = _modules(package)
        assert listed == modules, (package.name, sorted(modules - listed), sorted(listed - modules))
        imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        exported = [
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
        ]
        if exported and not imports:
            assert set(exported[0]) == modules, (package.name, sorted(modules - set(exported[0])))


def test_long_modules_are_a_warning() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    if long:
        warnings.warn(
            f"modules over {MAX_MODULE_LINES} lines (split where the meaning splits): {long}",
            stacklevel=1,
        )
