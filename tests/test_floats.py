"""No check fails valid data: computed doubles are compared within one tolerance
(macros/floats.sql, mirrored by judge_bias.warehouse.floats for the Great
Expectations suites), and Play Favorites' Logical correctness, whose human
``gt`` is a mean of three annotators such as 0.667, builds green."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pandas as pd

from judge_bias.warehouse.build import PROJECT_DIR
from judge_bias.warehouse.floats import FLOAT_ABS_TOL, FLOAT_REL_TOL, float_le, float_tolerance
from tests.conftest import FAITHFULNESS, needs_shared, query
from tests.importing import assert_reconciled, import_and_build

# The real file (spilioeve/Play-Favorites, data/Logical correctness.csv): scale 0..2,
# gt a mean of three annotators written to three decimals (1.5 where two rated).
GT_VALUES = ("0", "0.333", "0.667", "1", "1.333", "1.5", "1.667", "2")
JUDGES = (
    "gpt-4o",
    "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "meta.llama3-1-70b-instruct-v1:0",
    "mistral.mistral-large-2402-v1:0",
)
HEADER = "judge,model,gt,dataset,prompt_id,rating,pred_length"


def write_logical_correctness(path: Path, n_prompts: int = 12, seed: int = 29) -> Path:
    """A Play Favorites-format file shaped like Logical correctness: every judge
    rates every model (its own included) on 0..2, every gt value of the real file
    occurs, 0.667 (whose 0.667 * 3 / 3 is 0.6670000000000001) among them."""
    rng = random.Random(seed)
    lines = [HEADER]
    for dataset in ("chatbotarena", "helm-instruct"):
        for p in range(n_prompts):
            for i, model in enumerate(JUDGES):
                gt = GT_VALUES[(p + i) % len(GT_VALUES)]
                length = rng.randint(4, 240)
                for judge in JUDGES:
                    lift = judge == model and rng.random() < 0.3
                    rating = min(2, max(0, round(float(gt)) + lift - (rng.random() < 0.2)))
                    lines.append(f"{judge},{model},{gt},{dataset},{dataset}_{p},{rating},{length}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_macro_and_python_hold_the_same_tolerance() -> None:
    macro = (PROJECT_DIR / "macros" / "floats.sql").read_text(encoding="utf-8")
    found = re.search(r"\(([0-9.e-]+) \+ ([0-9.e-]+) \* greatest\(abs", macro)
    assert found, "float_tolerance's formula is not where this test reads it"
    assert (float(found[1]), float(found[2])) == (FLOAT_ABS_TOL, FLOAT_REL_TOL)


def test_python_tolerance_accepts_rounding_and_refuses_differences() -> None:
    assert 0.667 * 3 / 3 > 0.667  # the value that failed the build
    assert float_le(0.667 * 3 / 3, 0.667)
    assert not float_le(0.668, 0.667)
    assert float_le(1e6 + 1e-4, 1e6) and not float_le(1e6 + 1e-2, 1e6)
    assert float_tolerance(0.0, 0.0) == FLOAT_ABS_TOL


def _ge_success(expectation, values: list[float]) -> bool:
    from judge_bias.warehouse.validation import _context

    source = _context().data_sources.add_pandas("t")
    batch = (
        source.add_dataframe_asset("a")
        .add_batch_definition_whole_dataframe("all")
        .get_batch(batch_parameters={"dataframe": pd.DataFrame({"v": values})})
    )
    return bool(batch.validate(expectation).success)


def test_ge_unit_interval_tolerates_rounding_only() -> None:
    from judge_bias.warehouse.expectations import _unit

    # 1 + 2**-52 (one ulp above 1) and -0.0 pass; an exact [0, 1] check refused the first
    assert _ge_success(_unit("v"), [0.0, -0.0, 0.5, 1.0 + 2**-52])
    assert not _ge_success(_unit("v"), [0.5, 1.001])
    assert not _ge_success(_unit("v"), [-0.001])


def _human_norm_is_gt_over_top(db: Path, top: float, dimension: str) -> None:
    got = query(
        db,
        "select distinct human_score, human_score_norm from fct_judge_ratings "
        f"where dimension = '{dimension}'",
    )
    # the importer copies gt as text: the mart holds it, and gt / top, exactly
    assert set(got["human_score"]) <= {float(g) for g in GT_VALUES}
    assert (got["human_score_norm"] == got["human_score"] / top).all(), got


def test_logical_correctness_shaped_file_builds_green(tmp_path_factory) -> None:
    """Failed on main: dbt's exact human_score_min <= mean <= max check, 12 rows."""
    src = write_logical_correctness(tmp_path_factory.mktemp("lc") / "Logical correctness.csv")
    out, result = import_and_build("play-favorites", [src], tmp_path_factory)
    counts = assert_reconciled(out, result)
    assert all(rejected == 0 for _, rejected in counts.values()), counts
    assert query(result.db_path, "select count(*) as n from rejected_rows")["n"][0] == 0
    assert counts["judge_ratings"][0] == 2 * 12 * len(JUDGES) ** 2
    _human_norm_is_gt_over_top(result.db_path, 2.0, "Logical correctness")


@needs_shared
def test_faithfulness_and_logical_correctness_together_build_green(tmp_path_factory) -> None:
    src = write_logical_correctness(tmp_path_factory.mktemp("lc2") / "Logical correctness.csv")
    out, result = import_and_build("play-favorites", [FAITHFULNESS, src], tmp_path_factory)
    counts = assert_reconciled(out, result)
    assert all(rejected == 0 for _, rejected in counts.values()), counts
    assert query(result.db_path, "select count(*) as n from rejected_rows")["n"][0] == 0
    dims = query(result.db_path, "select distinct dimension from fct_judge_ratings")
    assert set(dims["dimension"]) == {"Faithfulness", "Logical correctness"}
    _human_norm_is_gt_over_top(result.db_path, 2.0, "Logical correctness")


def test_a_valid_skewed_posterior_has_its_mean_outside_its_hdi() -> None:
    """Why glm_effects' mean-inside-HDI check is a warning and hdi_low <= hdi_high
    the error: ArviZ's 90% HDI of a log-normal(0, 3) posterior (a scale
    parameter's shape) stops below its mean (e^4.5 = 90), the old error check
    failed it."""
    import arviz as az
    import numpy as np
    import yaml

    draws = np.exp(3.0 * np.random.default_rng(3).standard_normal((4, 2000)))
    table = az.summary(draws, hdi_prob=0.9, kind="stats")
    mean, low, high = table["mean"].iloc[0], table.iloc[0, 2], table.iloc[0, 3]
    assert float_le(low, high) and not low <= mean <= high, table
    spec = yaml.safe_load((PROJECT_DIR / "models/marts/glm/_glm__models.yml").read_text())
    effects = next(m for m in spec["models"] if m["name"] == "glm_effects")
    checks = {
        rule["expression_is_true"]: t["model_checks"].get("config", {})
        for t in effects["data_tests"]
        if "model_checks" in t
        for rule in t["model_checks"]["arguments"]["rules"]
        if "expression_is_true" in rule
    }
    assert checks == {
        "{{ float_le('hdi_low', 'hdi_high') }}": {},
        "{{ float_between('mean', 'hdi_low', 'hdi_high') }}": {"severity": "warn"},
    }
