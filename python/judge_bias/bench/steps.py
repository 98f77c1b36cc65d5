"""The steps of the OLS scale benchmark (judge_bias.bench.runs.run_ols_bench), each run in a
fresh process so that its peak memory is its own. This module imports nothing heavy at
the top: each step imports what it uses."""

from __future__ import annotations

import time


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM): unlike getrusage's ru_maxrss,
    which survives the fork + exec that starts the process and so starts at the
    parent's size, the high-water mark belongs to this address space alone."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# A streaming aggregation into a few hundred groups needs little memory: DuckDB's
# buffer pool is bounded (as the build bounds it, profiles.yml) so that it does not
# keep the scanned columns cached and peak memory shows what the method needs.
ENGINE_MEMORY_LIMIT = "48MB"


def _prepare(con) -> None:
    con.execute("set enable_progress_bar = false")
    con.execute(f"set memory_limit = '{ENGINE_MEMORY_LIMIT}'")
    con.execute("select count(*) from bench_ratings").fetchall()  # first query: catalog, cache


def baseline(db: str, sql: str) -> dict:
    import duckdb  # noqa: F401  (the engine's imports, nothing else)

    import judge_bias.bias.regression  # noqa: F401

    return {"seconds": 0.0, "peak_mb": peak_rss_mb()}


def reference_baseline(db: str, sql: str) -> dict:
    import duckdb  # noqa: F401
    import statsmodels.formula.api  # noqa: F401

    return {"seconds": 0.0, "peak_mb": peak_rss_mb()}


def scan(db: str, sql: str) -> dict:
    """The floor: one aggregation pass over the same table and key, a count per cell."""
    import duckdb

    keys = "reference_kind, reference_family, judge, judge_family, model, model_family, "
    keys += "is_self, is_same_family, dimension, dataset, task_type"
    con = duckdb.connect(db, read_only=True)
    _prepare(con)
    start = time.perf_counter()
    con.execute(
        f"select {keys}, length_feature is not null, count(*) from bench_ratings "
        f"group by {keys}, length_feature is not null"
    ).df()
    return {"seconds": time.perf_counter() - start, "peak_mb": peak_rss_mb()}


def engine(db: str, sql: str) -> dict:
    """int_bias_cell_stats' SQL in DuckDB, then the HC0 fit from the statistics."""
    import duckdb

    from judge_bias.bias.regression import fit_bias_regression

    con = duckdb.connect(db, read_only=True)

    _prepare(con)
    start = time.perf_counter()
    stats = con.execute(sql).df()
    est = fit_bias_regression(stats, "main", se_type="HC0").estimates
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "peak_mb": peak_rss_mb(),
        "estimates": est.set_index("term")[["estimate", "std_error"]].to_dict("index"),
    }


def reference(db: str, sql: str) -> dict:
    """The authors' route: the rows into pandas, statsmodels' formula OLS with HC0
    (the paper's specification plus dimension effects, as the engine fits it)."""
    import duckdb

    from judge_bias.bias.reference import PAPER_FORMULA, reference_fit

    con = duckdb.connect(db, read_only=True)

    con.execute("set enable_progress_bar = false")
    con.execute("select count(*) from bench_ratings").fetchall()  # warm, as the others
    start = time.perf_counter()
    df = con.execute("select * from bench_ratings").df()
    res = reference_fit(df, PAPER_FORMULA + " + dimension - 1", "HC0")
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "peak_mb": peak_rss_mb(),
        "params": res.params.to_dict(),
        "bse": res.bse.to_dict(),
    }


def ratings_floor(path: str, sql: str) -> dict:
    """The floor of `judge-bias bench --scale-build`: one DuckDB scan of the ratings
    file computing the bias sufficient statistics (per judge x model x dimension:
    count, sum and sum of squares of the score), in a fresh process."""
    import duckdb

    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    start, cpu = time.perf_counter(), time.process_time()
    cells = con.execute(
        "select judge, model, dimension, count(*), sum(x), sum(x * x) from "
        "(select judge, model, dimension, try_cast(label as double) as x "
        "from read_parquet(?)) group by all",
        [path],
    ).fetchall()
    return {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "peak_mb": peak_rss_mb(),
        "cells": len(cells),
        "rows": sum(c[3] for c in cells),
    }
