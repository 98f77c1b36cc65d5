"""Shared fixtures: built warehouses on the demo data and on broken inputs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

# The suite's many warehouse builds keep the GLMs off (each adds ~75 s of CPU on
# the demo); the GLM tests fit them directly. A test may set it back.
os.environ.setdefault("JUDGE_BIAS_GLM_MODELS", "none")

from judge_bias.warehouse.build import DEFAULT_DATA, PROJECT_DIR, BuildResult, build

DEMO_DIR = PROJECT_DIR / DEFAULT_DATA
SHARED_DATA = PROJECT_DIR.parent / "shared" / "data"


def query(db: Path, sql: str) -> pd.DataFrame:
    """Run one query on a built warehouse, read-only."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow (studies of minutes) run only with JUDGE_BIAS_SLOW=1;
    `make test` and CI skip them, and their figures are in docs/."""
    if os.environ.get("JUDGE_BIAS_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow study: set JUDGE_BIAS_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The warehouse built on the embedded demo data (dbt build + dbt tests + GE)."""
    return build(DEMO_DIR, tmp_path_factory.mktemp("demo") / "demo.duckdb")


FAITHFULNESS = SHARED_DATA / "play_favorites" / "Faithfulness.csv"
needs_shared = pytest.mark.skipif(not FAITHFULNESS.exists(), reason="../shared/data is not present")


@pytest.fixture(scope="session")
def pf_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The warehouse built on imported Play Favorites Faithfulness data."""
    from judge_bias.cli import main

    if not FAITHFULNESS.exists():
        pytest.skip("../shared/data is not present")
    out = tmp_path_factory.mktemp("pf") / "data"
    prompts = SHARED_DATA / "play_favorites" / "prompt_ids.csv"
    args = ["import", "play-favorites", str(FAITHFULNESS), str(prompts), "--out", str(out)]
    assert main(args) == 0
    return build(out, tmp_path_factory.mktemp("pf_db") / "pf.duckdb")


@pytest.fixture()
def demo_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo input directory."""
    target = tmp_path / "data"
    shutil.copytree(DEMO_DIR, target)
    return target


@pytest.fixture(scope="session")
def imported_build(tmp_path_factory: pytest.TempPathFactory):
    """`judge-bias import FORMAT FILES` then the build, once per session and format:
    call it with (format, files); returns (data directory, BuildResult)."""
    from tests.importing import import_and_build

    built: dict[str, tuple[Path, BuildResult]] = {}

    def get(fmt: str, files: list[Path]) -> tuple[Path, BuildResult]:
        if not files or not all(Path(f).exists() for f in files):
            pytest.skip(f"the {fmt} files are not present")
        if fmt not in built:
            built[fmt] = import_and_build(fmt, files, tmp_path_factory)
        return built[fmt]

    return get


_PEAKS = {"self": 0, "children": 0}
# test node id -> CPU seconds (user + system, this process and its finished
# children: dbt, Spark, chromium) spent in its setup, call and teardown; a session
# fixture's build is charged to the first test that asks for it
_CPU: dict[str, float] = {}


def _cpu_seconds() -> float:
    import resource

    return sum(
        u.ru_utime + u.ru_stime
        for u in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Charge each test the CPU time its protocol used (wall time misleads on a
    shared machine); JUDGE_BIAS_CPULOG=FILE also appends "seconds<TAB>node id"."""
    start = _cpu_seconds()
    yield
    spent = _cpu_seconds() - start
    _CPU[item.nodeid] = spent
    if path := os.environ.get("JUDGE_BIAS_CPULOG"):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{spent:.1f}\t{item.nodeid}\n")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """The CPU time of the session (this process and its finished children) and
    the tests that used most of it, beside pytest's own --durations (wall time)."""
    if not _CPU:
        return
    top = sorted(_CPU.items(), key=lambda kv: -kv[1])[:15]
    terminalreporter.write_sep("=", "most CPU (user + system, with child processes)")
    for nodeid, spent in top:
        terminalreporter.write_line(f"{spent:8.1f} s  {nodeid}")
    total = _cpu_seconds()
    terminalreporter.write_line(f"CPU time of the session: {total:.0f} s over {len(_CPU)} tests")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """JUDGE_BIAS_MEMLOG=FILE: append a line each time a test raises the peak resident
    memory of the pytest process or of its finished children by 100 MB or more
    (which test makes CI's peak)."""
    path = os.environ.get("JUDGE_BIAS_MEMLOG")
    if not path:
        return
    import resource

    for who, flag in (("self", resource.RUSAGE_SELF), ("children", resource.RUSAGE_CHILDREN)):
        peak = resource.getrusage(flag).ru_maxrss  # KiB on Linux
        if peak - _PEAKS[who] >= 100 * 1024:
            _PEAKS[who] = peak
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{who}\t{peak / 1024**2:.2f} GB\t{item.nodeid}\n")
