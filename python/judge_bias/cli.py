"""The judge-bias command line.

Exit codes (judge_bias.errors): 0 ok; 1 the build or the validation failed, another
process holds the warehouse, or an unexpected error (a defect: run with --debug); 2
a usage or input error (a file, column, record or setting the message names); 3
`check` found a policy finding; 4 a numerical failure on valid input. Errors end the
output as one line; --debug adds the traceback.
"""

from __future__ import annotations

import argparse
import inspect
import re
import signal
import sys
import traceback
from json import JSONDecodeError
from pathlib import Path
from typing import TypedDict

import duckdb
import numpy as np

from judge_bias.errors import EXIT_FAILED, EXIT_NUMERICAL, EXIT_OK, EXIT_USAGE, InputError
from judge_bias.inputs.importers import IMPORTERS, summary_line
from judge_bias.inputs.summary import format_summary, summarise_inputs
from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse.dbt_child import exit_without_teardown
from judge_bias.warehouse.locks import lock_message, stale_wal_message

EPILOG = (
    "exit codes: 0 ok; 1 build or validation failed, or an unexpected error; 2 usage or "
    "input error; 3 check findings; 4 numerical failure on valid input. "
    "Errors end the output as one line; --debug shows the traceback."
)


def _cmd_simulate(args: argparse.Namespace) -> int:
    # imported here: pandas (~0.35 s) would otherwise delay every command, among
    # them judge-bias build's dbt child (issue 34)
    from judge_bias.simulate import simulate

    out = simulate(
        args.out,
        seed=args.seed,
        n_prompts=args.prompts,
        label_share=args.label_share,
        rerun_share=args.rerun_share,
        drift_shift=args.drift_shift,
    )
    print(f"wrote synthetic inputs and truth.csv to {out}")
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    if args.list:
        for name, fn in sorted(IMPORTERS.items()):
            print(f"{name:18} {summary_line(fn)}")
        return 0
    if not args.format or not args.files or not args.out:
        print("judge-bias import: give FORMAT FILE... --out DIR (or --list)", file=sys.stderr)
        return EXIT_USAGE
    fn = IMPORTERS[args.format]
    for name in args.files:
        if Path(name).is_dir():
            raise InputError(f"{name}: a directory; give the {args.format} files themselves")
    params = inspect.signature(fn).parameters
    # importer-specific options: (value, flag, what the refusal says)
    specific = {
        "config": (args.config, "--config", "takes no config (mapping does)"),
        "model_tag": (args.model_tag, "--model-tag", "does not take it (mlflow, deepeval do)"),
        "judges": (args.judge, "--judge", "names its judges itself (langfuse, deepeval take it)"),
    }
    for key, (value, flag, why) in specific.items():
        if value and key not in params:
            raise InputError(f"{flag}: the {args.format} importer {why}")
    if bool(args.gold) != bool(args.gold_id):
        raise InputError("--gold FILE and --gold-id COLUMN go together")
    extra = {k: v for k, (v, _, _) in specific.items() if k in params and (v or k == "config")}
    counts = fn(args.files, args.out, models=args.models, **extra)
    if args.gold:
        from judge_bias.inputs.gold import join_gold

        gold = join_gold(args.out, args.gold, args.gold_id, args.gold_label)
        counts["human_annotations"] = counts.get("human_annotations", 0) + gold.n_annotations
    for name, n in counts.items():
        print(f"{name}: {n} rows")
    if args.gold:
        print(gold.line())
    print(f"wrote {args.format} inputs to {args.out}")
    return EXIT_OK


def _cmd_doctor(args: argparse.Namespace) -> int:
    from judge_bias.doctor import diagnose, render

    for name in args.files:
        print(render(diagnose(name)))
    return EXIT_OK


def _cmd_build(args: argparse.Namespace) -> int:
    from judge_bias.warehouse.dbt_vars import input_relations, parse_vars, split_data_dir

    dbt_vars = parse_vars(args.vars)
    data, rest = split_data_dir(args.data, dbt_vars)
    if data is None and not input_relations(rest):
        data = str(build_mod.PROJECT_DIR / build_mod.DEFAULT_DATA)
        print(f"no --data given: building the embedded demo data ({data})", flush=True)
    result = build_mod.build(
        data, args.db, bi_path=args.bi, debug=args.debug, engine=args.engine, dbt_vars=rest,
        incremental=args.incremental, full_refresh=args.full_refresh,
    )  # fmt: skip
    _print_outcome(result)
    return EXIT_OK


def _print_outcome(result: build_mod.BuildResult) -> None:
    print(result.validation.summary())
    for warning in result.warnings:
        print(f"warning: {warning}")
    if not result.validation.success:
        print(format_summary(result.inputs, late=False))  # late rows: a warning above
        reason = build_mod.validation_failure(result.validation, result.inputs)
        undone = f"; {result.rolled_back}" if result.rolled_back else ""
        raise build_mod.BuildError(
            f"validation failed: {reason}; the BI snapshot was not updated{undone}"
        )
    print(f"warehouse: {result.db_path} (schema main: fct_judge_ratings, bias_estimates, ...)")
    print(f"BI snapshot (validated marts, open it read-only): {result.bi_path}")
    print(format_summary(result.inputs, late=False))


def _existing_db(db: str) -> Path:
    path = Path(db)
    if not path.is_file():
        raise FileNotFoundError(
            f"--db {db}: no warehouse there; build one with judge-bias build --db {db}"
        )
    return path


def _built_db(db: str) -> Path:
    """The warehouse at ``db``, refused in one line (exit 2) when it holds no build."""
    from judge_bias.warehouse.incremental import holds_no_build

    path = _existing_db(db)
    if holds_no_build(path):
        raise InputError(
            f"--db {db}: the warehouse holds no build yet (no table: its first load was "
            f"rolled back, or no build ran): nothing to validate; run judge-bias build --db {db}"
        )
    return path


def _cmd_validate(args: argparse.Namespace) -> int:
    from judge_bias.warehouse.provenance import write_validation_record
    from judge_bias.warehouse.validation import validate

    if args.publish:
        from judge_bias.warehouse.plain_dbt import publish_after_dbt

        target = Path(args.target_path) / "manifest.json" if args.target_path else None
        _print_outcome(publish_after_dbt(_built_db(args.db), args.bi, target))
        return EXIT_OK
    db = _built_db(args.db)
    report = validate(db)
    data_dir = report.data_dir
    if data_dir and not Path(data_dir).is_absolute():  # dbt's default, relative to the project
        data_dir = str(build_mod.PROJECT_DIR / data_dir)
    write_validation_record(db, data_dir, report, None, validated_by="judge-bias validate")
    print(report.summary())
    inputs = summarise_inputs(db)
    print(format_summary(inputs))
    if not report.success:
        raise build_mod.BuildError(
            f"validation failed: {build_mod.validation_failure(report, inputs)}"
        )
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from judge_bias.report import write_report

    _existing_db(args.db)
    out = args.out or str(build_mod.PROJECT_DIR / "warehouse" / "report.html")
    if args.png_dir and Path(out).suffix == ".md":
        raise InputError(
            f"--png-dir saves the HTML report's figures and --out {out} writes the Markdown "
            "summary, which has none: leave out --png-dir, or give --out FILE.html"
        )
    path = write_report(args.db, out, png_dir=args.png_dir)
    print(f"report: {path.resolve()}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from judge_bias.bench import runs as bench

    one = args.rows[0] if args.rows else None
    if args.engine == "spark":
        from judge_bias.bench.spark import run_spark_bench

        return run_spark_bench(args.rows or None, tuple(args.cores))
    if args.builds:
        return bench.run_build_bench(shared=args.shared, repeats=args.repeats)
    if args.agreement:
        return bench.run_agreement_bench(one or 1_000_000, one or 1_000_000)
    if args.pairwise:
        return bench.run_pairwise_bench(one or 1_000_000)
    if args.scale_build:
        return bench.run_scale_build_bench(one or 10_000_000)
    if args.incremental:
        from judge_bias.bench.incremental import run_incremental_bench

        return run_incremental_bench(one or 1_000_000)
    if args.glm:
        from judge_bias.bench.glm import run_glm_bench

        return run_glm_bench(args.rows or None, raw_seconds=args.raw_seconds)
    if args.glm_sbc:
        from judge_bias.bench.glm_sbc import run_sbc_bench

        return run_sbc_bench(one)
    if args.hostile:
        from judge_bias.bench.hostile import run_hostile_bench

        return run_hostile_bench()
    return bench.run_ols_bench(args.rows or None, args.reference_max)


def _cmd_check(args: argparse.Namespace) -> int:
    from judge_bias.checks.junit import write_junit
    from judge_bias.checks.policy import load_policy
    from judge_bias.checks.run import run_policy, summary
    from judge_bias.checks.settings import EXIT_FINDINGS

    policy = load_policy(args.policy)  # before the warehouse: a bad policy is a usage error
    db = _existing_db(args.db)
    results = run_policy(db, policy)
    for result in results:
        if result.status != "passed" or args.verbose:
            print(result.line())
    print(summary(results, policy))
    if args.junit:
        print(f"JUnit XML: {write_junit(args.junit, results, policy.source)}")
    return EXIT_FINDINGS if any(r.is_finding for r in results) else EXIT_OK


def _cmd_coverage(args: argparse.Namespace) -> int:
    from judge_bias.bench.coverage_study import main as coverage_main

    return coverage_main(reps=args.reps, seed=args.seed)


class _SubparserOptions(TypedDict):
    """The options every subcommand's parser shares."""

    parents: list[argparse.ArgumentParser]
    epilog: str


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="judge-bias",
        description=__doc__.splitlines()[0],
        epilog=EPILOG,
        parents=[_debug_flag(False)],
    )
    sub = p.add_subparsers(dest="command", required=True)
    # --debug is accepted before or after the verb
    common: _SubparserOptions = {"parents": [_debug_flag(argparse.SUPPRESS)], "epilog": EPILOG}

    s = sub.add_parser("simulate", **common, help="write synthetic inputs with planted biases")
    s.add_argument("--out", required=True, help="output directory")
    s.add_argument("--seed", type=int, default=20250101)
    s.add_argument("--prompts", type=int, default=120, help="number of prompts")
    s.add_argument(
        "--label-share",
        type=float,
        default=1.0,
        help="keep the human labels of this share of the completions (0-1], hide the rest; "
        "truth.csv records the full-label means (term_type ppi_truth)",
    )
    s.add_argument(
        "--rerun-share",
        type=float,
        default=0.0,
        help="rerun this share of the rated items (run_id 2) for judge_stability (default 0)",
    )
    s.add_argument(
        "--drift-shift",
        type=float,
        default=None,
        help="add a new version of the first judge, its latent score shifted by this "
        "(0: unchanged), for judge_drift (default: none)",
    )
    s.set_defaults(func=_cmd_simulate)

    s = sub.add_parser("import", **common, help="convert public formats into the input contract")
    s.add_argument("format", nargs="?", choices=sorted(IMPORTERS))
    s.add_argument("files", nargs="*")
    s.add_argument("--out", help="output directory (the input contract)")
    s.add_argument("--models", help="alias,model,family CSV overriding the importer's models")
    s.add_argument("--list", action="store_true", help="print the formats, one line each")
    s.add_argument("--config", help="mapping: the YAML config (docs/mapping.md)")
    s.add_argument("--gold", help="human labels in a separate CSV/Parquet file (docs/mapping.md)")
    s.add_argument("--gold-id", help="the gold file's id column (GOLD=RATINGS if names differ)")
    s.add_argument("--gold-label", default="label", help="the gold file's label column")
    s.add_argument(
        "--model-tag", help="mlflow: the trace tag naming the model under test; deepeval: the "
        "test case metadata or hyperparameter key (default: the traced model; model)",
    )  # fmt: skip
    s.add_argument(
        "--judge", action="append", metavar="NAME=MODEL",
        help="langfuse: the judge model of the scores named NAME; deepeval: of the metric "
        "NAME whose results name none (0.20.0-0.20.40) (repeatable)",
    )  # fmt: skip
    s.set_defaults(func=_cmd_import)

    s = sub.add_parser(
        "doctor", **common, help="what a file holds, which importer fits, which marts it fills"
    )
    s.add_argument("files", nargs="+", metavar="FILE")
    s.set_defaults(func=_cmd_doctor)

    s = sub.add_parser("build", **common, help="dbt build + validation on a data directory")
    s.add_argument(
        "--data", default=None,
        help="the input folder (docs/inputs.md); default: the embedded demo data, "
        "data/demo (said so when it is used)",
    )  # fmt: skip
    s.add_argument("--db", default=None, help="default: warehouse/judge_bias.duckdb")
    s.add_argument("--bi", default=None, help="BI snapshot; default: warehouse/bi.duckdb")
    s.add_argument(
        "--engine", choices=["duckdb", "spark"], default="duckdb",
        help="spark: row-level models on local Spark, fits on DuckDB (docs/spark.md)",
    )  # fmt: skip
    s.add_argument(
        "--vars", default=None,
        help="dbt vars, YAML or JSON as dbt build --vars takes them (e.g. '{ci_level: 0.95}'): "
        "given to dbt and to the input checks (docs/dbt-package.md)",
    )  # fmt: skip
    s.add_argument(
        "--incremental", action="store_true",
        help="the folder (or, on the relation route, the relations' rows above the last load's "
        "judge_bias_loaded_at_column) is one load appended to the warehouse's inputs "
        "(docs/incremental.md)",
    )  # fmt: skip
    s.add_argument(
        "--full-refresh", action="store_true",
        help="dbt's --full-refresh: with --incremental the inputs start again from this folder "
        "(or the relations)",
    )  # fmt: skip
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("validate", **common, help="run the validation suites on a built warehouse")
    s.add_argument(
        "--db", default=str(build_mod.PROJECT_DIR / build_mod.DEFAULT_DB),
        help="the warehouse to validate; default: warehouse/judge_bias.duckdb",
    )  # fmt: skip
    s.add_argument(
        "--publish", action="store_true",
        help="after a plain dbt build: the build record, the validation record and, when "
        "it passes, the BI snapshot, as judge-bias build writes them (docs/dbt-package.md)",
    )  # fmt: skip
    s.add_argument("--bi", default=None, help="with --publish: the BI snapshot's path")
    s.add_argument(
        "--target-path", default=None,
        help="with --publish: dbt's target folder of that build (its manifest.json); "
        "default: the project's target/",
    )  # fmt: skip
    s.set_defaults(func=_cmd_validate)

    s = sub.add_parser(
        "report", **common, help="one self-contained HTML report of a built warehouse"
    )
    s.add_argument(
        "--db", default=str(build_mod.PROJECT_DIR / build_mod.DEFAULT_DB),
        help="the built warehouse to report on; default: warehouse/judge_bias.duckdb",
    )  # fmt: skip
    s.add_argument(
        "--out", default=None, help="default: warehouse/report.html; FILE.md: plain Markdown"
    )
    s.add_argument(
        "--png-dir", default=None,
        help="also save each figure of the HTML report as PNG there (not with --out FILE.md)",
    )  # fmt: skip
    s.set_defaults(func=_cmd_report)

    s = sub.add_parser(
        "bench",
        **common,
        help="OLS engine vs statsmodels ladder (default), or builds, agreement, pairwise, scale",
    )
    s.add_argument(
        "--rows", type=int, nargs="*", default=[],
        help="sizes of the OLS ladder (default 100k 1M 3M 10M); with another mode, its size",
    )  # fmt: skip
    s.add_argument("--reference-max", type=int, default=3_000_000,
                   help="largest size the statsmodels reference is run at")  # fmt: skip
    mode = s.add_mutually_exclusive_group()
    mode.add_argument("--builds", action="store_true", help="demo and Play Favorites builds")
    mode.add_argument("--agreement", action="store_true", help="agreement marts (1M + 1M)")
    mode.add_argument("--pairwise", action="store_true", help="pairwise_bias in dbt (1M rows)")
    mode.add_argument("--scale-build", action="store_true", help="judge-bias build on 10M")
    mode.add_argument(
        "--incremental", action="store_true",
        help="append 1%% new ratings vs the full build (--rows N, default 1M; docs/incremental.md)",
    )  # fmt: skip
    mode.add_argument("--hostile", action="store_true", help="50k judges, 100k models, 1k labels")
    mode.add_argument("--glm", action="store_true", help="GLM counts vs raw rows (10k 100k 1M)")
    mode.add_argument("--glm-sbc", action="store_true", help="GLM SBC (--rows N: replications)")
    mode.add_argument(
        "--engine", choices=["spark"], default=None,
        help="whole builds, DuckDB vs Spark route (--rows sizes, default 1M 10M)",
    )  # fmt: skip
    s.add_argument("--cores", type=int, nargs="+", default=[1, 2], help="Spark's local[k]")
    s.add_argument("--shared", default=str(build_mod.PROJECT_DIR.parent / "shared" / "data"))
    s.add_argument("--repeats", type=int, default=1)
    s.add_argument("--raw-seconds", type=float, default=900.0,
                   help="--glm: cap in seconds on each raw-row fit")  # fmt: skip
    s.set_defaults(func=_cmd_bench)
    s = sub.add_parser(
        "check", **common, help="evaluate a policy over the built marts (exit 3 on a finding)"
    )
    s.add_argument(
        "--policy", default=None, help="policy YAML (docs/check.md); default: permissive"
    )
    s.add_argument(
        "--db", default=str(build_mod.PROJECT_DIR / build_mod.DEFAULT_DB),
        help="the built warehouse to check; default: warehouse/judge_bias.duckdb",
    )  # fmt: skip
    s.add_argument("--junit", default=None, help="also write the results as JUnit XML there")
    s.add_argument("--verbose", action="store_true", help="print passing results too")
    s.set_defaults(func=_cmd_check)

    s = sub.add_parser("coverage", **common, help="coverage study of the self-bias intervals")
    s.add_argument("--reps", type=int, default=500)
    s.add_argument("--seed", type=int, default=1)
    s.set_defaults(func=_cmd_coverage)
    return p


def _debug_flag(default: object) -> argparse.ArgumentParser:
    flag = argparse.ArgumentParser(add_help=False)
    flag.add_argument(
        "--debug", action="store_true", default=default, help="show tracebacks and dbt's details"
    )
    return flag


def _one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text.strip())


def error_line(args: argparse.Namespace, exc: Exception) -> tuple[int, str]:
    """The exit code and the one line that ends the output for ``exc``."""
    # judge_bias.errors: the user's input or call (2), a computation that cannot go on
    # (3); a file that does not decode is input too; any other error is a defect (1)
    usage = (InputError, FileNotFoundError, NotADirectoryError, UnicodeError, JSONDecodeError)
    if isinstance(exc, usage):
        return EXIT_USAGE, _one_line(str(exc))
    if isinstance(exc, (ArithmeticError, np.linalg.LinAlgError)):
        return EXIT_NUMERICAL, f"numerical failure: {_one_line(str(exc))}"
    if isinstance(exc, build_mod.BuildError):
        return EXIT_FAILED, _one_line(str(exc))
    if isinstance(exc, duckdb.Error):
        readers = args.command in ("validate", "report", "check")
        bi = build_mod.default_bi_path(Path(args.db)) if readers else None
        if message := lock_message(str(exc), open_instead=bi):
            return EXIT_FAILED, message
        if message := stale_wal_message(str(exc), Path(args.db)):
            return EXIT_FAILED, message  # readers move nothing: the build does
    return EXIT_FAILED, (
        f"{type(exc).__name__}: {_one_line(str(exc))} "
        "(unexpected: run again with --debug for the traceback)"
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; files named after options (``import FORMAT --out DIR FILE``)
    are files too: argparse alone leaves them unrecognised."""
    p = parser()
    args, extra = p.parse_known_args(argv)
    stray = [x for x in extra if x.startswith("-") and x != "-"]
    if extra and (stray or not hasattr(args, "files")):
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.files = [*(args.files or []), *extra]
    return args


def _interrupt_on_sigterm() -> None:
    """A SIGTERM (``kill PID``, ``timeout``, a CI runner cancelling a step) ends the
    command as Ctrl-C does: the exception unwinds, so a build's dbt child and a
    bench's build are stopped and temporary folders removed (without this the child
    ran on alone, holding the warehouse's lock)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if argv is None:  # the command line, not a caller
        _interrupt_on_sigterm()
    code = _run(args)
    if argv is None and args.command == "build":  # the command line, not a caller
        exit_without_teardown(code)
    return code


def _run(args: argparse.Namespace) -> int:
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(f"judge-bias {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        code, line = error_line(args, exc)
        if args.debug:
            traceback.print_exc()
        elif hint := getattr(exc, "hint", None):
            print(hint, file=sys.stderr)
        print(f"judge-bias {args.command}: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
