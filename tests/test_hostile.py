"""Hostile shapes in dbt: a small many-judges input built with a tiny memory_budget
and max_fits (--vars) finishes, accepts every row, and bias_fits says which fit
was skipped and which var raises the limit. The full-size cases are in
`judge-bias bench --hostile` (python/judge_bias/bench/hostile.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judge_bias.bench.hostile import CASES, build_notes, write_many_judges, write_many_labels
from judge_bias.warehouse.build import PROJECT_DIR, dbt_env
from tests.conftest import query

pytestmark = pytest.mark.dbt

N_JUDGES = 300  # in 5 families; each rates 3 of 1,000 completions (5 models x 200 prompts)


@pytest.fixture(scope="module")
def tiny_budget_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    data = write_many_judges(tmp / "data", n_judges=N_JUDGES, ratings_per_judge=3)
    db = tmp / "hostile.duckdb"
    variables = {"data_dir": str(data), "memory_budget": "20MB", "max_fits": 3}
    cmd = [
        str(Path(sys.executable).with_name("dbt")), "--quiet", "build",
        "--select", "+bias_fits", "+agreement_annotators", "+input_row_counts",
        "--vars", json.dumps(variables),
        "--target-path", str(tmp / "target"), "--log-path", str(tmp / "logs"),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_DIR, env=dbt_env(db), check=False)
    assert proc.returncode == 0
    return db


def test_every_row_of_the_hostile_input_is_valid(tiny_budget_build: Path) -> None:
    counts = query(tiny_budget_build, "select * from input_row_counts").set_index("source")
    assert counts.loc["judge_ratings", "rows_accepted"] == 3 * N_JUDGES
    assert (counts["rows_rejected"] == 0).all()


def test_bias_fits_name_each_limit_and_its_var(tiny_budget_build: Path) -> None:
    fits = query(tiny_budget_build, "select * from bias_fits").set_index(["analysis", "slice"])
    notes = fits["notes"]
    # 2 parameters per judge and 5 family terms: 605, over the cap of 20 MB,
    # isqrt(20e6 / 80) = 500 parameters
    main = notes[("main", "all")]
    assert main.startswith("skipped: 605 parameters, over the 500 whose p x p matrices fit")
    assert "memory budget of 20.0 MB" in main and "memory_budget" in main
    assert fits.loc[("main", "all"), "n_params"] == 605
    assert "leave_one_out would run 305 fits" in notes[("leave_one_out", "all")]
    assert "{max_fits: 305}" in notes[("leave_one_out", "all")]
    assert "llm_reference would run 5 fits" in notes[("llm_reference", "all")]
    ordinal = notes[("ordinal", "quality")]
    assert "over the limit of 200" in ordinal and "max_ordinal_params" in ordinal
    estimates = "select count(*) as n from int_bias_results where record_type = 'estimate'"
    assert query(tiny_budget_build, estimates)["n"][0] == 0


def test_the_bench_reads_those_notes(tiny_budget_build: Path) -> None:
    notes = build_notes(tiny_budget_build)
    assert any(n.startswith("bias_fits main all: skipped: 605 parameters") for n in notes)
    assert any(n.startswith("bias_fits leave_one_out all: skipped") for n in notes)


def test_the_bench_cases_write_valid_contract_files(tmp_path: Path) -> None:
    assert set(CASES) == {"judges_50k", "models_100k", "labels_1000"}
    data = write_many_labels(tmp_path / "labels", n_labels=1000)
    scales = (data / "rating_scales.csv").read_text().splitlines()
    assert len(scales) == 1 + 1000
    ratings = (data / "judge_ratings.csv").read_text().splitlines()
    assert len(ratings) == 1 + 8 * 8 * 100
