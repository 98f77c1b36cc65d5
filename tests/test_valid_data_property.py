"""No check fails valid data: whole builds on generated valid input folders.

Hypothesis writes small folders that follow the input contract (DESIGN.md) with
the awkward values real data has: pre-aggregated human means (1/3, 2/3, 0.667
with n_aggregated 3), a single annotator, constant scores, one judge, one model,
scores at both ends of the scale, 2- and 10-level scales, very long and
non-Latin names, pairwise judgments only, ratings without any human label.
Every folder must build green (dbt's tests and the validation suites) with every
row accepted and the row counts reconciled.

Each example is one `judge-bias build` (GLMs off) into the same warehouse path
and the same data folder, so dbt parses the project once and then reuses it.
JUDGE_BIAS_PROPERTY_EXAMPLES sets the number of generated examples (default 5; the
explicit one runs besides).
"""

from __future__ import annotations

import csv
import os
import shutil
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from judge_bias.warehouse.build import build
from tests.conftest import cpu_seconds, query
from tests.importing import assert_reconciled, nonfinite_columns

N_EXAMPLES = int(os.environ.get("JUDGE_BIAS_PROPERTY_EXAMPLES", "5"))

NAMES = (
    "m1",
    "Модель-Б",
    "模型甲-v2",
    "نموذج-ج",
    "ε-judge 2.5",
    "Ünïcødé Ñame",
    "vendor/" + "very-long-model-name-" * 12 + "final",
    "org/model:2024-08-06",
)
FAMILIES = ("Alpha", "Семейство", "家族", "β")
# Pre-aggregated means of three annotators, as text: exact thirds and rounded ones.
THIRDS = ("0.3333333333333333", "0.6666666666666666", "0.333", "0.667")


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


@st.composite
def folders(draw: st.DrawFn) -> dict[str, tuple[list[str], list[list[str]]]]:
    """A valid input folder: file name -> (header, rows)."""
    models = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    judges = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    names = sorted(set(models) | set(judges))
    family = {n: draw(st.sampled_from(FAMILIES)) for n in names}
    prompts = [f"p{i}" for i in range(draw(st.integers(3, 6)))]
    pairwise_only = len(models) >= 2 and draw(st.booleans())
    files: dict[str, tuple[list[str], list[list[str]]]] = {
        "models": (["alias", "model", "family"], [[n, n, family[n]] for n in names]),
        "prompts": (["prompt_id", "dataset"], [[p, draw(st.sampled_from("ab"))] for p in prompts]),
    }
    if pairwise_only:
        rows = []
        for judge in judges:
            for p in prompts:
                for first in models:
                    for second in models:
                        if first != second:
                            verdict = draw(st.sampled_from(("first", "second", "tie")))
                            human = draw(st.sampled_from(("first", "second", "tie", "")))
                            rows.append([judge, p, first, second, verdict, human])
        files["pairwise_judgments"] = (
            ["judge", "prompt_id", "model_first", "model_second", "verdict", "human_verdict"],
            rows,
        )
        files["judge_ratings"] = (["judge", "prompt_id", "model", "dimension", "label"], [])
        return files

    scales, ratings, humans = [], [], []
    for d in range(draw(st.integers(1, 2))):
        dimension = f"dim {d} ✓"
        levels = draw(st.sampled_from((2, 3, 5, 10)))
        low = draw(st.sampled_from((0, 1)))
        points = list(range(low, low + levels))
        scales += [[dimension, str(s), str(s), "false"] for s in points]
        # the judge's scores: constant, both ends only, or anywhere on the scale
        judge_mode = draw(st.sampled_from(("constant", "ends", "any")))
        constant = draw(st.sampled_from(points))
        for judge in judges:
            for p in prompts:
                for model in models:
                    score = {
                        "constant": constant,
                        "ends": draw(st.sampled_from((points[0], points[-1]))),
                        "any": draw(st.sampled_from(points)),
                    }[judge_mode]
                    ratings.append([judge, p, model, dimension, str(score)])
        human_mode = draw(st.sampled_from(("none", "single", "means", "several")))
        for p in prompts:
            for model in models:
                if human_mode == "none":
                    continue
                if human_mode == "means":
                    # a mean of three annotators: whole point + a third, below the top
                    base = draw(st.sampled_from(points[:-1]))
                    label = draw(st.sampled_from(("", *THIRDS)))
                    value = f"{base}{label[1:]}" if label else str(base)
                    if draw(st.booleans()):  # the top itself, as a mean
                        value = str(points[-1])
                    assert Fraction(value) <= points[-1]
                    humans.append([p, model, dimension, "gt_mean", value, "3"])
                    continue
                n = 1 if human_mode == "single" else draw(st.integers(2, 3))
                for a in range(n):
                    score = draw(st.sampled_from((points[0], points[-1], *points)))
                    humans.append([p, model, dimension, f"annotator {a} ü", str(score), "1"])
    files["rating_scales"] = (["dimension", "label", "score", "is_na"], scales)
    files["judge_ratings"] = (["judge", "prompt_id", "model", "dimension", "label"], ratings)
    files["human_annotations"] = (
        ["prompt_id", "model", "dimension", "annotator_id", "label", "n_aggregated"],
        humans,
    )
    return files


def _lone_means() -> dict[str, tuple[list[str], list[list[str]]]]:
    """The case that failed the build on main: one judge rating its own model on
    0..2, the human reference a mean of three (0.667 * 3 / 3 = 0.6670000000000001),
    the judge's scores constant at the top."""
    name = NAMES[6]  # very long
    means = ("0.667", "1.667", "0.333", "2", "0.6666666666666666", "0")
    prompts = [f"p{i}" for i in range(len(means))]
    dimension = "Logical correctness"
    return {
        "models": (["alias", "model", "family"], [[name, name, FAMILIES[2]]]),
        "prompts": (["prompt_id", "dataset"], [[p, "a"] for p in prompts]),
        "rating_scales": (
            ["dimension", "label", "score", "is_na"],
            [[dimension, str(s), str(s), "false"] for s in range(3)],
        ),
        "judge_ratings": (
            ["judge", "prompt_id", "model", "dimension", "label"],
            [[name, p, name, dimension, "2"] for p in prompts],
        ),
        "human_annotations": (
            ["prompt_id", "model", "dimension", "annotator_id", "label", "n_aggregated"],
            [[p, name, dimension, "gt_mean", m, "3"] for p, m in zip(prompts, means, strict=True)],
        ),
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("valid")


TIMES: list[float] = []


@settings(
    max_examples=N_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(folder=folders())
@example(folder=_lone_means())
def test_valid_folders_build_green_with_every_row_accepted(workdir: Path, folder) -> None:
    data = workdir / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    for name, (header, rows) in folder.items():
        _write(data / f"{name}.csv", header, rows)
    start, cpu = time.monotonic(), cpu_seconds()
    result = build(data, workdir / "w.duckdb", quiet=True)
    TIMES.append(time.monotonic() - start)
    cpu = cpu_seconds() - cpu
    assert_reconciled(data, result)
    rejected = query(result.db_path, "select source, reason from rejected_rows")
    assert rejected.empty, rejected.head(10).to_string()
    bad = nonfinite_columns(result.db_path)  # undefined statistics are null, never NaN/inf
    assert not bad, bad
    print(f"build {len(TIMES)}: {TIMES[-1]:.1f} s wall, {cpu:.1f} CPU s")
