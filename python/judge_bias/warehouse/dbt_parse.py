"""dbt's parse of the project, shared between warehouses (issue 34).

dbt keeps its parse in ``partial_parse.msgpack`` in the target folder and reuses
it when the project's files, the vars, the env vars read by dbt_project.yml and
the profile's connection keys are unchanged. Every warehouse has its own target
folder (``build.target_dir``), and the connection keys include the warehouse's
``path``, so the first dbt command on a new warehouse parsed the whole project
(~5 CPU s of a small build's ~45).

Here a warehouse without a parse of its own starts from the last parse kept for
the same catalog name (DuckDB's catalog is the file's stem, which is in every
node of the manifest): ``seed`` copies it into the target folder and names the
warehouse it was made for; ``python -m judge_bias.warehouse.dbt_parse ARGS`` runs
dbt's command line with one change to its state check: when the saved parse's
profile hash differs, it is recomputed with the seed's ``path`` in place of this
warehouse's, and when that equals the saved hash (the profiles differ by the path
alone, so the catalog, schema, settings and attachments are the same) the parse
is accepted. Every other check of dbt's stays: the dbt version, the vars, the
env vars of dbt_project.yml, the project files' hashes (a changed model is
re-parsed), and any mismatch is a full parse as before. ``keep`` stores a
warehouse's parse after a dbt command succeeded.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, NoReturn

from judge_bias.limits import DUCKDB_THREADS_ENV
from judge_bias.warehouse import dbt_child
from judge_bias.warehouse.atomic import copy_atomic, write_atomic

PARTIAL_PARSE = "partial_parse.msgpack"
SEED_ENV = "JUDGE_BIAS_PARSE_SEED"  # the path of the warehouse the seeded parse was made for
SEEDED = "partial_parse.seed.json"  # beside a seeded parse: that path
# set (the first phase of judge-bias build): `dbt build` ends by writing this file, the
# models' schema and alias, instead of manifest.json (models_instead_of_manifest)
MODELS_ENV = "JUDGE_BIAS_MODELS_FILE"


def catalog_name(db_path: Path) -> str:
    """DuckDB's catalog name of a warehouse file (dbt-duckdb's database): the
    first non-empty dot-separated part of the file name."""
    return db_path.name.lstrip(".").split(".")[0]


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def seed(cache: Path, target: Path, db_path: Path) -> str | None:
    """Copy the kept parse for ``db_path``'s catalog name into ``target`` when it
    has none; returns the path of the warehouse the parse in ``target`` was made
    for when it was seeded (the value of SEED_ENV for dbt: dbt rewrites the file
    only when a project file changed, so later commands need it too), else None."""
    marker = target / SEEDED
    if (target / PARTIAL_PARSE).exists():
        try:
            return str(json.loads(marker.read_text(encoding="utf-8"))["path"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # dbt's own parse
    name = catalog_name(db_path)
    kept, about = cache / f"{name}.msgpack", cache / f"{name}.json"
    try:
        made_for = json.loads(about.read_text(encoding="utf-8"))["path"]
        copy_atomic(kept, target / PARTIAL_PARSE)
        marker.write_text(json.dumps({"path": str(made_for)}), encoding="utf-8")
    except (OSError, ValueError, KeyError, TypeError):
        (target / PARTIAL_PARSE).unlink(missing_ok=True)
        return None  # no parse kept (or being replaced): dbt parses the project
    return str(made_for)


def keep(cache: Path, target: Path, db_path: Path) -> None:
    """Keep ``target``'s parse for the next new warehouse of the same catalog name
    when dbt made it for this warehouse (not a seeded one dbt left as it was); a
    cache: a folder that cannot be written is left alone."""
    name = catalog_name(db_path)
    parse, marker = target / PARTIAL_PARSE, target / SEEDED
    try:
        if marker.exists() and marker.stat().st_mtime >= parse.stat().st_mtime:
            return  # still the seed: its path is the one kept already
        copy_atomic(parse, cache / f"{name}.msgpack")
        about = json.dumps({"path": str(db_path)})
        write_atomic(cache / f"{name}.json", lambda tmp: _write_text(tmp, about))
    except OSError:
        pass


def _accept_seeded_parse() -> None:
    """Patch dbt's state check as the module docstring says (only when SEED_ENV is set)."""
    import pprint

    from dbt.contracts.files import FileHash
    from dbt.parser.manifest import ManifestLoader

    made_for = os.environ.get(SEED_ENV)
    if not made_for:
        return
    check = ManifestLoader.is_partial_parsable

    def is_partial_parsable(self, manifest):
        ours, saved = self.manifest.state_check, manifest.state_check
        if saved.profile_hash != ours.profile_hash:
            # dbt's own hash (build_manifest_state_check) with the seed's path
            keys = [
                (key, made_for if key == "path" else value)
                for key, value in self.root_project.credentials.connection_info()
            ]
            keys.sort()
            if FileHash.from_contents(pprint.pformat(keys)) == saved.profile_hash:
                saved.profile_hash = ours.profile_hash
        return check(self, manifest)

    ManifestLoader.is_partial_parsable = is_partial_parsable  # type: ignore[method-assign]


def _write_manifest_once() -> None:
    """``dbt build`` writes manifest.json (and semantic_manifest.json) twice: after
    the parse, then at the end with the compiled nodes, which replaces the first;
    skip the first (~1 CPU s per command). Nothing reads it in between; ``dbt
    parse``, whose only write it is, is left alone."""
    import dbt.parser.manifest as loader
    import dbt.task.runnable as runnable

    if "build" not in sys.argv[1:] or runnable.write_manifest is not loader.write_manifest:
        return

    def at_parse(manifest: object, target_path: str, which: str | None = None) -> None:
        return None

    # parse_manifest calls the module's name; the end of the command (GraphRunnableTask)
    # imported its own reference, which still writes
    loader.write_manifest = at_parse


def _models_instead_of_manifest() -> None:
    """With MODELS_ENV set, ``dbt build`` ends by writing only the models' schema and
    alias (JSON: unique id -> [schema, alias]) to that file, not manifest.json and
    semantic_manifest.json (~1 CPU s): judge-bias build's first phase, whose
    manifest the second phase's replaces; the parent reads the models after a
    failed gate (build.drop_unbuilt_models)."""
    import dbt.task.runnable as runnable

    path = os.environ.get(MODELS_ENV)
    if not path or "build" not in sys.argv[1:]:
        return

    def models_only(manifest, target_path: str, which: str | None = None) -> None:
        models = {
            uid: [node.schema, node.alias or node.name]
            for uid, node in manifest.nodes.items()
            if node.resource_type == "model"
        }
        write_atomic(Path(path), lambda tmp: _write_text(tmp, json.dumps(models)))

    runnable.write_manifest = models_only


def _patch(argv: list[str]) -> None:
    """Before dbt's command line ``argv`` runs in this process: the patches above
    (they read the command in sys.argv, as dbt's INVOCATION_COMMAND does)."""
    sys.argv = ["dbt", *argv]
    _accept_seeded_parse()
    _write_manifest_once()
    _models_instead_of_manifest()


def _exit_code(result) -> int:
    """The exit code of the ``dbt`` script for a dbtRunner result: 0, 1 for failed
    nodes (dbt's ResultExit), 2 for an error (ExceptionExit: dbt printed it)."""
    if result.success:
        return 0
    if result.exception is not None and type(result.exception).__name__ == "DbtUsageException":
        print(f"Error: {result.exception}", flush=True)  # the script's click prints it
    return 1 if result.exception is None else 2


def _release_warehouse() -> None:
    """Close dbt-duckdb's database between the phases: the parent opens the file
    read-write while the child waits (DuckDB takes one writing process). dbt closes
    its connections at the end of a command, which closes the database when the
    last handle goes (profiles.yml sets no keep_open); the environment is closed
    here too, and the child fails rather than answer while it still holds the file."""
    import gc

    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    env: Any = DuckDBConnectionManager._ENV  # typed None in dbt-duckdb
    DuckDBConnectionManager.close_all_connections()  # forgets the environment
    if env is not None:
        env.close()
    gc.collect()
    db = Path(os.environ.get("JUDGE_BIAS_DB", "warehouse/judge_bias.duckdb")).resolve()
    held = {str(db), f"{db}.wal"}
    fds = Path("/proc/self/fd")  # Linux; elsewhere (macOS) the close above is trusted
    for fd in fds.iterdir() if fds.is_dir() else []:
        with contextlib.suppress(OSError):
            if os.readlink(fd) in held:
                raise RuntimeError(f"dbt still holds {db} after the first phase")


def second_phase_threads(env: MutableMapping[str, str]) -> None:
    """DuckDB on one thread in the second phase, unless ``env`` names the threads
    (macros/last_run.sql duckdb_threads: the on-run-start hook reads DUCKDB_THREADS_ENV).
    dbt runs two nodes at a time there, so both cores stay busy, and a query on one
    thread spends fewer CPU seconds than on two (10M ratings, two threads then one in
    both phases on a loaded machine: 191 -> 165 CPU s for the build, the largest
    process 2.65 -> 2.0 GB); the first
    phase, whose nodes mostly wait on one another, keeps every core per query."""
    env.setdefault(DUCKDB_THREADS_ENV, "1")


def two_phases(first: list[str]) -> int:
    """judge-bias build's two phases in this one process (dbt_child.PHASES_FLAG):
    dbt's command line ``first``; then, when it succeeded, the warehouse closed,
    dbt_child.PHASE_DONE printed and one line read from stdin: dbt_child.GO and the
    second command's arguments (JSON) run it on the manifest the first parsed
    (dbt's start-up and the parse once per build, ~3.5 CPU s); anything else
    (``stop``, or the end of stdin: the parent ended) ends the process. Returns the
    exit code of the command that ran last."""
    import dbt.task.runnable as runnable
    from dbt.cli import requires
    from dbt.cli.main import dbtRunner

    write_manifest = runnable.write_manifest  # before _models_instead_of_manifest
    parsed = []
    setup = requires.setup_manifest

    def keep_manifest(ctx, *args, **kwargs):
        setup(ctx, *args, **kwargs)  # parses (partial parse), registers the adapter
        parsed.append(ctx.obj["manifest"])

    # the @requires.manifest decorator calls the module's name when a command runs
    requires.setup_manifest = keep_manifest
    _patch(first)
    code = _exit_code(dbtRunner().invoke(first))
    requires.setup_manifest = setup
    if code:
        return code
    _release_warehouse()
    print(dbt_child.PHASE_DONE, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return 130
    if not answer.startswith(dbt_child.GO):
        return 0
    second = json.loads(answer.removeprefix(dbt_child.GO))
    sys.argv = ["dbt", *second]
    second_phase_threads(os.environ)
    runnable.write_manifest = write_manifest  # the second phase writes manifest.json
    return _exit_code(dbtRunner(manifest=parsed[-1]).invoke(second))


def _exit_without_teardown(code: int) -> NoReturn:
    """End judge-bias build's dbt child with ``code`` once the warehouse is closed,
    without the interpreter's teardown (dbt_child.exit_without_teardown: threads
    joined, atexit functions run, logging's flush of dbt's log among them, streams
    flushed): the teardown freed dbt's, pandas', statsmodels' and, with the GLMs,
    jax's objects one by one (~1 CPU s of a demo build's child, ~2 with the GLMs).
    A warehouse still held falls back to the ordinary exit, which closes it."""
    try:
        _release_warehouse()
    except Exception:  # noqa: BLE001  the ordinary exit closes what is left
        sys.exit(code)
    dbt_child.exit_without_teardown(code)


def main() -> None:
    """dbt's command line (the ``dbt`` script's entry point) with the seeded parse
    accepted and manifest.json written once (or not at all: MODELS_ENV); with
    dbt_child.PHASES_FLAG first, judge-bias build's two phases (two_phases), ended
    without the interpreter's teardown (_exit_without_teardown)."""
    if sys.argv[1:2] == [dbt_child.PHASES_FLAG]:
        _exit_without_teardown(two_phases(sys.argv[2:]))
    from dbt.cli.main import cli

    _patch(sys.argv[1:])
    sys.exit(cli())


if __name__ == "__main__":
    main()
