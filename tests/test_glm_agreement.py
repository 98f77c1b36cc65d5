"""The GLM agreement (paper section 2.4) against independent references: the
observed alpha against the ``krippendorff`` package on the graders x units
reliability matrix (not our value-count path), the counterfactual against a
simulation with planted grader offsets, and glm_agreement's quantiles against
the per-draw alphas of glm_agreement_draws."""

from __future__ import annotations

import importlib

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judge_bias.glm import MODELS, FitSettings, GlmConfig, Inputs, Priors, run, run_glms
from judge_bias.glm.agreement import QUANTILES, alpha_draws, row_codes
from judge_bias.glm.data import ordinal_counts, ordinal_counts_from_rows
from judge_bias.glm.likelihood import ordinal_log_probs

# the module (judge_bias.glm's attribute `agreement` is its function of that name)
agreement_module = importlib.import_module("judge_bias.glm.agreement")
SETTINGS = FitSettings(draws=300, warmup=300, chains=2, seed=5)
GRADERS = {"judge-a": ("llm", -1.5), "judge-b": ("llm", 0.0), "judge-c": ("llm", 1.5),
           "ann-1": ("human", 0.0)}  # fmt: skip


def planted_rows(offsets_scale: float, seed: int = 2) -> pd.DataFrame:
    """80 prompts x 2 models, every grader rates every completion once: a
    prompt's quality is shared by its completions and graders, each grader adds
    its planted offset (times ``offsets_scale``) before logistic cutpoints."""
    rng = np.random.default_rng(seed)
    cut = np.array([-2.0, -0.7, 0.7, 2.0])
    rows = []
    for prompt in range(80):
        quality = rng.normal(0, 1.5)  # the prompt's: the items model's item effect
        for model in ("m1", "m2"):
            for grader, (kind, offset) in GRADERS.items():
                eta = quality + offsets_scale * offset
                p = 1 / (1 + np.exp(-(cut - eta)))
                score = int(rng.choice(5, p=np.diff(np.r_[0.0, p, 1.0])))
                unit = f"p{prompt}|{model}"
                rows.append(dict(grader=grader, grader_type=kind, model=model,
                                 item=f"p{prompt}", unit=unit, score=score))  # fmt: skip
    return pd.DataFrame(rows)


def fitted(rows: pd.DataFrame, model: str = "grader_model"):
    keys = ("grader", "grader_type", "model", *(("item",) if model == "items" else ()))
    data = ordinal_counts(ordinal_counts_from_rows(rows, keys), list(range(5)))
    return run(MODELS[model], data, Priors(), SETTINGS)


@pytest.fixture(scope="module")
def lenient():
    rows = planted_rows(1.0)
    return rows, fitted(rows)


def test_observed_alpha_equals_the_krippendorff_package_on_the_reliability_matrix(lenient):
    rows, fit = lenient
    observed, _ = alpha_draws(fit, rows, draws=2, seed=0)
    matrix = rows.pivot(index="grader", columns="unit", values="score").to_numpy(float)
    ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                             value_domain=list(range(5)))  # fmt: skip
    assert observed == pytest.approx(ref, abs=1e-12)


def test_counterfactual_removes_the_grader_main_effects_and_nothing_else(lenient):
    rows, fit = lenient
    codes = row_codes(fit, rows)
    for s in (0, 123):
        draw = {name: value[s] for name, value in fit.flat().items()}
        removed = {**draw, **{t: np.zeros_like(draw[t]) for t in fit.spec.grader_terms}}
        eta = np.asarray(fit.spec.predictor(draw, codes))
        eta_removed = np.asarray(fit.spec.predictor(removed, codes))
        # each row's linear predictor lost exactly its grader's main effect
        np.testing.assert_allclose(eta - eta_removed, draw["grader_effects"][codes["grader"]],
                                   atol=1e-12)  # fmt: skip
    assert fit.spec.grader_terms == ("grader_effects",)


# The draws' class log-probabilities as one jax.jit program (alpha_draws) against
# the eager operations one by one: XLA may fuse and reorder the float operations, so
# they can differ in the last bits (a review measured up to 3.6e-15; on this fixture,
# the grader_model and the items fits, 172 draws each: 0); the stated tolerance is
# 1e-12 absolute on log-probabilities of order 1 to 10.
JIT_EAGER_ATOL = 1e-12


def test_jitted_log_probs_equal_the_eager_operations(lenient):
    rows, fit = lenient
    codes = row_codes(fit, rows)
    program = agreement_module.jitted_log_probs(fit)
    worst = 0.0
    for s in (0, 57, 123, 599):
        draw = {name: value[s] for name, value in fit.flat().items()}
        removed = {**draw, **{t: np.zeros_like(draw[t]) for t in fit.spec.grader_terms}}
        for p in (draw, removed):
            eager = np.asarray(ordinal_log_probs(fit.spec.predictor(p, codes), p["cutpoints"]))
            jitted = np.asarray(program(p, codes))
            assert jitted.shape == eager.shape == (len(rows), 5)
            np.testing.assert_allclose(jitted, eager, rtol=0, atol=JIT_EAGER_ATOL)
            worst = max(worst, float(np.abs(jitted - eager).max()))
    assert worst < JIT_EAGER_ATOL


def test_alpha_draws_jitted_equal_the_eager_path(lenient, monkeypatch):
    """The whole of alpha_draws with the program run eagerly (jit replaced by the
    identity): the same Gumbel draws pick the same classes, so the alphas agree."""
    rows, fit = lenient
    observed, jitted = alpha_draws(fit, rows, draws=20, seed=3)
    monkeypatch.setattr(agreement_module, "jitted_log_probs", agreement_module.log_probs_of)
    observed_eager, eager = alpha_draws(fit, rows, draws=20, seed=3)
    assert observed == observed_eager
    for kind in ("posterior", "counterfactual"):
        np.testing.assert_allclose(jitted[kind], eager[kind], rtol=0, atol=JIT_EAGER_ATOL)


def test_planted_leniency_costs_agreement_and_the_counterfactual_gets_it_back(lenient):
    """The items model (prompt effects carry the shared quality, as planted).
    Graders 1.5 logits apart: the replicated alpha reproduces the observed one
    and removing the grader effects raises it well above; with no planted
    offsets (graders agree up to noise) removing them changes alpha by little."""
    rows, _ = lenient
    observed, by_kind = alpha_draws(fitted(rows, "items"), rows, draws=60, seed=1)
    posterior = by_kind["posterior"]
    assert np.quantile(posterior, 0.02) < observed < np.quantile(posterior, 0.98)
    gain = np.median(by_kind["counterfactual"]) - np.median(posterior)
    assert gain > 0.1, gain
    flat_rows = planted_rows(0.0)
    _, flat = alpha_draws(fitted(flat_rows, "items"), flat_rows, draws=60, seed=1)
    flat_gain = np.median(flat["counterfactual"]) - np.median(flat["posterior"])
    assert abs(flat_gain) < gain / 3, (flat_gain, gain)


def test_glm_agreement_quantiles_are_those_of_its_draws(lenient):
    rows, _ = lenient
    rows = rows.assign(dimension="d")
    counts = ordinal_counts_from_rows(rows, ("dimension", "grader", "grader_type", "model"))
    inputs = Inputs(
        rating_counts=counts,
        item_counts=pd.DataFrame(),
        pairwise_counts=pd.DataFrame(),
        scales=pd.DataFrame({"dimension": "d", "score": [0.0, 1.0, 2.0, 3.0, 4.0]}),
        families={},
        agreement_rows=rows,
        excluded=pd.DataFrame(columns=["dimension", "reason", "n"]),
    )
    config = GlmConfig(models=("grader_model",), settings=SETTINGS, agreement_draws=40)
    out = run_glms(inputs, config)
    summary = out[out["output"] == "agreement"].set_index("kind")
    draws = out[out["output"] == "agreement_draws"]
    assert sorted(draws["kind"].unique()) == ["counterfactual", "posterior"]
    for kind, group in draws.groupby("kind"):
        assert list(group["draw"]) == list(range(40))
        alphas = group["alpha"].to_numpy(float)
        assert summary.loc[kind, "mean"] == pytest.approx(np.nanmean(alphas), abs=1e-12)
        for q in QUANTILES:
            want = np.nanquantile(alphas, q)
            assert summary.loc[kind, f"q{int(q * 100):02d}"] == pytest.approx(want, abs=1e-12)
    assert summary.loc["observed", "n_units"] == rows["unit"].nunique() == 160


def test_undefined_glm_alpha_has_a_note() -> None:
    """Constant scores (valid data; newuser20) leave the observed alpha undefined
    (0 / 0; the krippendorff package refuses a one-value domain) and glm_agreement
    showed it null with nothing saying why: the row's notes now say it; a kind with
    some undefined draws says how many were left out of its mean (pandas' mean of
    the finite draws), and a kind with every draw defined has no note."""
    from judge_bias.glm.agreement import summarise_alphas

    units = np.repeat(np.arange(50), 3)
    constant = np.full(len(units), 2)
    with pytest.raises(ValueError, match="more than one value"):
        krippendorff.alpha(reliability_data=constant.reshape(50, 3).T.astype(float))
    observed = agreement_module._alpha(units, constant, 5, "ordinal")
    posterior = np.array([0.5, np.nan, 0.3, 0.1])
    counterfactual = np.array([0.4, 0.2, 0.1, 0.0])
    got = summarise_alphas(
        observed,
        {"posterior": posterior, "counterfactual": counterfactual},
        pd.DataFrame({"unit": units}),
        "ordinal",
    ).set_index("kind")
    assert np.isnan(got.loc["observed", "mean"])
    assert got.loc["observed", "notes"].startswith("alpha undefined: the scores of the units")
    assert got.loc["posterior", "mean"] == pytest.approx(pd.Series(posterior).mean())
    assert got.loc["posterior", "n_draws"] == 3
    assert got.loc["posterior", "notes"].startswith("alpha undefined on 1 of 4 draws")
    assert pd.isna(got.loc["counterfactual", "notes"])
    # only NaN is undefined (what _alpha returns): an infinite draw, which _alpha cannot
    # give, is summarised as main did (nanmean: inf) and gets no note
    draws = {"posterior": np.array([0.2, np.inf])}
    with np.errstate(invalid="ignore"):  # numpy's quantile interpolates inf - inf
        inf = summarise_alphas(0.1, draws, pd.DataFrame({"unit": units}), "ordinal")
    inf = inf.set_index("kind")
    assert inf.loc["posterior", "mean"] == pd.Series([0.2, np.inf]).mean() == np.inf
    assert pd.isna(inf.loc["posterior", "notes"])
