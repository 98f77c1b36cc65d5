"""model_win_rates: the win rates' prompt-clustered standard errors against statsmodels
(intercept-only OLS, cluster-robust by prompt) on synthetic judgments, and, on the real
AlpacaEval annotations (../shared/data/alpaca_eval, built once per session), each
generator's judge win rate against AlpacaEval's own arithmetic from the JSON."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from judge_bias.comparisons.win_rates import win_rates
from tests.conftest import query
from tests.test_alpaca_eval import FILES, JUDGE, raw_figures


def _judgments(seed: int = 4) -> pd.DataFrame:
    """One row per model side of a judgment: a judge favouring model A by +0.15 over
    the humans, 80 prompts with 2-6 judgments each, a human verdict on 60% of them."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(80):
        ease = rng.normal(0, 0.2)
        for _ in range(rng.integers(2, 7)):
            human = float(rng.random() < 0.5 + ease / 2)
            judge = float(rng.random() < 0.5 + ease / 2 + 0.15)
            judge = 0.5 if rng.random() < 0.1 else judge  # ties
            has_h = rng.random() < 0.6
            for model, sign in (("A", 1), ("B", -1)):
                j = judge if sign > 0 else 1 - judge
                h = (human if sign > 0 else 1 - human) if has_h else np.nan
                rows.append({"judge": "j", "model": model, "prompt_id": f"p{p:03d}",
                             "judge_win": j, "human_win": h})  # fmt: skip
    return pd.DataFrame(rows)


def _sums(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.assign(
        has=rows["human_win"].notna(),
        jh=rows["judge_win"].where(rows["human_win"].notna(), 0.0),
    )
    g = rows.groupby(["judge", "model", "prompt_id"])
    return pd.DataFrame({
        "n_judgments": g.size(), "judge_wins": g["judge_win"].sum(),
        "n_with_human": g["has"].sum(), "judge_wins_with_human": g["jh"].sum(),
        "human_wins": g["human_win"].sum(),
    }).reset_index()  # fmt: skip


def _cluster_ols(y: pd.Series, groups: pd.Series) -> tuple[float, float]:
    fit = sm.OLS(y.to_numpy(), np.ones((len(y), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(groups)[0]}
    )
    return float(fit.params[0]), float(fit.bse[0])


def test_rates_and_errors_match_statsmodels_cluster_robust() -> None:
    rows = _judgments()
    out = win_rates(_sums(rows), 0.90).set_index("model")
    for model in ("A", "B"):
        r = rows[rows["model"] == model]
        est, se = _cluster_ols(r["judge_win"], r["prompt_id"])
        assert out.loc[model, "judge_win_rate"] == pytest.approx(est, abs=1e-12)
        assert out.loc[model, "judge_win_rate_std_error"] == pytest.approx(se, rel=1e-9)
        h = r[r["human_win"].notna()]
        est, se = _cluster_ols(h["human_win"], h["prompt_id"])
        assert out.loc[model, "human_win_rate"] == pytest.approx(est, abs=1e-12)
        assert out.loc[model, "human_win_rate_std_error"] == pytest.approx(se, rel=1e-9)
        est, se = _cluster_ols(h["judge_win"] - h["human_win"], h["prompt_id"])
        assert out.loc[model, "judge_minus_human"] == pytest.approx(est, abs=1e-12)
        assert out.loc[model, "judge_minus_human_std_error"] == pytest.approx(se, rel=1e-9)
    # the planted +0.15 for A: a significant positive gap for A, its mirror for B
    assert out.loc["A", "judge_minus_human_ci_low"] > 0
    assert out.loc["A", "judge_minus_human"] == pytest.approx(-out.loc["B", "judge_minus_human"])


@pytest.mark.dbt
@pytest.mark.skipif(not FILES, reason="../shared/data/alpaca_eval is not present")
def test_alpaca_eval_win_rates_are_alpaca_evals(imported_build) -> None:
    """Each generator's judge_win_rate is AlpacaEval's win rate (mean of preference - 1,
    a tie one half) from the JSON; no human verdicts, so no human rate, said in notes."""
    data, result = imported_build("alpaca-eval", FILES)
    mart = query(result.db_path, "select * from model_win_rates").set_index(["judge", "model"])
    aliases = pd.read_csv(data / "models.csv")
    canonical = dict(zip(aliases["alias"], aliases["model"], strict=True))
    for path in FILES:
        raw = raw_figures(path)
        model = canonical.get(raw["generator"], raw["generator"])
        row = mart.loc[(JUDGE, model)]
        assert row["n_judgments"] == raw["n"]
        assert row["judge_win_rate"] == pytest.approx(raw["win_rate"], abs=1e-12)
        assert 0 < row["judge_win_rate_std_error"] < 0.05
        assert pd.isna(row["human_win_rate"]) and "no human verdict" in row["notes"]
