"""Planted simulation: data drawn from the GLMs themselves (simulate/glm.py, with
numpy, not the package's likelihood), fitted back by the count engine; the
reported 90% HDIs (the marts' hdi_low / hdi_high) must cover the planted values
at a rate near 0.90.

grader_model: 5 graders x 4 models x 80 items, no item effects (grader_model
has no item term, and an ordered logit with omitted item effects shrinks the
others). 37 scalars per replicate (intercept, 5 grader, 4 model, 20 interaction
effects, 4 cutpoints, 3 self contrasts; the intercept and the cutpoints are
told apart only by their priors, and the planted ones sit at the prior's
first-cutpoint mean) x 3 replicates (seeds) = 111 interval checks. pairwise: 3 judges
x 6 pairs x 60 verdicts per order, 13 scalars (position, 6 pair effects, 3
grader effects, 3 length slopes) x 3 replicates = 39 checks. The checks of one
replicate are correlated, so the bound is a rate, not all-or-nothing: with 0.90
expected, >= 0.80 (ordinal) and >= 0.75 (pairwise) are about 3 binomial sds
below, and a sign or scale error in the likelihood or the coding fails them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_bias.glm import MODELS, FitSettings, Priors, ordinal_counts, pairwise_counts
from judge_bias.glm.data import ordinal_counts_from_rows, pairwise_counts_from_rows
from judge_bias.glm.fit import run_batch
from judge_bias.glm.likelihood import ordinal_log_probs
from judge_bias.glm.runner import _effects
from judge_bias.simulate import glm as sim
from judge_bias.simulate import planted as P

SETTINGS = FitSettings(draws=1000, warmup=300, chains=2, seed=23)
SEEDS = (101, 202, 303)
FAMILIES = {m: m.split("-")[0] for m in P.GLM_MODELS}


def truth_table(seed: int) -> pd.DataFrame:
    return pd.DataFrame(sim.glm_truth_rows(seed), columns=sim.TRUTH_HEADER)


def _key(row: pd.Series) -> str:
    """parameter|subject as in truth.csv (subject: grader, model or pair)."""

    def text(column: str) -> str:
        value = row.get(column)
        return "" if value is None or pd.isna(value) else str(value)

    parameter = row["parameter"]
    if parameter == "grader_model_effects":
        return f"{parameter}|{text('grader')}|{text('rated_model')}"
    subject = text("grader") or text("rated_model") or text("pair") or text("cutpoint")
    return f"{parameter}|{subject}"


def truth_by_key(seed: int, dimension: str) -> dict[str, float]:
    t = truth_table(seed)
    t = t[(t["dimension"] == dimension)]
    return {f"{r.parameter}|{r.subject}": float(r.value) for r in t.itertuples()}


def coverage(table: pd.DataFrame, truth: dict[str, float]) -> tuple[int, int]:
    keys = table.apply(_key, axis=1)
    hits = total = 0
    for key, low, high in zip(keys, table["hdi_low"], table["hdi_high"], strict=True):
        if key in truth:
            total += 1
            hits += int(low <= truth[key] <= high)
    return hits, total


def test_simulator_draws_the_likelihood_the_glm_evaluates():
    """The numpy class probabilities equal exp of the package's log-space ones."""
    eta = np.linspace(-3, 3, 13)
    cuts = np.array(P.GLM_CUTPOINTS)
    ours = np.exp(np.asarray(ordinal_log_probs(eta, cuts)))
    np.testing.assert_allclose(sim.ordinal_probabilities(eta, cuts), ours, atol=1e-6)
    rng = np.random.default_rng(0)
    draws = sim.draw_scores(rng, np.full(200_000, 0.5), cuts)
    freq = np.bincount(draws, minlength=6)[1:] / len(draws)
    np.testing.assert_allclose(freq, sim.ordinal_probabilities(np.array(0.5), cuts), atol=0.005)


def test_planted_values_are_in_the_glm_parameterisation():
    assert abs(sum(P.GLM_GRADER_EFFECT.values())) < 1e-12
    assert abs(sum(P.GLM_MODEL_EFFECT.values())) < 1e-12
    gm = sim.interaction_matrix()
    np.testing.assert_allclose(gm.sum(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(gm.sum(axis=1), 0, atol=1e-12)
    contrasts = sim.self_contrasts()
    # the sign of each planted self effect survives the centring
    assert contrasts["aurora-large"] > 0.5 and contrasts["cirrus-max"] < -0.3
    truth = truth_table(1)
    assert set(truth["term_type"]) >= {"glm_grader", "glm_grader_model", "glm_item", "glm_pair"}
    assert set(truth["term_type"]) >= {"glm_length_slope", "glm_position", "glm_self"}


def test_write_glm_planted_writes_data_and_truth(tmp_path):
    sim.write_glm_planted(tmp_path, seed=5, n_items=10)
    ratings = pd.read_csv(tmp_path / "glm_ratings.csv")
    assert len(ratings) == len(P.GLM_GRADERS) * len(P.GLM_MODELS) * 10
    assert ratings["score"].between(1, 5).all()
    truth = pd.read_csv(tmp_path / "truth.csv")
    assert (truth["term_type"] == "glm_item").sum() == 10


@pytest.fixture(scope="module")
def ordinal_tables() -> list[pd.DataFrame]:
    datas = [
        ordinal_counts(
            ordinal_counts_from_rows(sim.planted_ratings(seed, item_sd=0.0)),
            [1, 2, 3, 4, 5],
            dimension=str(seed),
        )
        for seed in SEEDS
    ]
    fits = run_batch(MODELS["grader_model"], datas, Priors(), SETTINGS)
    for fit in fits:
        assert fit.divergences == 0
    return [_effects(fit, FAMILIES, "effects") for fit in fits]


def test_grader_model_intervals_cover_planted_values(ordinal_tables):
    hits = total = 0
    for seed, table in zip(SEEDS, ordinal_tables, strict=True):
        assert table["r_hat"].max() < 1.015  # mixed (1.01 as ArviZ printed it, now unrounded)
        h, t = coverage(table, truth_by_key(seed, ""))
        assert t == 37
        hits, total = hits + h, total + t
    assert total == 111
    assert hits / total >= 0.80, f"coverage {hits}/{total}"


def test_grader_model_recovers_the_planted_self_contrasts(ordinal_tables):
    """Averaged over the replicates, each self contrast is within 2 (average) sds."""
    truth = sim.self_contrasts()
    for judge, value in truth.items():
        rows = [
            t[(t["parameter"] == "self_contrast") & (t["grader"] == judge)] for t in ordinal_tables
        ]
        mean = np.mean([r["mean"].iloc[0] for r in rows])
        sd = np.mean([r["sd"].iloc[0] for r in rows]) / np.sqrt(len(rows))
        assert abs(mean - value) < 3 * sd, (judge, mean, value, sd)


def test_pairwise_intervals_cover_planted_values():
    datas = []
    for seed in SEEDS:
        frame = pairwise_counts_from_rows(sim.planted_pairs(seed))
        data = pairwise_counts(frame, dimension=str(seed))
        assert data.pair_coding == "free"
        datas.append(data)
    # measured: 1, 13 and 2 divergent transitions of 2,000 on the three seeds (the
    # centred length slopes' funnel with 3 graders; the fits are flagged warning),
    # so this test checks the intervals, not the absence of divergences
    fits = run_batch(MODELS["pairwise"], datas, Priors(), SETTINGS)
    hits = total = 0
    for seed, fit in zip(SEEDS, fits, strict=True):
        table = _effects(fit, FAMILIES, "pairwise_effects")
        table = table[table["parameter"] != "intransitive_triple"]
        h, t = coverage(table, truth_by_key(seed, "pairwise"))
        assert t == 13
        hits, total = hits + h, total + t
    assert hits / total >= 0.75, f"coverage {hits}/{total}"
