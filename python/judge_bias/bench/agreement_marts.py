"""CPU time and peak memory of the agreement marts' Python steps on a built warehouse
(issue 34): ``python -m judge_bias.bench.agreement_marts DB [--baseline PATH]``.

Each mart function runs as its dbt model calls it (``ref``, ``get``, the DuckDB
connection) in a fresh process (DuckDB: 1 thread, a build's memory limit:
limits.DEFAULT_DUCKDB_MEMORY), timed with getrusage around the call; the peak is the
process's maximum resident set (the interpreter and imports, about 0.2 GB, included).
``--baseline PATH`` runs each again with the package at PATH (e.g. main's ``python``
folder) and compares the two outputs: integer and text columns exactly, floats to 1e-12
relative. ``--budget`` sets the memory_budget var (main's agreement_binary skips above
about 2.2M ratings at the 2 GB default).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from judge_bias.limits import DEFAULT_DUCKDB_MEMORY

MARTS = {
    "agreement_binary": ("judge_bias.drift.marts", "agreement_binary"),
    "agreement_judge_human": ("judge_bias.agreement.marts", "agreement_judge_human"),
    "agreement_counterfactual": ("judge_bias.agreement.marts", "agreement_counterfactual"),
    "self_vs_peer_tests": ("judge_bias.agreement.marts", "self_vs_peer_tests"),
}

CHILD = """
import importlib, resource, sys, time
import duckdb, pandas
db, module, name, out, budget = sys.argv[1:6]
f = getattr(importlib.import_module(module), name)
con = duckdb.connect(db, read_only=True)
con.execute("set memory_limit='{memory}'").fetchall()
con.execute("set threads=1").fetchall()
ref = lambda table: con.table(f"main.{table}")
config = {"memory_budget": budget} if budget else {}
r0 = resource.getrusage(resource.RUSAGE_SELF)
frame = f(ref, config.get, con)
r1 = resource.getrusage(resource.RUSAGE_SELF)
frame.to_pickle(out)
cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
print(f"{cpu:.2f} {r1.ru_maxrss / 1024:.0f}")
"""


def run_mart(db: Path, mart: str, out: Path, budget: str, pythonpath: str) -> tuple[float, int]:
    """(CPU seconds, peak MB) of one mart in a fresh process; its frame pickled to out."""
    module, name = MARTS[mart]
    env = os.environ | {"PYTHONPATH": pythonpath}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.replace("{memory}", DEFAULT_DUCKDB_MEMORY),
         str(db), module, name, str(out), budget],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    cpu, peak = done.stdout.split()[-2:]
    return float(cpu), int(peak)


def equal_frames(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """'equal (largest relative float difference ...)' or what differs."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return f"differ: columns or rows ({a.shape} vs {b.shape})"
    worst = 0.0
    for c in a.columns:
        if str(a[c].dtype) != str(b[c].dtype):
            return f"differ: the type of {c} ({a[c].dtype} vs {b[c].dtype})"
        if pd.api.types.is_float_dtype(a[c]) and pd.api.types.is_float_dtype(b[c]):
            x, y = a[c].to_numpy(float), b[c].to_numpy(float)
            if not (np.isnan(x) == np.isnan(y)).all():
                return f"differ: nulls of {c}"
            m = ~np.isnan(x)
            if not np.allclose(x[m], y[m], rtol=1e-12, atol=1e-15):
                return f"differ: {c}"
            big = np.abs(x[m]) > 1e-9
            rel = np.abs(x[m][big] - y[m][big]) / np.abs(x[m][big])
            worst = max(worst, float(rel.max(initial=0.0)))
        elif a[c].astype(object).where(a[c].notna(), None).tolist() != (
            b[c].astype(object).where(b[c].notna(), None).tolist()
        ):
            return f"differ: {c}"
    return f"equal (largest relative float difference {worst:.1e})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--baseline", help="the python folder of the code to compare with")
    parser.add_argument("--budget", default="", help="memory_budget var (e.g. 8GB)")
    args = parser.parse_args(argv)
    here = str(Path(__file__).resolve().parents[2])
    print("| mart | CPU s | peak MB | baseline CPU s | baseline peak MB | output |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for mart in MARTS:
            new = Path(tmp) / f"{mart}.new.pkl"
            cpu, peak = run_mart(args.db, mart, new, args.budget, here)
            if args.baseline:
                old = Path(tmp) / f"{mart}.old.pkl"
                b_cpu, b_peak = run_mart(args.db, mart, old, args.budget, args.baseline)
                same = equal_frames(pd.read_pickle(old), pd.read_pickle(new))
                print(f"| {mart} | {cpu:.2f} | {peak:,} | {b_cpu:.2f} | {b_peak:,} | {same} |")
            else:
                print(f"| {mart} | {cpu:.2f} | {peak:,} | | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
