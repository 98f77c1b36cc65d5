"""`judge-bias bench --incremental --rows N` (docs/incremental.md): in one run, the
build that appends 1% of new ratings (a new run) to a warehouse of N ratings built
with --incremental, against the full build of the same union of data. Prints wall
time, CPU seconds and peak memory of each and their ratio (issue target: the
append under 10% of the full build), the CPU seconds of each step of both
(judge_bias.bench.profile: dbt's start-up and parse, each Python model, the SQL
models, the tests, the validation, the snapshot) and of the models incremental by
prompt, then compares the two warehouses table by
table (compare_builds, 1e-9). It asserts nothing: timing noise never fails a run.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from judge_bias.bench.compare_builds import compare_warehouses
from judge_bias.bench.profile import Step, profile_build
from judge_bias.bench.runs import write_agreement_bench_data

TARGET_RATIO = 0.10
NEW_SHARE = 0.01
NEW_RUN = "bench_new"


@dataclass
class Timed:
    wall: float
    cpu: float  # user + system seconds of the build's processes


def _build(args: list[str]) -> Timed:
    """One `judge-bias build` in a child process, timed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cmd = [str(Path(sys.executable).with_name("judge-bias")), "build", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(f"judge-bias build {' '.join(args)} failed ({proc.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu)


def write_append_data(base: Path, new: Path, union: Path, n_ratings: int) -> int:
    """The bench's three folders: ``base`` (n_ratings), ``new`` (NEW_SHARE of them
    again as the new run NEW_RUN: judge_ratings only) and ``union`` (both, the new
    rows last). Returns the new rows."""
    import pandas as pd

    write_agreement_bench_data(base, n_ratings, n_ratings // 6)
    ratings = pd.read_parquet(base / "judge_ratings.parquet")
    ratings["run_id"] = None
    fresh = ratings.sample(frac=NEW_SHARE, random_state=1).assign(run_id=NEW_RUN)
    new.mkdir(parents=True)
    fresh.to_parquet(new / "judge_ratings.parquet", index=False)
    union.mkdir(parents=True)
    for path in base.iterdir():
        if path.name != "judge_ratings.parquet":
            (union / path.name).write_bytes(path.read_bytes())
    pd.concat([ratings, fresh]).to_parquet(union / "judge_ratings.parquet", index=False)
    return len(fresh)


def run_incremental_bench(n_ratings: int = 1_000_000) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n_new = write_append_data(root / "base", root / "new", root / "union", n_ratings)
        inc, full = root / "incremental.duckdb", root / "full.duckdb"
        glms = os.environ.get("JUDGE_BIAS_GLM_MODELS", "the default set")
        print(f"setup: the first --incremental build on {n_ratings:,} ratings (GLMs: {glms})")
        first = _build(["--incremental", "--data", str(root / "base"), "--db", str(inc)])
        print(f"  {first.wall:.0f} s wall, {first.cpu:.0f} CPU s", flush=True)
        appended = profile_build(root / "new", inc, args=("--incremental",))
        append_nodes = node_times(inc)
        rebuilt = profile_build(root / "union", full)
        peak_gb = max(appended.peak_mb, rebuilt.peak_mb) / 1024
        print(
            f"append {n_new:,} new ratings (a new run) to {n_ratings:,}: "
            f"{appended.wall:.0f} s wall, {appended.cpu:.0f} CPU s\n"
            f"full build of the union: {rebuilt.wall:.0f} s wall, {rebuilt.cpu:.0f} CPU s\n"
            f"ratio append / full: {appended.wall / rebuilt.wall:.2f} wall, "
            f"{appended.cpu / rebuilt.cpu:.2f} CPU (target < {TARGET_RATIO:.2f}); "
            f"peak memory of a build {peak_gb:.2f} GB (process tree)"
        )
        print("\n".join(step_table(appended.steps, rebuilt.steps)))
        print("append's dbt nodes (run_results of both phases): " + summarize(append_nodes))
        full_nodes = node_times(full)
        print("full build's dbt nodes: " + summarize(full_nodes))
        print(
            "models incremental by prompt (and int_bias_cell_stats, int_glm_rating_counts:"
            " every row), append vs full: "
            + ", ".join(
                f"{m} {append_nodes.get(f'model.judge_bias.{m}', 0.0):.1f} s vs "
                f"{full_nodes.get(f'model.judge_bias.{m}', 0.0):.1f} s"
                for m in FACT_MODELS
            )
        )
        print(
            "tests of those models (by name), append vs full: "
            f"{fact_test_seconds(append_nodes):.1f} s vs {fact_test_seconds(full_nodes):.1f} s"
        )
        result = compare_warehouses(
            inc, full, ignore_tables=_row_tables(inc), ignore_columns=IGNORED_COLUMNS
        )
        print(
            "append equals the full build (compare_builds on the marts, 1e-9): "
            + ("yes" if result.equal else "NO\n  " + "\n  ".join(result.differences[:10]))
        )
        return 0 if result.equal else 1


# The steps a build pays whatever its load (the fixed cost of an append): the
# interpreter's and dbt's start-up and parse, dbt's cost between nodes, the GLM
# fits (int_glm_results: a fit of every rating, redone whenever one changes), the
# validation suites and the BI snapshot (both read every mart).
FIXED_STEPS = (
    "start-up (interpreter, imports)",
    "dbt phase 1: start-up, parse (to the first node)",
    "dbt phase 1: between nodes",
    "dbt phase 1: after the last node",
    "dbt phase 2: start-up, parse (to the first node)",
    "dbt phase 2: between nodes",
    "dbt phase 2: after the last node",
    "python model int_glm_results",
    "Great Expectations validation",
    "BI snapshot",
    "exit",
)


def step_table(append: list[Step], full: list[Step]) -> list[str]:
    """CPU seconds of each step (judge_bias.bench.profile) of the append beside the
    full build's, the full build's largest first, and the FIXED_STEPS' sum."""
    a = {s.name: s.cpu for s in append}
    f = {s.name: s.cpu for s in full}
    names = sorted(set(a) | set(f), key=lambda n: (-f.get(n, 0.0), -a.get(n, 0.0)))
    lines = ["| step | append CPU s | full CPU s |", "|---|---|---|"]
    lines += [f"| {n} | {a.get(n, 0.0):.1f} | {f.get(n, 0.0):.1f} |" for n in names]
    fixed_a = sum(a.get(n, 0.0) for n in FIXED_STEPS)
    fixed_f = sum(f.get(n, 0.0) for n in FIXED_STEPS)
    lines.append(
        f"| fixed steps (start-ups and parse, GLM fits, validation, snapshot) | {fixed_a:.1f} "
        f"| {fixed_f:.1f} |"
    )
    lines.append(f"| **all steps** | {sum(a.values()):.1f} | {sum(f.values()):.1f} |")
    return lines


def node_times(db: Path) -> dict[str, float]:
    """Execution time of each dbt node of the last build of ``db`` (its two phases'
    run_results), by unique_id."""
    from judge_bias.warehouse.build import GATE_RESULTS, target_dir

    times: dict[str, float] = {}
    for name in (GATE_RESULTS, "run_results.json"):
        path = target_dir(db) / name
        if path.exists():
            for r in json.loads(path.read_text(encoding="utf-8"))["results"]:
                times[r["unique_id"]] = times.get(r["unique_id"], 0.0) + r["execution_time"]
    return times


def fact_test_seconds(times: dict[str, float]) -> float:
    """Seconds of the dbt tests whose name holds one of FACT_MODELS (the tests of a
    by-key combination have a hashed name and are not counted)."""
    return sum(
        seconds
        for uid, seconds in times.items()
        if uid.startswith("test.") and any(m in uid for m in FACT_MODELS)
    )


def summarize(times: dict[str, float]) -> str:
    """SQL models, Python models and tests' total seconds, and the slowest nodes."""
    from judge_bias.warehouse.build import PROJECT_DIR

    python_models = {p.stem for p in (PROJECT_DIR / "models").rglob("*.py")}
    totals = {"SQL models": 0.0, "Python models": 0.0, "tests": 0.0, "other": 0.0}
    for uid, seconds in times.items():
        name = uid.split(".")[-1]
        if uid.startswith("model."):
            totals["Python models" if name in python_models else "SQL models"] += seconds
        elif uid.startswith("test."):
            totals["tests"] += seconds
        else:
            totals["other"] += seconds
    slow = sorted(times.items(), key=lambda kv: -kv[1])[:8]
    return (
        ", ".join(f"{k} {v:.1f} s" for k, v in totals.items())
        + "; slowest: "
        + ", ".join(f"{uid.split('.')[-1]} {v:.1f} s" for uid, v in slow)
    )


def _row_tables(db: Path) -> list[str]:
    """The loaders', staging and intermediate tables: row-level copies of the inputs
    that compare_builds sorts in Python (minutes at 1M), and the incremental
    warehouse's record of its loads (int_load_*); the test compares them on the
    demo, the bench compares the marts."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        sql = "select table_name from information_schema.tables"
        names = [r[0] for r in con.execute(sql).fetchall()]
    finally:
        con.close()
    return [n for n in names if n.startswith(("base_inputs__", "stg_", "int_"))]


# The models incremental by prompt (docs/incremental.md, "The facts: by prompt"),
# and two tables that are not: int_bias_cell_stats and int_glm_rating_counts (one
# pass over the facts on every build; the second summed int_glm_item_counts on an
# incremental warehouse until session 23).
FACT_MODELS = (
    "int_judge_ratings_checked",
    "fct_judge_ratings",
    "int_agreement_prompt_sums",
    "int_bias_cell_stats",
    "int_glm_item_counts",
    "int_glm_rating_counts",
    "int_agreement_binary_ratings",
    "int_self_vs_peer_items",
)

# Columns that differ by construction between an incremental warehouse and a full
# build: the loads' own columns, the record of the dbt invocation's vars/folder, and
# what the gates judged (input_row_counts.gate_*: the last load against every row).
IGNORED_COLUMNS = (
    "_load_id",
    "_load_key",
    "data_dir",
    "dbt_vars",
    "gate_scope",
    "gate_rows_read",
    "gate_rows_accepted",
    "gate_rows_rejected",
    "gate_rejected_share",
)
