"""Imported Play Favorites Faithfulness data builds exactly (reads ../shared/data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_bias.bias.reference import reference_fit
from judge_bias.warehouse.build import BuildResult
from tests.conftest import FAITHFULNESS as FAITH
from tests.conftest import needs_shared, query

pytestmark = [pytest.mark.dbt, pytest.mark.shared, needs_shared]
# The paper's names and families (../shared/data/README.md).
NAMES = {
    "anthropic.claude-v2:1": ("Claude v2", "Claude"),
    "anthropic.claude-3-sonnet-20240229-v1:0": ("Claude 3 Sonnet", "Claude"),
    "anthropic.claude-3-5-sonnet-20241022-v2:0": ("Claude 3.5 Sonnet", "Claude"),
    "gpt-3.5-turbo": ("GPT-3.5 Turbo", "GPT"),
    "gpt-4o": ("GPT-4o", "GPT"),
    "meta.llama3-1-8b-instruct-v1:0": ("Llama 3 8B", "Llama 3"),
    "meta.llama3-1-70b-instruct-v1:0": ("Llama 3 70B", "Llama 3"),
    "mistral.mistral-7b-instruct-v0:2": ("Mistral 7B", "Mistral"),
    "mistral.mistral-large-2407-v1:0": ("Mistral Large", "Mistral"),
}


@pytest.fixture(scope="module")
def pf(pf_build: BuildResult) -> tuple[BuildResult, pd.DataFrame]:
    result = pf_build
    raw = pd.read_csv(FAITH)  # pandas 3 parses floats correctly rounded, as DuckDB does
    raw["source_row_number"] = np.arange(1, len(raw) + 1)
    return result, raw


def _fct(result: BuildResult, raw: pd.DataFrame) -> pd.DataFrame:
    fct = query(result.db_path, "select * from fct_judge_ratings")
    return fct.merge(raw, on="source_row_number", suffixes=("", "_raw"), validate="one_to_one")


def test_row_count_names_and_families(pf) -> None:
    result, raw = pf
    fct = _fct(result, raw)
    assert len(fct) == 16_137 == len(raw)
    assert result.validation.success
    assert set(fct["judge"]) == set(fct["model"]) == {n for n, _ in NAMES.values()}
    assert set(fct["judge_family"]) == {"Claude", "GPT", "Llama 3", "Mistral"}
    for col in ("judge", "model"):
        expected = fct[f"{col}_raw"].map(NAMES)
        assert (fct[col] == expected.str[0]).all()
        assert (fct[f"{col}_family"] == expected.str[1]).all()


def test_scores_are_rating_and_gt_over_four_exactly(pf) -> None:
    result, raw = pf
    fct = _fct(result, raw)
    assert (fct["judge_score_norm"] == fct["rating"] / 4).all()
    assert (fct["human_score_norm"] == fct["gt"] / 4).all()
    assert (fct["human_score"] == fct["gt"]).all()  # kept exactly, no rounding
    assert (fct["n_annotators"] == 3).all() and fct["is_human_pre_aggregated"].all()
    assert (fct["length_tokens"] == fct["pred_length"]).all()
    assert (fct["dimension"] == "Faithfulness").all()
    assert (fct["dataset"] == fct["dataset_raw"]).all()


def test_is_self_exactly_where_judge_and_model_coincide(pf) -> None:
    result, raw = pf
    fct = _fct(result, raw)
    assert (fct["is_self"] == (fct["judge_raw"] == fct["model_raw"])).all()
    fam = fct["judge_raw"].map(NAMES).str[1] == fct["model_raw"].map(NAMES).str[1]
    assert (fct["is_same_family"] == (fam & ~fct["is_self"])).all()


def test_fact_table_reproduces_the_papers_fit(pf) -> None:
    """The HC0 figures of the paper's fit, from statsmodels on the fact table as built."""
    result, raw = pf
    df = _fct(result, raw)
    df = df.rename(columns={"judge_score_norm": "y", "human_score_norm": "x"})
    fit = reference_fit(
        df,
        "y ~ judge + x:judge + C(same_judge, Treatment('0')) + C(same_family, Treatment('0')) - 1",
        "HC0",
    )
    for term, (est, se) in {
        "C(same_judge, Treatment('0'))[T.GPT-4o]": (0.022973, 0.002573),
        "C(same_judge, Treatment('0'))[T.Llama 3 8B]": (-0.064993, 0.007733),
        "C(same_family, Treatment('0'))[T.GPT]": (0.020349, 0.003025),
    }.items():
        assert fit.params[term] == pytest.approx(est, abs=1e-6)
        assert fit.bse[term] == pytest.approx(se, abs=1e-6)


def test_importer_keeps_gt_text_and_scale(tmp_path: Path) -> None:
    from judge_bias.inputs.importers import import_play_favorites

    counts = import_play_favorites([FAITH], tmp_path)
    assert counts["judge_ratings"] == 16_137
    scales = pd.read_csv(tmp_path / "rating_scales.csv")
    assert scales["score"].tolist() == [0, 1, 2, 3, 4]
    humans = pd.read_csv(tmp_path / "human_annotations.csv", dtype=str)
    assert set(humans["label"]) == set(pd.read_csv(FAITH, dtype=str)["gt"])
