"""judge_drift, judge_stability and agreement_binary in dbt, on a simulated folder with
a planted drifted version (+0.15 on the latent 0-1 scale) and reruns, against the same
figures recomputed in pandas from fct_judge_ratings; the simulator's options are off
by default (the demo data are unchanged)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judge_bias.simulate import simulate
from judge_bias.simulate.versions import DRIFT_VERSION
from judge_bias.warehouse.build import run_dbt
from tests.conftest import DEMO_DIR, query

MODELS = ["build", "-s", "+judge_drift", "+judge_stability", "+agreement_binary"]


def test_simulator_options_are_off_by_default(tmp_path: Path) -> None:
    plain = simulate(tmp_path / "plain", n_prompts=12)
    both = simulate(tmp_path / "both", n_prompts=12, rerun_share=0.5, drift_shift=0.1)
    plain_rows = (plain / "judge_ratings.csv").read_text(encoding="utf-8").splitlines()
    both_rows = (both / "judge_ratings.csv").read_text(encoding="utf-8").splitlines()
    assert both_rows[: len(plain_rows)] == plain_rows  # the added rows come after, only
    added = list(csv.DictReader(both_rows[:1] + both_rows[len(plain_rows) :]))
    assert {r["run_id"] for r in added if r["judge"] != DRIFT_VERSION} == {"2"}
    assert any(r["judge"] == DRIFT_VERSION for r in added)
    with open(both / "models.csv", encoding="utf-8") as f:
        models = list(csv.DictReader(f))
    assert [m["previous_version"] for m in models if m["model"] == DRIFT_VERSION] != [""]
    for name in ("judge_ratings.csv", "models.csv", "human_annotations.csv"):
        assert (DEMO_DIR / name).read_bytes() == (simulate(tmp_path / "demo") / name).read_bytes()


@pytest.mark.dbt
def test_marts_on_planted_drift_and_reruns(tmp_path: Path) -> None:
    data = simulate(tmp_path / "data", n_prompts=40, rerun_share=0.4, drift_shift=0.15)
    db = tmp_path / "drift.duckdb"
    run_dbt(MODELS, db, data, capture=True)
    fct = query(db, "select * from fct_judge_ratings where judge_score_norm is not null")
    drift = query(db, "select * from judge_drift").set_index("dimension")
    before = drift["judge_before"].unique()
    assert list(before) == ["aurora-large"] and list(drift["judge_after"].unique()) == [
        DRIFT_VERSION
    ]
    # pandas: first run of each version per item, paired on the shared items
    first = fct.sort_values("run_id").drop_duplicates(
        ["judge", "dimension", "prompt_id", "model", "framing"]
    )
    keys = ["dimension", "prompt_id", "model", "framing"]
    paired = first[first["judge"] == "aurora-large"].merge(
        first[first["judge"] == DRIFT_VERSION], on=keys, suffixes=("_b", "_a")
    )
    for dim, g in [*paired.groupby("dimension"), ("all", paired)]:
        row = drift.loc[dim]
        diff = g["judge_score_norm_a"] - g["judge_score_norm_b"]
        assert row["n_items"] == len(g)
        assert row["mean_shift"] == pytest.approx(diff.mean(), abs=1e-9)
        assert row["flip_rate"] == pytest.approx((diff.abs() > 1e-9).mean(), abs=1e-9)
        assert row["mean_shift_ci_low"] > 0.05  # planted +0.15 on the latent scale
        assert row["drift_flag"] and "shift" in row["drift_reasons"]

    stab = query(db, "select * from judge_stability").set_index(["judge", "dimension"])
    rerun = fct[fct["judge"] != DRIFT_VERSION].groupby(
        ["judge", "dimension", "prompt_id", "model", "framing"]
    )["judge_score_norm"]
    items = rerun.agg(["count", "nunique", "min", "max"])
    items = items[items["count"] >= 2].reset_index()
    for (judge, dim), g in items.groupby(["judge", "dimension"]):
        row = stab.loc[(judge, dim)]
        assert row["n_items"] == len(g)
        assert row["flip_rate"] == pytest.approx((g["nunique"] > 1).mean(), abs=1e-9)
        crossed = (g["min"] < 0.5) & (g["max"] >= 0.5)
        assert row["pass_cross_rate"] == pytest.approx(crossed.mean(), abs=1e-9)
        assert row["flip_rate_ci_low"] <= row["flip_rate"] <= row["flip_rate_ci_high"]

    binary = query(db, "select * from agreement_binary").set_index(["judge", "dimension"])
    pos = fct[(fct["framing"] == "positive") & fct["human_score_norm"].notna()]
    for (judge, dim), g in pos.groupby(["judge", "dimension"]):
        hp = g["human_score_norm"] >= 0.5
        jp = g["judge_score_norm"] >= 0.5
        row = binary.loc[(judge, dim)]
        assert row["n_labelled"] == len(g)
        assert row["sensitivity"] == pytest.approx(jp[hp].mean(), abs=1e-9)
        assert row["specificity"] == pytest.approx((~jp[~hp]).mean(), abs=1e-9)
    # a null statistic is explained in notes
    has_null = binary.select_dtypes("float").isna().any(axis=1)
    assert binary.loc[has_null, "notes"].notna().all()
