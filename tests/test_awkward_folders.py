"""One valid folder with many awkward cases at once builds green, with every row
accepted, no NaN or infinity in any table, and every null statistic explained.

Its cases (hand-written, each one real data has; tests/test_valid_data_property.py
generates others): judges with constant scores (dimension `constj`, every judge
scores 2, on a constant human score: by_dimension's constj fit is exact, every
standard error 0); a binary 0/1
dimension with pre-aggregated human means 0.5, 2/3 and 1/3; a dimension rated only
by judges of their own model (`selfonly`); a judge (`lonely`) that rates only the
prompts without human labels; a judge whose alias is a seed alias of another family
(`gpt-4o`: GPT in model_aliases, `Custom` here: the models file wins); pairwise
judgments of one pair on one prompt and perturbation judgments of one item.
One build (GLMs off), about 40 s.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from judge_bias.warehouse.build import build
from tests.conftest import query
from tests.importing import assert_reconciled, nonfinite_columns

pytestmark = pytest.mark.dbt

JUDGES = ["A", "B", "gpt-4o", "Mistral Large", "lonely"]
GENERATORS = ["A", "B", "C", "gpt-4o"]
PROMPTS = [f"p{i}" for i in range(8)]  # p6, p7 have no human label


def _write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def write_folder(out: Path) -> None:
    rng = random.Random(1)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "models.csv", ["alias", "model", "family"], [
        ["A", "A", "FamA"], ["B", "B", "FamB"], ["C", "C", "FamA"], ["gpt-4o", "GPT-4o", "Custom"],
        ["Mistral Large", "Mistral Large", "FamB"], ["lonely", "lonely", "FamL"],
    ])  # fmt: skip
    _write(out / "prompts.csv", ["prompt_id", "dataset", "task_type"],
           [[p, "d1" if i < 6 else "d2", "t"] for i, p in enumerate(PROMPTS)])  # fmt: skip
    _write(out / "completions.csv", ["prompt_id", "model", "length_tokens"],
           [[p, m, rng.randint(10, 200)] for p in PROMPTS for m in GENERATORS])  # fmt: skip
    scales = [["quality", s, s, "false"] for s in range(1, 6)]
    scales += [["binary", s, s, "false"] for s in (0, 1)]
    scales += [["selfonly", s, s, "false"] for s in range(1, 4)]
    scales += [["constj", s, s, "false"] for s in range(3)]
    _write(out / "rating_scales.csv", ["dimension", "label", "score", "is_na"], scales)
    ratings, humans = [], []
    for j in JUDGES:
        for p in PROMPTS:
            for m in GENERATORS:
                if j == "lonely" and p not in ("p6", "p7"):
                    continue
                ratings.append([j, p, m, "quality", rng.randint(1, 5)])
                ratings.append([j, p, m, "binary", rng.randint(0, 1)])
                rng.randint(0, 2)  # the draw of the other dimensions' scores as before
                ratings.append([j, p, m, "constj", 2])
                if j == m:
                    ratings.append([j, p, m, "selfonly", rng.randint(1, 3)])
    means = ["2.6666666666666665", "3.5", "4", "1.333", "2"]
    binary_means = ["0.5", "0.6666666666666666", "0", "1", "0.333"]
    for p in PROMPTS[:6]:
        for m in GENERATORS:
            humans.append([p, m, "quality", "gt_mean", rng.choice(means), 3])
            humans.append([p, m, "binary", "gt_mean", rng.choice(binary_means), 3])
            humans.append([p, m, "constj", "h1", 1, 1])
            humans.append([p, m, "selfonly", "h1", rng.randint(1, 3), 1])
    _write(
        out / "judge_ratings.csv", ["judge", "prompt_id", "model", "dimension", "label"], ratings
    )
    header = ["prompt_id", "model", "dimension", "annotator_id", "label", "n_aggregated"]
    _write(out / "human_annotations.csv", header, humans)
    _write(out / "pairwise_judgments.csv",
           ["judge", "prompt_id", "model_first", "model_second", "verdict", "human_verdict"],
           [["A", "p0", "A", "B", "first", "first"],
            ["A", "p0", "B", "A", "first", "second"]])  # fmt: skip
    _write(out / "perturbation_judgments.csv",
           ["judge", "item_id", "bias_type", "condition", "verdict", "ground_truth"],
           [["A", "i0", "verbosity", "original", "A", "A"],
            ["A", "i0", "verbosity", "perturbed", "B", "A"]])  # fmt: skip


@pytest.fixture(scope="module")
def awkward(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("awkward")
    write_folder(root / "data")
    # min_term_support 20 (default 30): constj's judge offsets, 24 ratings each, are
    # supported, so the mart's check decides them by their estimate
    result = build(root / "data", root / "w.duckdb", quiet=True, dbt_vars={"min_term_support": 20})
    return root / "data", result


def test_the_awkward_folder_builds_green_with_every_row_accepted(awkward) -> None:
    data, result = awkward
    assert_reconciled(data, result)
    rejected = query(result.db_path, "select source, reason from rejected_rows")
    assert rejected.empty, rejected.head(10).to_string()


def test_no_table_holds_nan_or_infinity(awkward) -> None:
    """Old code: bias_estimates.z = inf for the constant judge's offset."""
    _, result = awkward
    bad = nonfinite_columns(result.db_path)
    assert not bad, bad


def test_every_null_statistic_has_a_note(awkward) -> None:
    """Old code: agreement_judge_human had no notes (the constant judge's and the
    lonely judge's null correlations unexplained); self_vs_peer_tests had nulls
    without a note."""
    _, result = awkward
    db = result.db_path
    ajh = query(db, "select * from agreement_judge_human")
    stats = [c for c in ajh.columns if c not in ("judge", "dimension", "n", "n_prompts", "notes")]
    unexplained = ajh[ajh[stats].isna().any(axis=1) & ajh["notes"].isna()]
    assert unexplained.empty, unexplained.to_string()
    constant = ajh.set_index(["judge", "dimension"]).loc[("A", "constj"), "notes"]
    assert constant == "correlations null: the judge's scores are constant"
    svp = query(db, "select * from self_vs_peer_tests")
    tested = [c for c in svp.columns if c.startswith(("t_", "p_", "ci_"))]
    unexplained = svp[svp[tested].isna().any(axis=1) & svp["notes"].isna()]
    assert unexplained.empty, unexplained.to_string()
    nulls = query(
        db,
        "select e.analysis, e.slice, e.term from bias_estimates e join bias_fits f "
        "using (analysis, slice) where e.estimate is not null and e.z is null "
        "and (f.notes is null or strpos(f.notes, e.term) = 0)",
    )
    assert nulls.empty, nulls.to_string()


def test_exactly_fitted_terms_are_significant_by_their_estimate(awkward) -> None:
    """Every judge scores constj 2 on a constant human score: by_dimension's constj
    fit is exact, every standard error 0 (closed form: each judge's offset is its
    normalised score 1.0, every self and family term 0). The mart's check
    (significant = interval excludes 0 and (std_error > 0 or |estimate| > 1e-9) and
    n_support >= min_term_support) held, as the build is green, and decides these
    rows by their estimate: the offsets (1.0, 24 ratings) are significant, the zero
    self and family terms are not. Old check (std_error > 0): the build fails on
    the offsets."""
    _, result = awkward
    est = query(result.db_path, "select * from bias_estimates")
    constj = est[(est["analysis"] == "by_dimension") & (est["slice"] == "constj")]
    assert len(constj) and (constj["std_error"] == 0).all()
    offsets = constj[constj["term_type"] == "judge_offset"]
    assert len(offsets) == 4 and (offsets["estimate"] == 1.0).all()
    assert (offsets["n_support"] >= 20).all() and offsets["significant"].all()
    zeros = constj[constj["term_type"].isin(["self", "family"])]
    assert len(zeros) and (zeros["estimate"].abs() <= 1e-9).all()
    assert not zeros["significant"].any()
    # every row of the mart: the rule in pandas
    excludes = (est["ci_low"] > 0) | (est["ci_high"] < 0)
    decided = (est["std_error"] > 0) | (est["estimate"].abs() > 1e-9)
    supported = est["n_support"].isna() | (est["n_support"] >= 20)
    assert (est["significant"] == (excludes & decided & supported)).all()
