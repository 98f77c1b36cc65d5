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


AGREEMENT_MODELS = (
    "agreement_annotators",
    "agreement_judge_human",
    "self_vs_peer_tests",
    "agreement_counterfactual",
)


def write_agreement_bench_data(
    out: Path, n_ratings: int, n_annotations: int, seed: int = 1
) -> None:
    """Synthetic inputs (Parquet) of about n_ratings judge ratings and n_annotations
    human labels: 6 judges in 3 families, 6 models, 2 dimensions on 1..5."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    judges = models = [f"m{i}" for i in range(6)]
    dims = ["d1", "d2"]
    n_prompts = max(1, n_ratings // (len(judges) * len(models) * len(dims)))
    n_annotators = max(1, round(n_annotations / (n_prompts * len(models) * len(dims))))
    p, m, d = np.meshgrid(np.arange(n_prompts), np.arange(6), np.arange(2), indexing="ij")
    p, m, d = p.ravel(), m.ravel(), d.ravel()
    quality = rng.uniform(0, 1, p.size)
    prompt_ids = np.char.add("p", p.astype(str))
    humans = pd.DataFrame(
        {
            "prompt_id": np.repeat(prompt_ids, n_annotators),
            "model": np.repeat(np.array(models)[m], n_annotators),
            "dimension": np.repeat(np.array(dims)[d], n_annotators),
            "annotator_id": np.tile(np.char.add("a", np.arange(n_annotators).astype(str)), p.size),
            "label": np.clip(
                np.rint(
                    np.repeat(quality, n_annotators) * 4
                    + 1
                    + rng.normal(0, 0.6, p.size * n_annotators)
                ),
                1,
                5,
            )
            .astype(int)
            .astype(str),
        }
    )
    ratings = pd.DataFrame(
        {
            "judge": np.repeat(judges, p.size),
            "prompt_id": np.tile(prompt_ids, 6),
            "model": np.tile(np.array(models)[m], 6),
            "dimension": np.tile(np.array(dims)[d], 6),
            "label": np.clip(
                np.rint(np.tile(quality, 6) * 4 + 1 + rng.normal(0, 0.8, p.size * 6)), 1, 5
            )
            .astype(int)
            .astype(str),
        }
    )
    humans.to_parquet(out / "human_annotations.parquet", index=False)
    ratings.to_parquet(out / "judge_ratings.parquet", index=False)
    pd.DataFrame(
        {"alias": models, "model": models, "family": ["F0", "F0", "F1", "F1", "F2", "F2"]}
    ).to_csv(out / "models.csv", index=False)
    pd.DataFrame(
        [(dim, str(s), s) for dim in dims for s in range(1, 6)],
        columns=["dimension", "label", "score"],
    ).to_csv(out / "rating_scales.csv", index=False)
    print(f"bench data: {len(ratings):,} judge ratings, {len(humans):,} human labels in {out}")


def run_agreement_bench(n_ratings: int = 1_000_000, n_annotations: int = 1_000_000) -> int:
    """dbt build of the agreement marts (and what they need) on synthetic data;
    prints the wall time and each agreement model's execution time (target < 60 s)."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        write_agreement_bench_data(tmp_path / "data", n_ratings, n_annotations)
        db = tmp_path / "bench.duckdb"
        select = [
            "--select",
            *(f"+{m}" for m in AGREEMENT_MODELS),
            "--indirect-selection",
            "cautious",
        ]
        start = time.perf_counter()
        build_mod.run_dbt(["build", *select], db, tmp_path / "data", quiet=True)
        wall = time.perf_counter() - start
        results = json.loads((tmp_path / "bench.dbt" / "target" / "run_results.json").read_text())
        timing = {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results["results"]}
        for name in AGREEMENT_MODELS:
            print(f"{name}: {timing.get(name, float('nan')):.1f} s")
        slow = sorted(timing.items(), key=lambda kv: -kv[1])[:8]
        print("slowest nodes: " + ", ".join(f"{k} {v:.1f} s" for k, v in slow))
        agreement = sum(timing.get(n, 0.0) for n in AGREEMENT_MODELS)
        print(
            f"agreement marts: {agreement:.1f} s (target < {TARGET_SECONDS:.0f} s, "
            f"ratio {agreement / TARGET_SECONDS:.2f}); whole dbt build of them and their "
            f"inputs, tests included: {wall:.1f} s"
        )
    return 0
