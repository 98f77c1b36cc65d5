"""Run the warehouse: check the input folder, dbt build in two phases (the
checked inputs and the quality marts first, then the input gates, then the rest),
the validation suites with the BI snapshot's copy of the marts beside them, then
(only when they pass) the snapshot published; the build record says how far it
got."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from judge_bias.errors import InputError
from judge_bias.inputs import loading
from judge_bias.inputs.summary import FileCounts, gate_failures, summarise_inputs
from judge_bias.limits import DUCKDB_MEMORY_ENV, duckdb_memory_limit, duckdb_threads
from judge_bias.warehouse import dbt_parse
from judge_bias.warehouse.dbt_child import (
    PHASES_FLAG,
    BuildError,
    DbtChild,
    dbt_child,
    meaningful_lines,
)
from judge_bias.warehouse.dbt_vars import VarsError, dbt_args, input_relations, split_data_dir
from judge_bias.warehouse.glm_fit_status import glm_fit_summary_of
from judge_bias.warehouse.incremental import drop_load_temps, guard_load, incremental_vars
from judge_bias.warehouse.locks import lock_message, set_aside_stale_wal, stale_wal
from judge_bias.warehouse.provenance import (
    FAILED,
    OK,
    VALIDATION_FAILED,
    BuildRecord,
    running_build,
    validation_record,
    write_validation_record,
)
from judge_bias.warehouse.snapshot import (
    CopyStop,
    copy_marts,
    discard_snapshot,
    finish_snapshot,
    mart_docs,
    remove_stale_tmp,
)

if TYPE_CHECKING:
    from judge_bias.warehouse.validation import ValidationReport

PROJECT_DIR = Path(os.environ.get("JUDGE_BIAS_PROJECT_DIR", Path(__file__).resolve().parents[3]))
DEFAULT_DB = Path("warehouse") / "judge_bias.duckdb"
DEFAULT_DATA = Path("data") / "demo"
# dbt's parse kept for the next new warehouse (judge_bias.warehouse.dbt_parse)
PARSE_CACHE = PROJECT_DIR / "target" / "parse_cache"


@dataclass
class BuildResult:
    db_path: Path
    validation: ValidationReport
    bi_path: Path | None = None  # the published snapshot; None when validation failed
    inputs: list[FileCounts] = field(default_factory=list)  # per-file counts and reasons
    # from the input folder check, then the failed and warning GLM fits (glm_fits)
    warnings: list[str] = field(default_factory=list)
    # an incremental build's failed load undone (incremental.ROLLED_BACK), else None
    rolled_back: str | None = None


def target_dir(db_path: Path) -> Path:
    """Where dbt writes its artefacts for this warehouse."""
    if db_path.resolve() == (PROJECT_DIR / DEFAULT_DB).resolve():
        return PROJECT_DIR / "target"
    return db_path.parent / f"{db_path.stem}.dbt" / "target"


def default_bi_path(db_path: Path) -> Path:
    """warehouse/bi.duckdb beside the default warehouse; <stem>.bi.duckdb otherwise."""
    if db_path.resolve() == (PROJECT_DIR / DEFAULT_DB).resolve():
        return db_path.with_name("bi.duckdb")
    return db_path.with_name(f"{db_path.stem}.bi.duckdb")


def validate(db_path: Path, on_load: bool = False) -> ValidationReport:
    """The validation suites (Great Expectations is imported only when they run).
    ``on_load``: an incremental build's, the input files as read and the facts on its
    load's rows (judge_bias.warehouse.validation.load_scope), the rest whole."""
    from judge_bias.warehouse.validation import validate as run_suites

    return run_suites(db_path, on_load=on_load)


def warm_validation() -> threading.Thread | None:
    """Import the validation suites (Great Expectations: ~2.9 CPU s, one thread) in a
    thread of their own, started as dbt's child starts: while the child imports dbt
    and parses (one core) the build's process only waits on its output, so the
    import takes the idle core instead of lengthening the build's serial tail, where
    the suites run beside the BI snapshot's copy on both cores (issue 34). A failed
    import is left to the suites' own import, which raises it where it did before;
    a thread that cannot start (the process's thread limit) leaves the import to the
    tail too (None), a step that only saves time never failing a build (review18b)."""

    def work() -> None:
        with contextlib.suppress(BaseException):
            from judge_bias.warehouse.expectations import suites

            suites()

    thread = threading.Thread(target=work, name="gx-import", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # "can't start new thread"
        return None
    return thread


# The input gates read these marts (models/marts/quality/). `judge-bias build` builds
# them and their parents (loaders, staging, the checked inputs) with their tests
# first and checks the gates on them, so a folder that fails the gates fails in
# seconds, before the fits; the rest of the DAG is built only when they pass.
GATE_MARTS = ("input_row_counts", "rejected_rows")
# the first phase: the gate marts and their parents, and the judge ratings' facts,
# which every model of the second phase waits on: built where DuckDB has every core
# (the second phase runs it on one: dbt_parse.second_phase_threads), the facts at 10M
# took 12 s alone there against ~6 s here
FIRST_PHASE_MODELS = (*GATE_MARTS, "fct_judge_ratings")
GATE_SELECTION = [f"+{name}" for name in FIRST_PHASE_MODELS]
GATE_RESULTS = "run_results.gates.json"  # the first phase's run_results, kept
# the first phase's models (schema, alias), written instead of its manifest.json
GATE_MODELS = "models.gates.json"


def validate_gates(db_path: Path) -> ValidationReport:
    """The validation suites on what the first phase built: the input files as read
    (the inputs suite) and the gate marts; a failure here is one the whole
    validation would report."""
    from judge_bias.warehouse.expectations import suites
    from judge_bias.warehouse.validation import validate as run_suites

    return run_suites(db_path, only=[*suites()["inputs"], *GATE_MARTS])


def _executed(run_results: Path) -> set[str]:
    """The unique ids of the nodes a dbt command ran."""
    try:
        return {r["unique_id"] for r in json.loads(run_results.read_text())["results"]}
    except (OSError, ValueError, KeyError):
        return set()


def drop_unbuilt_models(db_path: Path, built: set[str]) -> list[str]:
    """Drop the tables and views of the models the first phase did not build: after
    a failed gate they would be the previous build's, beside this build's inputs
    (the report would show stale fits). The BI snapshot keeps the last validated
    marts. Returns the names dropped."""
    # every model of the project: the first phase writes their schema and alias
    # instead of its manifest (dbt_parse.MODELS_ENV)
    models = json.loads((target_dir(db_path) / GATE_MODELS).read_text())
    stale = {(schema, alias) for uid, (schema, alias) in models.items() if uid not in built}
    con = duckdb.connect(str(db_path))
    try:
        kinds = con.execute(
            "select table_schema, table_name, table_type from information_schema.tables "
            "where table_catalog = current_database()"
        ).fetchall()
        dropped = []
        for schema, name, kind in kinds:
            if (schema, name) in stale:
                what = "view" if kind == "VIEW" else "table"
                con.execute(f'drop {what} if exists "{schema}"."{name}"')
                dropped.append(name)
        return sorted(dropped)
    finally:
        con.close()


def dbt_env(db_path: Path, data_dir: Path | None = None) -> dict[str, str]:
    """The environment dbt runs in: no telemetry, the warehouse file and the data
    folder chosen. Paths travel as environment variables, read by env_var in
    profiles.yml and dbt_project.yml: never rendered as templates nor parsed as YAML."""
    env = dict(os.environ)
    env.update(
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DO_NOT_TRACK="1",
        GX_ANALYTICS_ENABLED="False",
        JUDGE_BIAS_DB=str(db_path),
        DBT_PROFILES_DIR=str(PROJECT_DIR),
    )
    if data_dir is not None:
        env["JUDGE_BIAS_DATA_DIR"] = str(data_dir)
    # numpy's OpenBLAS on one thread in the Python models (unless set): dbt already
    # runs two nodes at once, and BLAS threads of their own spin waiting on the other
    # core (1M ratings, a 142k-row dot product: 7.4 ms CPU on two threads, 0.03 on
    # one; the three agreement models 4.9 -> 2.4 CPU s). A user's setting is kept.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def dbt_argv(
    args: list[str], db_path: Path, quiet: bool = False, dbt_vars: Mapping[str, Any] | None = None
) -> list[str]:
    """dbt's command line ``args`` on this warehouse (``dbt_vars``: its --vars)."""
    argv = [*(["--quiet"] if quiet else []), *args, *dbt_args(dbt_vars or {})]
    target = target_dir(db_path)
    if db_path.resolve() != (PROJECT_DIR / DEFAULT_DB).resolve():
        # Keep a side warehouse's dbt artefacts beside it, not in the project's target/.
        argv += ["--target-path", str(target), "--log-path", str(target.parent / "logs")]
    return argv


@contextlib.contextmanager
def _dbt(
    argv: list[str],
    db_path: Path,
    data_dir: Path | None,
    capture: bool,
    debug: bool,
    models_file: Path | None,
) -> Iterator[DbtChild]:
    """dbt's child process (dbt_parse: dbt starting from the parse kept for a
    warehouse of the same catalog name when this one has none)."""
    cmd = [sys.executable, "-m", "judge_bias.warehouse.dbt_parse", *argv]
    target = target_dir(db_path)
    env = dbt_env(db_path, data_dir)
    env.pop(dbt_parse.MODELS_ENV, None)
    if models_file is not None:
        models_file.unlink(missing_ok=True)
        env[dbt_parse.MODELS_ENV] = str(models_file)
    if made_for := dbt_parse.seed(PARSE_CACHE, target, db_path):
        env[dbt_parse.SEED_ENV] = made_for
    with dbt_child(cmd, env, PROJECT_DIR, target, capture, debug) as child:
        yield child


def run_dbt(
    args: list[str],
    db_path: Path,
    data_dir: Path | None = None,
    quiet: bool = False,
    capture: bool = False,
    debug: bool = False,
    dbt_vars: Mapping[str, Any] | None = None,
    models_file: Path | None = None,
) -> None:
    """Run one dbt command in the project, its progress on the terminal (``capture``:
    nothing on the terminal; ``debug``: also the details of failures; ``dbt_vars``:
    its --vars; ``models_file``: ``dbt build`` writes the models' schema and alias
    there instead of manifest.json, dbt_parse.MODELS_ENV); raise dbt_failure(...)
    when it fails."""
    argv = dbt_argv(args, db_path, quiet, dbt_vars)
    with _dbt(argv, db_path, data_dir, capture, debug, models_file) as child:
        child.read(args)
    dbt_parse.keep(PARSE_CACHE, target_dir(db_path), db_path)


@contextlib.contextmanager
def dbt_phases(
    first: list[str],
    db_path: Path,
    data_dir: Path | None,
    quiet: bool = False,
    capture: bool = False,
    debug: bool = False,
    dbt_vars: Mapping[str, Any] | None = None,
    models_file: Path | None = None,
) -> Iterator[Callable[[list[str]], None]]:
    """judge-bias build's two dbt commands in one child (dbt_child): run ``first``
    as run_dbt does, then yield ``second(args)``, which runs the second command on
    the same dbt process and parse; leaving without calling it stops the child.
    The child holds no connection to the warehouse in between. The validation's
    imports run meanwhile (warm_validation), done when the first phase is."""
    argv = [PHASES_FLAG, *dbt_argv(first, db_path, quiet, dbt_vars)]
    with _dbt(argv, db_path, data_dir, capture, debug, models_file) as child:
        warming = warm_validation()  # after the child's start: no GIL taken from it
        if not child.read(first):
            raise BuildError("dbt ended before its second phase (no end of the first printed)")
        # long done at scale; joined before this thread imports anything more
        if warming is not None:
            warming.join()
        dbt_parse.keep(PARSE_CACHE, target_dir(db_path), db_path)
        yield lambda args: child.second(args, dbt_argv(args, db_path, quiet, dbt_vars))


def spark_work_dir(db_path: Path) -> Path:
    """The Spark stage's folder beside the warehouse: its metastore, Spark tables,
    dbt artefacts and the Parquet export the warehouse's views read."""
    return db_path.parent / f"{db_path.stem}.spark"


def spark_stage(data_dir: Path, db_path: Path, quiet: bool = False) -> list[str]:
    """Stage 1 of ``--engine spark``: load and build every model the Spark route
    supports on a local Spark (python -m judge_bias.warehouse.spark, a child
    process: its JVM ends with it), export each table as Parquet, and attach the
    tables to the warehouse as views. Returns the names built there, which the
    DuckDB stage then excludes."""
    from judge_bias.warehouse.spark import attach_export

    work = spark_work_dir(db_path)
    export = work / "export"
    shutil.rmtree(export, ignore_errors=True)
    cmd = [sys.executable, "-m", "judge_bias.warehouse.spark", "--data", str(data_dir)]
    cmd += ["--spark-dir", str(work), "--export", str(export)]
    env = dbt_env(db_path, data_dir)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=PROJECT_DIR, env=env, capture_output=quiet, text=True)
    if done.returncode != 0:
        tail = meaningful_lines((done.stdout or "") + (done.stderr or ""))[-1:] if quiet else []
        cause = tail[0] if tail else f"exit code {done.returncode} (see above)"
        raise BuildError(f"the Spark stage failed: {cause}")
    built = attach_export(db_path, export / "1")
    if not quiet:
        print(f"Spark stage: {len(built)} tables in {time.perf_counter() - start:.1f} s; "
              "the DuckDB stage builds the rest", flush=True)  # fmt: skip
    return built


def _check_not_locked(db: Path) -> None:
    """Fail at once, in one line, when another process holds the warehouse. A
    write-ahead log that DuckDB refuses to replay (another database's, or this file's
    from a later checkpoint: left beside it by code before session 22, whose rollback
    put a copy back beside a killed build's log) is moved aside, with a note naming
    both: DuckDB cannot replay it onto this file, and every build failed on it until
    it was deleted by hand. A log DuckDB names that is not the warehouse's is refused."""
    try:
        duckdb.connect(str(db)).close()
    except duckdb.IOException as exc:
        if message := lock_message(str(exc)):
            raise BuildError(message) from None
        try:
            found = stale_wal(str(exc), db)
        except ValueError as not_ours:
            raise BuildError(f"{not_ours}: move it aside, then build again") from None
        if found is None:
            raise
        log, why = found
        aside = set_aside_stale_wal(log)
        print(
            f"note: {log.name} cannot be replayed onto {db.name} (DuckDB: {why}; a "
            "log left by a killed build of older judge-bias code): moved aside to "
            f"{aside}, the warehouse opened without it; delete that file once you "
            "do not need it",
            file=sys.stderr,
            flush=True,
        )
        _check_not_locked(db)  # a .wal.checkpoint may leave a .wal behind it


def validation_failure(report: ValidationReport, inputs: list[FileCounts]) -> str:
    """Why the validation failed, in one line: the files failing the gates first."""
    gates = gate_failures(inputs)
    if gates:
        more = f" (and {len(gates) - 1} more files fail the gates)" if len(gates) > 1 else ""
        return gates[0] + more
    first = report.failures[0].describe() if report.failures else "no failure recorded"
    return f"{len(report.failures)} critical failures; first: {first}"


def check_file_rows(data: Path | None, inputs: list[FileCounts]) -> None:
    """The Parquet inputs' rows reconciled apart from their loader (the CSV route's
    count is the loader's table; review16c): each Parquet file's footer count
    (loading.parquet_rows) must equal the rows the build read and accounted for
    (accepted + rejected), on an incremental build this load's rows. A mismatch is a
    BuildError naming the file: rows were lost or added on the way to the warehouse."""
    if data is None:
        return
    for counts in inputs:
        path = loading.find_input_file(data, counts.source)
        if path is None or path.suffix != ".parquet":
            continue
        footer = loading.parquet_rows(path)
        if counts.gate_scope in (None, "build"):
            read, accounted = counts.rows_read, counts.rows_accepted + counts.rows_rejected
        else:  # an incremental build: the base table holds every load's rows
            read = accounted = counts.gate_rows_read or 0
        if read != footer or accounted != footer:
            raise BuildError(
                f"{path}: its Parquet footer counts {footer:,} rows, but the build read "
                f"{read:,}{counts.scope} and accounted for {accounted:,} (accepted + rejected): "
                "rows were lost or added between the file and the warehouse (a loader "
                "defect: report it with the file); nothing was published"
            )


def preflight(data: Path | None, dbt_vars: Mapping[str, Any]) -> list[str]:
    """The checks before dbt runs: the data folder's files (read with the csv_dialects
    var), or on the relation route (judge_bias_input_relations) the var itself; the
    loaders check the relations as the build's first step. Returns the warnings."""
    input_relations(dbt_vars)
    if data is None:
        return []
    return list(loading.check_inputs(data, dbt_vars.get("csv_dialects")))


# DuckDB names a database after its file's stem, but renames these (main -> main_db):
# dbt-duckdb then addresses a catalog that does not exist and every Python model fails
RESERVED_STEMS = ("main", "temp", "system")


def check_warehouse_name(db: Path) -> None:
    """Refuse a warehouse file whose stem DuckDB reserves, in one line."""
    if db.stem.lower() in RESERVED_STEMS:
        raise InputError(
            f"--db {db.name}: DuckDB reserves the name {db.stem!r} for its own catalog "
            f"(it would open the file as {db.stem}_db and the dbt models could not find it); "
            "give the warehouse file another name, e.g. judge_bias.duckdb"
        )


def build(
    data_dir: str | Path | None,
    db_path: str | Path | None = None,
    quiet: bool = False,
    bi_path: str | Path | None = None,
    debug: bool = False,
    engine: str = "duckdb",
    dbt_vars: Mapping[str, Any] | None = None,
    incremental: bool = False,
    full_refresh: bool = False,
) -> BuildResult:
    """Check the input folder, dbt build on ``data_dir`` into ``db_path``, the
    validation suites, then, only when they pass, the BI snapshot. ``engine``
    "spark": the row-level models on a local Spark first (spark_stage), the rest
    on DuckDB; the same warehouse, validation and snapshot follow. ``dbt_vars``:
    given to every dbt command and to the pre-flight (judge_bias.warehouse.dbt_vars);
    with judge_bias_input_relations among them the inputs are relations and
    ``data_dir`` is None. ``incremental``: the folder is one load appended to the
    warehouse's inputs (judge_bias.warehouse.incremental); ``full_refresh``: dbt's
    --full-refresh (the inputs start again from this folder).

    A failure at any stage (an exception) or a kill keeps the previous validation
    record and BI snapshot; the build record beside the warehouse says the stage
    reached and the outcome."""
    # DuckDB's memory_limit (profiles.yml reads the variable): a bad value fails
    # here, naming the variable, not in dbt's traceback
    if os.environ.get(DUCKDB_MEMORY_ENV):
        os.environ[DUCKDB_MEMORY_ENV] = duckdb_memory_limit()
    duckdb_threads()  # likewise DuckDB's threads
    data_dir, extra = split_data_dir(data_dir, dbt_vars or {})
    extra = incremental_vars(extra, incremental)
    if input_relations(extra):
        if data_dir is not None:
            raise VarsError(
                "--data and judge_bias_input_relations: the relation route reads no data "
                "folder; give one of them"
            )
        if engine == "spark":
            raise VarsError("the relation route (judge_bias_input_relations) runs on DuckDB only")
        data = None
    elif data_dir is None:
        raise VarsError("no data folder: give --data DIR (or judge_bias_input_relations)")
    else:
        data = Path(data_dir).resolve()
    if extra and engine == "spark":
        raise VarsError("--vars is given to the DuckDB engine's dbt only; leave out --engine spark")
    db = Path(db_path).resolve() if db_path else (PROJECT_DIR / DEFAULT_DB)
    check_warehouse_name(db)
    bi = Path(bi_path).resolve() if bi_path else default_bi_path(db)
    if other := running_build(db):
        raise BuildError(
            f"another judge-bias build (PID {other['pid']}, started {other['started_at']}) "
            f"is running on {db}; wait for it to finish"
        )
    db.parent.mkdir(parents=True, exist_ok=True)
    record = BuildRecord(db, data, bi)
    record.write()
    guard = None
    try:
        record.warnings = preflight(data, extra)
        for warning in record.warnings:  # now, and again in the CLI's closing summary
            print(f"warning: {warning}", flush=True)
        remove_stale_tmp(bi)  # before dbt: a build stopped at the gates clears them too
        _check_not_locked(db)
        guard = guard_load(db, extra, full_refresh)
        refresh = ["--full-refresh"] if full_refresh else []
        record.reach("dbt build")
        if engine == "spark":
            assert data is not None
            # stage 1 on Spark, then the rest of the DAG on DuckDB (docs/spark.md)
            built = spark_stage(data, db, quiet=quiet)
            run_dbt(["build", "--exclude", *built], db, data, quiet=quiet, debug=debug)
            check_file_rows(data, summarise_inputs(db))
        else:
            # dbt_project.yml's indirect_selection (cautious) holds in both phases: a test
            # reading models of both phases runs in the second (eager would drop it from
            # both); together they run every node once (tests/test_build_outcome.py)
            first = ["build", "--select", *GATE_SELECTION, *refresh]
            # its manifest.json is not written: the second phase's replaces it
            models = target_dir(db) / GATE_MODELS
            # one dbt process for both (dbt_phases); it waits while the gates are checked
            with dbt_phases(first, db, data, quiet, False, debug, extra, models) as second:
                results = target_dir(db) / "run_results.json"
                shutil.copyfile(results, results.with_name(GATE_RESULTS))
                if guard.loads:
                    drop_load_temps(db)
                record.reach("input gates")
                inputs = summarise_inputs(db)
                try:
                    check_file_rows(data, inputs)
                except BuildError:  # as after a failed gate: no stale marts beside it
                    drop_unbuilt_models(db, _executed(results))
                    raise
                # the gates in SQL first (instant); a file failing them is confirmed by
                # the suites, whose report the validation record keeps
                gates = validate_gates(db) if any(f.fails for f in inputs) else None
                if gates is not None and not gates.success:
                    drop_unbuilt_models(db, _executed(results))
                    undone = guard.restore()  # a rejected load is not kept
                    write_validation_record(db, data, gates, None)
                    reason = validation_failure(gates, inputs)
                    record.finish(VALIDATION_FAILED, _and(reason, undone))
                    return BuildResult(db, gates, None, inputs, record.warnings, undone)
                if not quiet:
                    print("input gates passed: building the rest", flush=True)
                record.reach("dbt build")
                second(["build", "--exclude", *GATE_SELECTION, *refresh])
        manifest = target_dir(db) / "manifest.json"
        # a failed validation puts the load back (guard.restore) before the record is
        # finished, once, with what was undone
        result = validate_and_publish(
            db, data, bi, record, manifest, on_load=guard.loads, undo=guard.restore
        )
        if result.bi_path is not None:
            guard.discard()
        return result
    except BaseException as exc:
        undone = guard.restore() if guard is not None else None
        if undone:
            print(f"note: {undone}", file=sys.stderr, flush=True)
        record.finish(FAILED, _and(" ".join(str(exc).split()) or type(exc).__name__, undone))
        raise


def _and(message: str | None, undone: str | None) -> str | None:
    """A build's message, and that its load was undone when it was."""
    return f"{message}; {undone}" if message and undone else (message or undone)


def _discard_copy(copying: Future[Path], stop: CopyStop) -> None:
    """Stop the snapshot's copy, wait for it (its connection closes with it) and remove
    its file; a copy that failed or was stopped has removed its own."""
    stop.stop()
    if copying.exception() is None:
        discard_snapshot(copying.result())


def validate_and_publish(
    db: Path,
    data: Path | None,
    bi: Path,
    record: BuildRecord,
    manifest: Path,
    validated_by: str = "judge-bias build",
    on_load: bool = False,
    undo: Callable[[], str | None] | None = None,
) -> BuildResult:
    """The end of every route to a published warehouse (judge-bias build, and
    judge-bias validate --publish after a plain dbt build): the GLM fit warnings,
    the validation suites and their record, then, only when they pass, the BI
    snapshot (marts and docs from dbt's ``manifest``); ``record`` says how far it
    got. ``on_load``: an incremental build's, the suites read its load's rows
    (validate); ``undo``: called when the suites fail, before the record is finished
    (an incremental build's rollback, LoadGuard.restore), what it did in words or
    None, added to the record's message and the result's ``rolled_back``."""
    # a GLM fit that raised or fails its diagnostics is a row of glm_fits, not a
    # dbt failure: name it here, and again in the CLI's closing summary
    for line in glm_fit_summary_of(db):
        record.warnings.append(line)
        print(f"warning: {line}", flush=True)
    record.reach("validation")
    remove_stale_tmp(bi)  # left by killed builds (build() cleared them too: validate --publish)
    # the BI snapshot's copy of the marts runs beside the suites (both only read the
    # warehouse; DuckDB's copy releases the GIL): published once they pass, removed
    # when they fail, stopped on an interrupt (the thread gets no KeyboardInterrupt).
    # At 10M ratings the copy is ~15 CPU s (debiased_scores a view there too) and the
    # suites ~3.
    stop = CopyStop()
    with ThreadPoolExecutor(1, thread_name_prefix="bi-snapshot") as pool:
        copying = pool.submit(copy_marts, db, bi, mart_docs(manifest), stop, on_load)
        try:
            report = validate(db, on_load)
            inputs = summarise_inputs(db)
            # rows of a relation written late, never read: a warning, not a failure
            # (docs/incremental.md "Late rows are counted"); the CLI's closing summary
            # prints it from here
            record.warnings.extend(w for f in inputs if (w := f.late_rows))
            if not report.success:
                _discard_copy(copying, stop)
                write_validation_record(db, data, report, None, validated_by)
                undone = undo() if undo is not None else None
                record.finish(VALIDATION_FAILED, _and(validation_failure(report, inputs), undone))
                return BuildResult(db, report, None, inputs, record.warnings, undone)
            record.reach("publishing")
            validated = validation_record(db, data, report, bi, validated_by)
            # the wait for the copy (its longer half at 10M ratings) is inside: an
            # interrupt here stops it and removes its file too
            published = finish_snapshot(copying.result(), bi, validated)
        except BaseException:
            _discard_copy(copying, stop)
            raise
    write_validation_record(db, data, report, published, validated_by)
    record.finish(OK)
    return BuildResult(db, report, published, inputs, record.warnings)
