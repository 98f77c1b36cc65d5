"""int_ppi_units' label status on data with every status: simulated ratings with 30% of
the completions labelled, and a quarter of the labelled completions of a dimension with
an NA label given every annotation replaced by it (human_na: the completion was
labelled, its labels say nothing). The reference: the statuses recomputed in pandas
from fct_judge_ratings and int_human_scores_aggregated's NA counts. The units' scores
on the same data (one run: each unit is a rating) and on a copy where a third of the
prompts have a second run (the runs averaged): the pandas means of fct_judge_ratings.
About 40 s."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from judge_bias.simulate import simulate
from judge_bias.warehouse.build import run_dbt
from tests.conftest import query

pytestmark = [pytest.mark.dbt]

KEYS = ["prompt_id", "model", "dimension"]


def _all_na_labels(data: Path) -> int:
    """Replace every annotation of a quarter of the labelled completions of each
    dimension with an NA label by that dimension's NA label; return how many."""
    with (data / "rating_scales.csv").open() as f:
        na_label = {r["dimension"]: r["label"] for r in csv.DictReader(f) if r["is_na"] == "true"}
    path = data / "human_annotations.csv"
    with path.open() as f:
        rows = list(csv.DictReader(f))
    keys = sorted({(r["prompt_id"], r["model"], r["dimension"]) for r in rows})
    chosen = {k for i, k in enumerate(keys) if k[2] in na_label and i % 4 == 0}
    for r in rows:
        if (r["prompt_id"], r["model"], r["dimension"]) in chosen:
            r["label"] = na_label[r["dimension"]]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return len(chosen)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    root = tmp_path_factory.mktemp("ppi_unit_status")
    data = Path(simulate(root / "data", seed=7, n_prompts=40, label_share=0.3))
    n_chosen = _all_na_labels(data)
    path = root / "sim.duckdb"
    run_dbt(["build", "-s", "+int_ppi_units"], path, data, capture=True)
    return path, n_chosen


def _second_run(data: Path) -> int:
    """Give every positive rating of every third prompt a second run (run_id 2) whose
    label is the next such rating's of the same dimension; return how many."""
    path = data / "judge_ratings.csv"
    with path.open() as f:
        rows = list(csv.DictReader(f))
    prompts = sorted({r["prompt_id"] for r in rows})
    chosen = set(prompts[::3])
    picked = [r for r in rows if r["prompt_id"] in chosen and r["framing"] == "positive"]
    extra = []
    for dimension in sorted({r["dimension"] for r in picked}):
        same = [r for r in picked if r["dimension"] == dimension]
        for i, r in enumerate(same):
            nxt = same[(i + 1) % len(same)]
            answer = {"label": nxt["label"], "raw_output": nxt["raw_output"]}
            extra.append({**r, **answer, "run_id": "2"})
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows + extra)
    return len(extra)


@pytest.fixture(scope="module")
def built_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ppi_unit_runs")
    data = Path(simulate(root / "data", seed=7, n_prompts=40, label_share=0.3))
    assert _second_run(data) > 0
    path = root / "sim.duckdb"
    run_dbt(["build", "-s", "+int_ppi_units"], path, data, capture=True)
    return path


def _assert_scores_equal_the_pandas_means(db: Path) -> int:
    """int_ppi_units' yhat and y against pandas: per judge the mean of its runs'
    scores, for the panel the mean of its judges' means; return the ratings' runs."""
    fct = query(db, "select * from fct_judge_ratings where framing = 'positive'")
    ref = fct.groupby(["judge", *KEYS], as_index=False).agg(
        yhat=("judge_score_norm", "mean"), y=("human_score_norm", "first")
    )
    panel = ref.groupby(KEYS, as_index=False).agg(yhat=("yhat", "mean"), y=("y", "first"))
    ref = pd.concat([ref, panel.assign(judge="panel")], ignore_index=True)
    units = query(db, "select judge, yhat, y, " + ", ".join(KEYS) + " from int_ppi_units")
    assert len(units) == len(ref)
    merged = units.merge(ref, on=["judge", *KEYS], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all()
    for col in ("yhat", "y"):
        a, b = merged[f"{col}_x"], merged[f"{col}_y"]
        assert (a.isna() == b.isna()).all(), col
        assert ((a - b).abs().fillna(0) <= 1e-12).all(), col
    return int(fct["run_id"].nunique())


def test_one_run_units_are_the_ratings(built: tuple[Path, int]) -> None:
    assert _assert_scores_equal_the_pandas_means(built[0]) == 1


def test_runs_averaged(built_runs: Path) -> None:
    assert _assert_scores_equal_the_pandas_means(built_runs) == 2


def test_unit_status_equals_the_pandas_one(built: tuple[Path, int]) -> None:
    db, n_chosen = built
    assert n_chosen > 0
    human = query(db, "select * from int_human_scores_aggregated where n_na_labels > 0")
    with_na = set(zip(*(human[k] for k in KEYS), strict=True))
    units = query(db, "select judge, status, " + ", ".join(KEYS) + " from int_ppi_units")
    fct = query(db, "select * from fct_judge_ratings where framing = 'positive'")
    ref = fct.groupby(["judge", *KEYS], as_index=False).agg(
        yhat=("judge_score_norm", "mean"), y=("human_score_norm", "first")
    )
    panel = ref.groupby(KEYS, as_index=False).agg(yhat=("yhat", "mean"), y=("y", "first"))
    ref = pd.concat([ref, panel.assign(judge="panel")], ignore_index=True)
    is_na = pd.Series(list(zip(*(ref[k] for k in KEYS), strict=True))).isin(with_na)
    ref["expected"] = "unlabelled"
    ref.loc[is_na.to_numpy(), "expected"] = "human_na"
    ref.loc[ref["y"].notna(), "expected"] = "labelled"
    ref.loc[ref["yhat"].isna(), "expected"] = "judge_na"
    merged = units.merge(ref, on=["judge", *KEYS], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all()
    assert set(merged["status"]) == {"labelled", "unlabelled", "human_na", "judge_na"}
    wrong = merged[merged["status"] != merged["expected"]]
    assert wrong.empty, wrong.head()
