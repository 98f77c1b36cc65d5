"""`judge-bias bench --engine spark`: the whole build on simulated ratings, DuckDB
and the Spark route side by side in one run.

Each build is the user's command (`judge-bias build`, then `judge-bias build
--engine spark` with JUDGE_BIAS_SPARK_MASTER=local[k] for each k in ``cores``)
on the same folder: dbt build with every test, the fits, validation and the BI
snapshot. Wall time is the command's; peak memory is the largest sum of the
resident memory of the command and all its descendants (the Spark JVM is a
grandchild no process waits for, so getrusage would miss it), sampled every
0.2 s. Printed per size: each build's time, the Spark stage's share, peak memory
and the ratio to DuckDB measured in the same run.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from judge_bias.bench.runs import write_agreement_bench_data

SPARK_STAGE = re.compile(r"Spark stage: (\d+) tables in ([\d.]+) s")


@dataclass
class Run:
    label: str
    wall: float
    peak_gb: float
    spark_seconds: float | None = None
    spark_tables: int | None = None
    ok: bool = True
    tail: str = ""


def tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of a process and every descendant (0 for one that ended)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # it ended meanwhile
            total += p.memory_info().rss
    return total


def timed(label: str, cmd: list[str], env: dict[str, str], log: Path) -> Run:
    """Run cmd, its output to ``log``; wall time and the sampled peak of its tree."""
    start = time.perf_counter()
    peak = 0
    with log.open("w") as out:
        child = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        proc = psutil.Process(child.pid)
        while child.poll() is None:
            peak = max(peak, tree_rss(proc))
            time.sleep(0.2)
    wall = time.perf_counter() - start
    text = log.read_text(errors="replace")
    run = Run(label, wall, peak / 1024**3, ok=child.returncode == 0, tail=text[-2000:])
    if m := SPARK_STAGE.search(text):
        run.spark_tables, run.spark_seconds = int(m[1]), float(m[2])
    return run


def run_spark_bench(sizes: list[int] | None = None, cores: tuple[int, ...] = (1, 2)) -> int:
    """Build each size with DuckDB, then with the Spark route on each core count."""
    cli = str(Path(sys.executable).with_name("judge-bias"))
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}
    failed = 0
    print(f"machine: {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.1f}")
    for n in sizes or [1_000_000, 10_000_000]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            start = time.perf_counter()
            write_agreement_bench_data(root / "data", n, n // 6)
            print(f"\n{n:,} ratings (+{n // 6:,} human labels): data written in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
            base = [cli, "build", "--data", str(root / "data")]
            runs = [timed("duckdb", [*base, "--db", str(root / "d.duckdb")], env, root / "d.log")]
            for k in cores:
                runs.append(
                    timed(
                        f"spark local[{k}]",
                        [*base, "--engine", "spark", "--db", str(root / f"s{k}.duckdb")],
                        {**env, "JUDGE_BIAS_SPARK_MASTER": f"local[{k}]"},
                        root / f"s{k}.log",
                    )
                )
            print(f"{'route':16} {'wall s':>8} {'spark stage s':>14} {'peak GB':>8} "
                  f"{'wall / duckdb':>14}")  # fmt: skip
            for run in runs:
                stage = f"{run.spark_seconds:.0f}" if run.spark_seconds is not None else "-"
                ratio = run.wall / runs[0].wall
                status = "" if run.ok else "  FAILED (log tail below)"
                print(f"{run.label:16} {run.wall:8.0f} {stage:>14} {run.peak_gb:8.2f} "
                      f"{ratio:14.2f}{status}", flush=True)  # fmt: skip
                if not run.ok:
                    failed += 1
                    print(run.tail)
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0
