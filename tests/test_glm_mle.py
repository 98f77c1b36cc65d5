"""Flat GLMs with weak priors against maximum likelihood on the same data, same
design and same coding.

- Ordinal: Play Favorites Faithfulness (16,137 judge ratings of 9 judges on 9
  models, plus the human mean label where it is a point of the 0-4 scale, as
  the warehouse's on_scale filter keeps: 1,363 rows), grader_type and
  grader_model against statsmodels' OrderedModel (logit) on sum-coded
  (effect-coded) columns: grader / model main effects and their products for
  the interaction, no constant. Our free effects are the first n - 1 levels'
  effects, exactly OrderedModel's coefficients; OrderedModel's thresholds are
  our cutpoints minus the intercept (the intercept and the first cutpoint are
  told apart only by their priors).
- Pairwise: the demo's pairwise_judgments (6 judges, every pair in both
  orders), pairwise_no_length and pairwise against statsmodels Logit with a
  constant (the position intercept), sign x pair indicators (free pair
  effects), sum-coded judge columns and (pairwise) one standardised
  length-difference column per judge.

Weak priors: every effect, the intercept and the length-slope hyperpriors
have scale 10; the cutpoint gaps LogNormal(0, 2) with no minimum spacing.
Claim: every posterior mean is within ``allowed`` of the MLE: 4 Monte Carlo
standard errors of the mean (ArviZ's, from the chains' ESS: the sampler's own
error, about 0.02 posterior sds at 2,000 draws) plus half the posterior's
skewness times its sd (Pearson's mean - mode for a near-normal density: with
weak priors the posterior mode is the MLE, and the mean leaves it by the
skew). Measured on pairwise_no_length: the largest gap 0.045 sds, 0.57 of
its allowance; with the effects' prior scale 0.3 instead of 10 (a prior
read from the wrong field) the grader effects move up to 0.33 sds, 4.1
times the allowance, and the test fails (the old claim, within 2 posterior
sds, passed it). grader_model on Play Favorites is compared on the cells'
cumulative logits: one cell is separated (see its test).
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit
from scipy.stats import skew
from statsmodels.miscmodels.ordinal_model import OrderedModel

from judge_bias.cli import main
from judge_bias.glm import MODELS, FitSettings, Priors, ordinal_counts, pairwise_counts, run
from judge_bias.glm.data import ordinal_counts_from_rows, pairwise_counts_from_rows
from judge_bias.warehouse.build import DEFAULT_DATA, PROJECT_DIR
from tests.conftest import FAITHFULNESS, SHARED_DATA, needs_shared

WEAK = Priors(
    intercept_scale=10.0,
    effect_scale=10.0,
    interaction_scale=10.0,
    cutpoint_gap_loc=0.0,
    cutpoint_gap_scale=2.0,
    min_cutpoint_spacing=0.0,
    length_slope_mean_scale=10.0,
    length_slope_sigma_scale=10.0,
)
SETTINGS = FitSettings(draws=1000, warmup=500, chains=2, seed=31, target_accept=0.95)
SCALE = [0.0, 1.0, 2.0, 3.0, 4.0]
# the weak cutpoint-gap prior leaves a long tail on the gap below the 9 ratings
# of score 0; at target 0.95 a fit may show a divergent transition or two out of
# 2,000 (measured: 1 on grader_type). More than 0.25% fails.
MAX_DIVERGENCES = 5


def sum_coded(values: pd.Series, prefix: str) -> pd.DataFrame:
    """Sum (effect) coding with levels sorted as the GLM codes them: a column
    per level but the last, 1 for that level, -1 for the last level."""
    levels = sorted(values.astype(str).unique())
    v = values.astype(str).to_numpy()
    cols = {
        f"{prefix}[{lev}]": (v == lev).astype(float) - (v == levels[-1]).astype(float)
        for lev in levels[:-1]
    }
    return pd.DataFrame(cols, index=values.index)


def products(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {f"{x}:{y}": a[x] * b[y] for x in a.columns for y in b.columns}, index=a.index
    )


@pytest.fixture(scope="module")
def faithfulness(tmp_path_factory) -> pd.DataFrame:
    if not FAITHFULNESS.exists():
        pytest.skip("../shared/data is not present")
    out = tmp_path_factory.mktemp("pf") / "data"
    prompts = SHARED_DATA / "play_favorites" / "prompt_ids.csv"
    assert (
        main(["import", "play-favorites", str(FAITHFULNESS), str(prompts), "--out", str(out)]) == 0
    )
    judges = pd.read_csv(out / "judge_ratings.csv")
    humans = pd.read_csv(out / "human_annotations.csv")
    rows = pd.concat(
        [
            judges.assign(grader=judges["judge"], grader_type="llm"),
            humans.assign(grader=humans["annotator_id"], grader_type="human"),
        ]
    ).rename(columns={"label": "score"})
    on_scale = rows["score"].isin(SCALE)
    assert (~on_scale & (rows["grader_type"] == "llm")).sum() == 0
    return rows[on_scale].reset_index(drop=True)[["grader", "grader_type", "model", "score"]]


def stats(draws: np.ndarray) -> tuple[float, float, float, float]:
    """(mean, sd, MCSE of the mean, skewness) of one coefficient's draws,
    shaped (chains, draws)."""
    mcse = float(az.mcse(az.convert_to_dataset({"x": draws}), method="mean")["x"].values)
    flat = draws.ravel()
    return float(flat.mean()), float(flat.std()), mcse, float(skew(flat))


def allowed(sd: float, mcse: float, skewness: float) -> float:
    """4 MCSEs plus Pearson's mean - mode, |skewness| x sd / 2."""
    return 4 * mcse + abs(skewness) * sd / 2


def assert_near_mle(
    ours: dict[str, tuple[float, float, float, float]],
    mle: pd.Series,
    pooling: dict[str, float] | None = None,
) -> int:
    """``ours``: name -> ``stats``; every MLE coefficient named and within
    ``allowed`` of its posterior mean, plus ``pooling[name]`` for a
    partially pooled coefficient (its expected pull toward the group mean)."""
    assert set(mle.index) <= set(ours), sorted(set(mle.index) - set(ours))[:5]
    gap = pd.Series({k: abs(ours[k][0] - mle[k]) for k in mle.index})
    limit = pd.Series({k: allowed(*ours[k][1:]) + (pooling or {}).get(k, 0.0) for k in mle.index})
    ratio = gap / limit
    print(
        f"{len(gap)} coefficients: max |posterior mean - MLE| / sd "
        f"{(gap / pd.Series({k: ours[k][1] for k in mle.index})).max():.3f}; "
        f"max gap / allowed {ratio.max():.2f} ({ratio.idxmax()})"
    )
    assert (gap <= limit).all(), pd.DataFrame({"gap": gap, "allowed": limit})[gap > limit]
    return len(mle)


def posterior(fit, name: str, labels: list[str], keep: int | None = None) -> dict:
    s = fit.settings
    draws = fit.samples[name].reshape(s.chains, s.draws, -1)
    draws = draws[..., :keep] if keep is not None else draws
    return {lab: stats(draws[..., j]) for j, lab in enumerate(labels)}


class CountedOrderedModel(OrderedModel):
    """statsmodels' OrderedModel on distinct (design row, score) rows, each
    log-likelihood term times its count: the same likelihood as on the rows
    (statsmodels' own loglikeobs), but its numerical gradients run on ~450
    rows instead of 17,500."""

    counts: np.ndarray

    def loglike(self, params):
        return float(np.sum(self.counts * self.loglikeobs(params)))


def ordinal_mle(rows: pd.DataFrame, exog: pd.DataFrame, ours: dict) -> pd.Series:
    """OrderedModel's MLE, started at our posterior means (the optimum does not
    depend on the start; it only saves BFGS iterations of numerical gradients)."""
    design = pd.concat([exog, rows["score"].rename("_score")], axis=1)
    cells = design.groupby(list(design.columns), sort=False).size().rename("_n").reset_index()
    y = pd.Series(pd.Categorical(cells["_score"], categories=SCALE, ordered=True))
    model = CountedOrderedModel(y, cells[list(exog.columns)], distr="logit")
    model.counts = cells["_n"].to_numpy(float)
    thr = np.array([ours[f"thr[{i}]"][0] for i in range(len(SCALE) - 1)])
    start = np.concatenate(
        [[ours[c][0] for c in exog.columns], thr[:1], np.log(np.maximum(np.diff(thr), 1e-3))]
    )
    result = model.fit(start_params=start, method="bfgs", maxiter=5000, disp=False)
    assert result.mle_retvals["converged"]
    params = result.params
    k = exog.shape[1]
    thresholds = model.transform_threshold_params(params.to_numpy())[1:-1]
    return pd.concat(
        [params.iloc[:k], pd.Series(thresholds, index=[f"thr[{i}]" for i in range(len(SCALE) - 1)])]
    )


def thresholds(fit) -> dict:
    s = fit.settings
    c = fit.samples["cutpoints"].reshape(s.chains, s.draws, -1)
    b0 = fit.samples["intercept"].reshape(s.chains, s.draws, 1)
    rel = c - b0
    return {f"thr[{i}]": stats(rel[..., i]) for i in range(rel.shape[-1])}


def fitted(rows: pd.DataFrame, model: str):
    """The count data of ``rows`` and ``model`` fitted on it with weak priors."""
    data = ordinal_counts(ordinal_counts_from_rows(rows), SCALE, "Faithfulness")
    fit = run(MODELS[model], data, WEAK, SETTINGS)
    assert fit.divergences <= MAX_DIVERGENCES
    return data, fit


@needs_shared
@pytest.mark.shared
def test_grader_type_equals_ordered_logit_mle(faithfulness):
    rows = faithfulness
    data, fit = fitted(rows, "grader_type")
    types, models = data.levels["grader_type"], data.levels["model"]
    exog = pd.concat(
        [sum_coded(rows["grader_type"], "type"), sum_coded(rows["model"], "model")], axis=1
    )
    ours = {
        **posterior(fit, "grader_type_effects", [f"type[{t}]" for t in types]),
        **posterior(fit, "model_effects", [f"model[{m}]" for m in models]),
        **thresholds(fit),
    }
    mle = ordinal_mle(rows, exog, ours)
    assert assert_near_mle(ours, mle) == 1 + 8 + 4


def separated_cells(rows: pd.DataFrame) -> set[tuple[str, str]]:
    """(grader, model) cells whose every rating is the same score at an end of the
    scale: the cell's own interaction makes its likelihood monotone, so the MLE
    of its linear predictor is infinite (quasi-complete separation)."""
    ends = rows.groupby(["grader", "model"])["score"].agg(["min", "max"])
    one = ends[(ends["min"] == ends["max"]) & ends["min"].isin([SCALE[0], SCALE[-1]])]
    return set(one.index)


def ordinal_score(theta: np.ndarray, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The analytic score of the counted ordered-logit log-likelihood in (beta,
    thresholds): P(y = k) = F(c_k - x'b) - F(c_(k-1) - x'b), F logistic."""
    k = X.shape[1]
    c = np.concatenate([[-np.inf], theta[k:], [np.inf]])
    eta = X @ theta[:k]
    up, lo = c[y + 1] - eta, c[y] - eta
    f_up, f_lo = expit(up), expit(lo)
    d_up = np.where(np.isfinite(up), f_up * (1 - f_up), 0.0)
    d_lo = np.where(np.isfinite(lo), f_lo * (1 - f_lo), 0.0)
    p = f_up - f_lo
    grad_c = np.zeros(len(c) - 2)
    top = y < len(c) - 2
    np.add.at(grad_c, y[top], (w * d_up / p)[top])
    np.add.at(grad_c, y[y > 0] - 1, (-w * d_lo / p)[y > 0])
    return np.concatenate([X.T @ (-w * (d_up - d_lo) / p), grad_c])


def cell_logits_mle(rows: pd.DataFrame, cells: list[tuple[str, str]], ours: dict) -> pd.Series:
    """The MLE of the cumulative logits thr_k - eta of every cell: cell-means coding
    (one column per cell but the first), Newton steps on the analytic score (its
    Jacobian by central differences) from our posterior means to a zero score.
    statsmodels' OrderedModel is the reference at the optimum: its log-likelihood
    there equals ours, and its own (numerical) score is zero there."""
    key = pd.MultiIndex.from_frame(rows[["grader", "model"]])
    exog = pd.DataFrame(
        {f"c{i}": (key == cell).astype(float) for i, cell in enumerate(cells) if i},
        index=rows.index,
    )
    design = pd.concat([exog, rows["score"].rename("_score")], axis=1)
    counted = design.groupby(list(design.columns), sort=False).size().rename("_n").reset_index()
    X = counted[list(exog.columns)].to_numpy(float)
    y = pd.Categorical(counted["_score"], categories=SCALE, ordered=True).codes.astype(int)
    w = counted["_n"].to_numpy(float)
    n_thr = len(SCALE) - 1
    logits = np.array([[ours[f"{g}|{m}|{j}"][0] for j in range(n_thr)] for g, m in cells])
    theta = np.concatenate([(logits[0] - logits[1:]).mean(axis=1), logits[0]])
    for _ in range(50):
        g = ordinal_score(theta, X, y, w)
        if np.abs(g).max() < 1e-8:
            break
        h = 1e-6
        jac = np.column_stack(
            [
                (ordinal_score(theta + e, X, y, w) - ordinal_score(theta - e, X, y, w)) / (2 * h)
                for e in np.eye(theta.size) * h
            ]
        )
        theta = theta - np.linalg.solve((jac + jac.T) / 2, g)
    assert np.abs(ordinal_score(theta, X, y, w)).max() < 1e-8
    model = CountedOrderedModel(
        pd.Series(pd.Categorical.from_codes(y, SCALE)), counted[list(exog.columns)], distr="logit"
    )
    model.counts = w
    k = X.shape[1]
    sm_params = np.concatenate([theta[:k], theta[k : k + 1], np.log(np.diff(theta[k:]))])
    lo, hi = np.concatenate([[-np.inf], theta[k:], [np.inf]])[[y, y + 1]]
    eta = X @ theta[:k]
    ours_ll = float(w @ np.log(expit(hi - eta) - expit(lo - eta)))
    assert model.loglike(sm_params) == pytest.approx(ours_ll, rel=1e-12)
    assert np.abs(model.score(sm_params)).max() < 1e-3
    eta_cells = np.concatenate([[0.0], theta[:k]])
    return pd.Series(
        {
            f"{g}|{m}|{j}": theta[k + j] - eta_cells[i]
            for i, (g, m) in enumerate(cells)
            for j in range(n_thr)
        }
    )


@needs_shared
@pytest.mark.shared
def test_grader_model_equals_ordered_logit_mle(faithfulness):
    """Issue 29 defect 7: the coefficients were compared with sds = 2 because 43 of
    93 left the allowance. Cause: the human grader gave all 143 completions of
    Claude 3 Sonnet the top score; that cell's MLE is at infinity (Newton's
    interaction coefficient reaches 19.6 with the Hessian's smallest eigenvalue
    1e-10), and with sum coding that one direction moves every coefficient, so
    BFGS stopped anywhere along it. The likelihood identifies every other cell's
    cumulative logits thr_k - eta (the separated cell's ratings inform only its own
    eta); those are compared, with the same allowance as everywhere (4 MCSE +
    skewness x sd / 2), to statsmodels on the data without the separated cell."""
    rows = faithfulness
    separated = separated_cells(rows)
    assert separated == {("gt_mean", "anthropic.claude-3-sonnet-20240229-v1:0")}
    data, fit = fitted(rows, "grader_model")
    graders, models = list(data.levels["grader"]), list(data.levels["model"])
    s = fit.settings
    n = s.chains * s.draws

    def flat(name: str) -> np.ndarray:
        return np.asarray(fit.samples[name]).reshape(n, -1)

    gm = flat("grader_model_effects").reshape(n, len(graders), len(models))
    eta = flat("intercept")[:, :, None] + flat("grader_effects")[:, :, None]
    eta = eta + flat("model_effects")[:, None, :] + gm
    cut = flat("cutpoints")
    cells = [(g, m) for g in graders for m in models if (g, m) not in separated]
    ours = {}
    for g, m in cells:
        logits = cut - eta[:, graders.index(g), models.index(m), None]
        for j in range(logits.shape[1]):
            ours[f"{g}|{m}|{j}"] = stats(logits[:, j].reshape(s.chains, s.draws))
    kept = rows[
        [(g, m) not in separated for g, m in zip(rows["grader"], rows["model"], strict=True)]
    ]
    mle = cell_logits_mle(kept.reset_index(drop=True), cells, ours)
    # A cumulative logit is a sum of ~5 correlated parameters; Pearson's skewness
    # term (a one-dimensional approximation) leaves 12 of the 356 up to 1.9 times
    # their allowance, gaps 0.07-0.16 sds, in the sparse lower categories (score 1:
    # 89 of 17,500 ratings). Each gets a further 0.25 posterior sds (largest gap
    # overall 0.43 sds, within its skewness allowance); the old claim was 2 sds.
    slack = {k: 0.25 * ours[k][1] for k in mle.index}
    assert assert_near_mle(ours, mle, slack) == 89 * 4


def demo_pairs() -> pd.DataFrame:
    demo = PROJECT_DIR / DEFAULT_DATA
    pairs = pd.read_csv(demo / "pairwise_judgments.csv")
    completions = pd.read_csv(demo / "completions.csv")
    words = completions.assign(length=completions["completion_text"].str.split().str.len())
    length = words.set_index(["prompt_id", "model"])["length"]
    first = length.reindex(pd.MultiIndex.from_frame(pairs[["prompt_id", "model_first"]])).to_numpy()
    second = length.reindex(
        pd.MultiIndex.from_frame(pairs[["prompt_id", "model_second"]])
    ).to_numpy()
    pairs = pairs[pairs["verdict"].isin(["first", "second"])].assign(
        length_diff=(first - second)[pairs["verdict"].isin(["first", "second"]).to_numpy()]
    )
    return pairs.assign(
        grader=pairs["judge"],
        grader_type="llm",
        first_chosen=(pairs["verdict"] == "first").astype(int),
    ).reset_index(drop=True)


def slope_pooling(fit, mle: pd.Series, se: pd.Series, graders: list[str]) -> dict[str, float]:
    """The grader length slopes are partially pooled, ~ Normal(mu, sigma): given
    mu and sigma, a normal likelihood (MLE b, standard error s) puts the
    slope's posterior mean at b - (b - mu) s^2 / (s^2 + sigma^2). The
    allowance is that pull's size averaged over the posterior draws of mu and
    sigma (the MLE has no such pull; measured up to 0.34 posterior sds)."""
    mu = fit.flat(("length_slope_mean",))["length_slope_mean"].ravel()
    sigma = fit.flat(("length_slope_sigma",))["length_slope_sigma"].ravel()
    out = {}
    for g in graders:
        b, s2 = mle[f"slope[{g}]"], se[f"slope[{g}]"] ** 2
        out[f"slope[{g}]"] = float(np.mean(np.abs(b - mu) * s2 / (s2 + sigma**2)))
    return out


@pytest.mark.parametrize("name", ["pairwise_no_length", "pairwise"])
def test_pairwise_equals_logit_mle(name):
    rows = demo_pairs()
    data = pairwise_counts(pairwise_counts_from_rows(rows), "pairwise")
    assert data.pair_coding == "free"
    fit = run(MODELS[name], data, WEAK, SETTINGS)
    assert fit.divergences <= MAX_DIVERGENCES
    first, second = rows["model_first"].astype(str), rows["model_second"].astype(str)
    a = np.where(first <= second, first, second)
    b = np.where(first <= second, second, first)
    sign = np.where(first == a, 1.0, -1.0)
    pair = pd.Series([f"{x} vs {y}" for x, y in zip(a, b, strict=True)])
    pair_cols = pd.DataFrame(
        {f"pair[{p}]": sign * (pair == p) for p in data.levels["pair"]}, index=rows.index
    )
    judges = sum_coded(rows["grader"], "grader")
    exog = pd.concat([pd.Series(1.0, index=rows.index, name="const"), pair_cols, judges], axis=1)
    if name == "pairwise":
        x = rows["length_diff"].to_numpy(float)
        x = (x - x.mean()) / x.std(ddof=1)
        for g in data.levels["grader"]:
            exog[f"slope[{g}]"] = x * (rows["grader"] == g)
    logit = sm.Logit(rows["first_chosen"], exog).fit(disp=False, maxiter=200)
    mle = logit.params
    ours = {
        "const": posterior(fit, "intercept", ["const"])["const"],
        **posterior(fit, "pair_effects", [f"pair[{p}]" for p in data.levels["pair"]]),
        **posterior(fit, "grader_effects", [f"grader[{g}]" for g in data.levels["grader"]]),
    }
    pooling = {}
    if name == "pairwise":
        ours |= posterior(
            fit, "grader_length_slopes", [f"slope[{g}]" for g in data.levels["grader"]]
        )
        pooling = slope_pooling(fit, mle, logit.bse, data.levels["grader"])
    n = assert_near_mle(ours, mle, pooling)
    assert n == 1 + len(data.levels["pair"]) + 5 + (6 if name == "pairwise" else 0)
