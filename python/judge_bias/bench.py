"""Wall-time benchmark of the foundation: the demo build and an imported real build.

Targets (issue: foundation): each under 60 s on the 2-core machine. Prints
the figures; it asserts nothing, so timing noise never fails a test run.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from judge_bias import build as build_mod
from judge_bias.importers import import_play_favorites

TARGET_SECONDS = 60.0


def _timed(label: str, fn) -> float:
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    print(
        f"{label}: {elapsed:.1f} s (target < {TARGET_SECONDS:.0f} s, "
        f"ratio to target {elapsed / TARGET_SECONDS:.2f})"
    )
    return elapsed


def run_build_bench(shared: str | Path, repeats: int = 1) -> int:
    shared = Path(shared)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for i in range(repeats):
            _timed(
                f"demo build (dbt build + validation) run {i + 1}",
                lambda: build_mod.build(
                    build_mod.PROJECT_DIR / build_mod.DEFAULT_DATA,
                    tmp_path / "demo.duckdb",
                    quiet=True,
                ),
            )
        faith = shared / "play_favorites" / "Faithfulness.csv"
        if not faith.exists():
            print(f"skipped the Play Favorites build: {faith} not found")
            return 0
        data = tmp_path / "pf"
        for i in range(repeats):
            _timed(
                f"import play-favorites + build on Faithfulness.csv run {i + 1}",
                lambda: (
                    import_play_favorites([faith], data),
                    build_mod.build(data, tmp_path / "pf.duckdb", quiet=True),
                ),
            )
    return 0
