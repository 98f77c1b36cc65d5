"""Shared fixtures: built warehouses on the demo data and on broken inputs."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
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


_OTHER_TIER = pytest.StashKey[int]()


def query(db: Path, sql: str) -> pd.DataFrame:
    """Run one query on a built warehouse, read-only."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


# Two tiers (issue 34): `make test` runs the quick tier, `make test-full` the full
# tier, CI (.ci/run) both; a plain `pytest` runs every test. The full tier is the test
# files that build warehouses of their own beyond the shared ones (demo_build,
# broken, gapped_demo, pf_build) or start another engine or program: each importer
# end to end on its real files, the many-folder studies, the Spark route, the
# browser, other dbt projects and build routes, the Bayesian GLMs against their
# references. The quick tier keeps every unit and statistical test, the shared
# builds and every test that reads them. JUDGE_BIAS_TIER=quick|full selects one.
FULL_TIER = frozenset({
    # the Spark route (one JVM for all three)
    "test_spark", "test_spark_route", "test_spark_aggregates",
    # many folders built: generated valid data, CSV fuzzing, awkward folders
    "test_valid_data_property", "test_csv_fuzz", "test_awkward_folders",
    # each importer end to end: import the real files, build, reconcile
    "test_langfuse_import", "test_promptfoo_import", "test_mlflow_import",
    "test_deepeval_import", "test_inspect_import", "test_hibayes_import",
    "test_mapping_import", "test_judge_bench", "test_alpaca_eval", "test_llmbar",
    "test_mt_bench", "test_self_recognition",
    # other projects and build routes: a consumer dbt project, inputs from relations,
    # the front door's vars and plain dbt, three incremental loads, the BI snapshot
    # under a reader, the profile, a build and a bench stopped by SIGTERM
    "test_dbt_package", "test_input_relations", "test_front_door", "test_incremental",
    "test_bi_snapshot", "test_bench_profile", "test_interrupt",
    # a whole build on a warehouse with a write-ahead log DuckDB refuses (its own build)
    "test_stale_wal_build",
    # the PPI comparisons with strata that leave out the dimension (a build of its own)
    "test_comparison_strata",
    # the report in headless Chromium
    "test_report_browser",
    # the Bayesian GLMs against HiBayes' specs, MLEs, row-level fits, planted values
    "test_glm_hibayes", "test_glm_mle", "test_glm_hierarchical", "test_glm_agreement",
    "test_glm_sampler", "test_glm_engine", "test_glm_planted", "test_glm_items_planted",
})  # fmt: skip
TIERS = ("quick", "full")


def tier_of(nodeid: str) -> str:
    return "full" if Path(nodeid.split("::", 1)[0]).stem in FULL_TIER else "quick"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """JUDGE_BIAS_TIER=quick|full keeps one tier's tests (the rest deselected, and
    counted at the end). Tests marked slow (studies of minutes) run only with
    JUDGE_BIAS_SLOW=1; `make test` and CI skip them, and their figures are in docs/."""
    tier = os.environ.get("JUDGE_BIAS_TIER", "")
    if tier:
        if tier not in TIERS:
            raise pytest.UsageError(f"JUDGE_BIAS_TIER={tier!r}: expected one of {TIERS}")
        other = [item for item in items if tier_of(item.nodeid) != tier]
        if other:
            config.hook.pytest_deselected(items=other)
            items[:] = [item for item in items if tier_of(item.nodeid) == tier]
            config.stash[_OTHER_TIER] = len(other)
            if hasattr(config, "workeroutput"):  # an xdist worker: tell the controller
                config.workeroutput["other_tier"] = len(other)
    if os.environ.get("JUDGE_BIAS_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow study: set JUDGE_BIAS_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# `make test` runs `pytest -n 2 --dist loadfile` (pytest-xdist): the tests of one file
# run on one worker, so a module fixture's build is made once; here loadfile also
# keeps the files of each group below on one worker.
XDIST_GROUPS = {
    # they share the session's broken-input build (test_bad_inputs, test_scorecard)
    # and its gapped_demo build (test_scorecard, test_input_reconciliation)
    "broken": ("test_bad_inputs", "test_scorecard", "test_input_reconciliation"),
    # they share imported_build's warehouses (alpaca-eval, llmbar, self-recognition,
    # play-favorites: the session's pf_build is that one), the Spark tests share the
    # session's spark_route (one Spark stage for both), and they are the tests that
    # hold 2-3 GB at once (a Spark JVM, chromium, a large simulation, a second dbt
    # project): one at a time keeps two workers < 4 GB. ~1,100 s of CPU (CI), under
    # half of the suite's, so this group does not set the wall time of two workers.
    "imported_and_large": ("test_alpaca_eval", "test_judge_bench", "test_llmbar",
                           "test_pairwise_human", "test_report_browser", "test_scorecard_planted",
                           "test_win_rates", "test_spark", "test_spark_route",
                           "test_spark_aggregates", "test_dbt_package", "test_comparisons",
                           "test_agreement_marts", "test_gam", "test_play_favorites",
                           "test_regression", "test_sufficient"),
}  # fmt: skip
GROUP_OF = {module: group for group, modules in XDIST_GROUPS.items() for module in modules}


def xdist_scope(nodeid: str) -> str:
    """The unit --dist loadfile sends to one worker: the test's group, else its file."""
    path = nodeid.split("::", 1)[0]
    return GROUP_OF.get(Path(path).stem, path)


if importlib.util.find_spec("xdist") is not None:
    # optional: with `-p no:xdist` pytest knows no such hook (and must not refuse it)
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(config: pytest.Config, log):
        """--dist loadfile with the groups above; any other --dist is xdist's own."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class GroupedFiles(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return xdist_scope(nodeid)

        return GroupedFiles(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(node, error) -> None:
        """The controller learns from a worker how many tests the other tier has."""
        other = getattr(node, "workeroutput", {}).get("other_tier")
        if other is not None:
            node.config.stash[_OTHER_TIER] = other


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The warehouse built on the embedded demo data (dbt build + dbt tests + GE)."""
    return build(DEMO_DIR, tmp_path_factory.mktemp("demo") / "demo.duckdb")


FAITHFULNESS = SHARED_DATA / "play_favorites" / "Faithfulness.csv"
needs_shared = pytest.mark.skipif(not FAITHFULNESS.exists(), reason="../shared/data is not present")


PF_FILES = [FAITHFULNESS, SHARED_DATA / "play_favorites" / "prompt_ids.csv"]


@pytest.fixture(scope="session")
def pf_build(imported_build) -> BuildResult:
    """The warehouse built on imported Play Favorites Faithfulness data: `judge-bias
    import play-favorites` of PF_FILES, then the build; the same warehouse as
    imported_build("play-favorites", PF_FILES) (test_report_browser), built once."""
    return imported_build("play-favorites", PF_FILES)[1]


@pytest.fixture(scope="session")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuildResult, set, Path]:
    """The warehouse built on the demo with bad rows appended (tests/test_bad_inputs.py,
    read by it and test_scorecard): (BuildResult, expected rejections, data folder)."""
    from tests.test_bad_inputs import build_broken

    return build_broken(tmp_path_factory)


@pytest.fixture(scope="session")
def gapped_demo(tmp_path_factory: pytest.TempPathFactory):
    """The warehouse built on the demo without its optional pairwise and perturbation
    files and with two broken rating records, read by test_scorecard and
    test_input_reconciliation: (BuildResult, the broken records'
    tests.test_input_reconciliation.break_records)."""
    from tests.test_input_reconciliation import build_gapped_demo

    return build_gapped_demo(tmp_path_factory)


@pytest.fixture(scope="session")
def spark_route(tmp_path_factory: pytest.TempPathFactory):
    """`build(DEMO_DIR, engine="spark")` whose Spark stage also builds test_spark's
    broken copy of the demo: one Spark session for test_spark and test_spark_route
    (tests.test_spark.spark_route_and_broken_copy). (BuildResult, the copy, its export)."""
    from tests.test_spark import spark_route_and_broken_copy

    return spark_route_and_broken_copy(tmp_path_factory)


@pytest.fixture()
def dbt_children(monkeypatch: pytest.MonkeyPatch) -> list:
    """The command lines of the dbt child processes started during the test
    (``python -m judge_bias.warehouse.dbt_parse``), in order."""
    started: list = []
    popen = subprocess.Popen

    def counted(cmd, *args, **kwargs):
        if "judge_bias.warehouse.dbt_parse" in cmd:
            started.append(cmd)
        return popen(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counted)
    return started


@pytest.fixture()
def demo_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo input directory."""
    target = tmp_path / "data"
    shutil.copytree(DEMO_DIR, target)
    return target


@pytest.fixture(scope="session")
def imported_build(tmp_path_factory: pytest.TempPathFactory):
    """`judge-bias import FORMAT FILES` then the build, once per session, format and files:
    call it with (format, files); returns (data directory, BuildResult)."""
    from tests.importing import import_and_build

    built: dict[tuple[str, tuple[Path, ...]], tuple[Path, BuildResult]] = {}

    def get(fmt: str, files: list[Path]) -> tuple[Path, BuildResult]:
        if not files or not all(Path(f).exists() for f in files):
            pytest.skip(f"the {fmt} files are not present")
        key = (fmt, tuple(Path(f).resolve() for f in files))  # the same import, the same build
        if key not in built:
            built[key] = import_and_build(fmt, files, tmp_path_factory)
        return built[key]

    return get


_PEAKS = {"self": 0, "children": 0}
# test node id -> CPU seconds (user + system, the process running the test and its
# finished children: dbt, Spark, chromium) spent in its setup, call and teardown; a
# session fixture's build is charged to the first test that asks for it. Measured
# where the test runs (a pytest-xdist worker or pytest itself), carried in the
# teardown report's user_properties, collected where reports are logged.
_CPU: dict[str, float] = {}
_CPU_START = pytest.StashKey[float]()
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1"; "" without xdist


def cpu_seconds() -> float:
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
    """Start each test's CPU clock (wall time misleads on a shared machine)."""
    item.stash[_CPU_START] = cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """The teardown report carries the CPU seconds of the test's whole protocol."""
    outcome = yield
    if call.when == "teardown" and _CPU_START in item.stash:
        spent = cpu_seconds() - item.stash[_CPU_START]
        outcome.get_result().user_properties.append(("cpu_seconds", spent))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect each test's CPU seconds (in pytest, not in a worker);
    JUDGE_BIAS_CPULOG=FILE also appends "seconds<TAB>node id"."""
    if _WORKER or report.when != "teardown":
        return
    spent = dict(report.user_properties).get("cpu_seconds")
    if not isinstance(spent, float):
        return
    nodeid = report.nodeid
    _CPU[nodeid] = spent
    if path := os.environ.get("JUDGE_BIAS_CPULOG"):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{spent:.1f}\t{nodeid}\n")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """The CPU time of the tests (with their finished children) and the tests that
    used most of it, beside pytest's own --durations (wall time); with a tier, how
    many tests the other tier has."""
    tier = os.environ.get("JUDGE_BIAS_TIER", "")
    if other := config.stash.get(_OTHER_TIER, 0):
        rest = "make test-full" if tier == "quick" else "make test"
        terminalreporter.write_line(
            f"tier {tier}: {other} tests of the other tier not run here "
            f"(`{rest}` runs them; CI runs both)"
        )
    if not _CPU:
        return
    top = sorted(_CPU.items(), key=lambda kv: -kv[1])[:15]
    terminalreporter.write_sep("=", "most CPU (user + system, with child processes)")
    for nodeid, spent in top:
        terminalreporter.write_line(f"{spent:8.1f} s  {nodeid}")
    total = sum(_CPU.values())
    terminalreporter.write_line(f"CPU time of the tests: {total:.0f} s over {len(_CPU)} tests")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """JUDGE_BIAS_MEMLOG=FILE: append a line each time a test raises the peak resident
    memory of the process running it (pytest or an xdist worker, named after "self")
    or of its finished children by 100 MB or more (which test makes CI's peak)."""
    path = os.environ.get("JUDGE_BIAS_MEMLOG")
    if not path:
        return
    import resource

    for who, flag in (("self", resource.RUSAGE_SELF), ("children", resource.RUSAGE_CHILDREN)):
        peak = resource.getrusage(flag).ru_maxrss  # KiB on Linux
        if peak - _PEAKS[who] >= 100 * 1024:
            _PEAKS[who] = peak
            name = f"{who} {_WORKER}".strip()
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{name}\t{peak / 1024**2:.2f} GB\t{item.nodeid}\n")
