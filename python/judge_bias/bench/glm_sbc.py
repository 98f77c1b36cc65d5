"""Simulation-based calibration (Talts et al. 2018) of the count-based GLM sampler.

Each replication draws every parameter of ``grader_model`` from its prior
(written here in numpy from the ``Priors`` fields, independently of the numpyro
model), draws ratings from the ordered logistic with those values
(``simulate.glm.draw_scores``), and fits them back with the engine
(``fit.run_batch``: all replications of a chunk in one compiled program). If
the sampler, the likelihood and the prior agree, then over replications

- each 90% central credible interval covers the drawn value with probability 0.90;
- the rank of the drawn value among L thinned posterior draws is uniform on 0..L.

The design is small on purpose (3 graders x 3 models, 4-point scale, ``n_per_cell``
ratings per cell): 19 scalars per replication (intercept, 3 grader, 3 model,
9 interaction effects, 3 cutpoints). ``judge-bias bench --glm-sbc`` prints the
figures; tests/test_glm_sbc.py (marked slow) asserts them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judge_bias.glm.data import ordinal_counts, ordinal_counts_from_rows
from judge_bias.glm.fit import FitSettings, run_batch
from judge_bias.glm.models import MODELS
from judge_bias.glm.priors import Priors
from judge_bias.simulate.glm import draw_scores

GRADERS = {"human-1": "human", "judge-a": "llm", "judge-b": "llm"}
RATED = ("judge-a", "judge-b", "model-c")
NUM_CLASSES = 4
PARAMETERS = ("intercept", "grader_effects", "model_effects", "grader_model_effects", "cutpoints")
RANK_BINS = 10


def _effects(rng: np.random.Generator, pr: Priors, n: int) -> np.ndarray:
    free = rng.normal(pr.effect_loc, pr.effect_scale, n - 1)
    return np.append(free, -free.sum())


def prior_draw(rng: np.random.Generator, pr: Priors | None = None) -> dict[str, np.ndarray]:
    """One draw of grader_model's parameters from its prior (HiBayes' coding)."""
    pr = pr or Priors()
    g, m = len(GRADERS), len(RATED)
    free = rng.normal(pr.interaction_loc, pr.interaction_scale, (g - 1, m - 1))
    top = np.concatenate([free, -free.sum(axis=1, keepdims=True)], axis=1)
    gaps = rng.lognormal(pr.cutpoint_gap_loc, pr.cutpoint_gap_scale, NUM_CLASSES - 2)
    first = rng.normal(pr.first_cutpoint_loc, pr.first_cutpoint_scale)
    return {
        "intercept": np.array(rng.normal(pr.intercept_loc, pr.intercept_scale)),
        "grader_effects": _effects(rng, pr, g),
        "model_effects": _effects(rng, pr, m),
        "grader_model_effects": np.concatenate([top, -top.sum(axis=0, keepdims=True)]),
        "cutpoints": first + np.concatenate([[0.0], np.cumsum(gaps + pr.min_cutpoint_spacing)]),
    }


def replicate_rows(rng: np.random.Generator, truth: dict, n_per_cell: int) -> pd.DataFrame:
    graders = sorted(GRADERS)
    rows = []
    for gi, grader in enumerate(graders):
        for mi, model in enumerate(sorted(RATED)):
            eta = (
                truth["intercept"]
                + truth["grader_effects"][gi]
                + truth["model_effects"][mi]
                + truth["grader_model_effects"][gi, mi]
            )
            scores = draw_scores(rng, np.full(n_per_cell, float(eta)), truth["cutpoints"])
            rows += [(grader, GRADERS[grader], model, int(s)) for s in scores]
    return pd.DataFrame(rows, columns=["grader", "grader_type", "model", "score"])


@dataclass
class SbcResult:
    replications: int
    scalars: int
    coverage: float  # share of (replication, scalar) whose 90% interval covers the draw
    ranks: np.ndarray  # (replications, scalars): rank of the drawn value, 0..thin
    thin: int
    chi2_p: np.ndarray  # per scalar: chi-square test of uniform ranks (RANK_BINS bins)
    ks_p: float  # KS test of all normalised ranks (jittered) against U(0, 1)
    divergences: int
    seconds: float
    names: list[str]

    def lines(self) -> list[str]:
        bonferroni = min(1.0, float(self.chi2_p.min()) * self.scalars)
        return [
            f"SBC of grader_model: {self.replications} replications x {self.scalars} scalars",
            f"  90% interval coverage: {self.coverage:.3f} (target 0.90; pass band 0.85-0.95)",
            f"  rank uniformity: smallest per-scalar chi-square p {self.chi2_p.min():.4f} "
            f"(Bonferroni x{self.scalars}: {bonferroni:.3f}); pooled KS p {self.ks_p:.3f}",
            f"  divergences: {self.divergences}; wall time {self.seconds:.1f} s",
        ]


def _flatten(values: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate([np.ravel(values[p]) for p in PARAMETERS])


def run_sbc(
    replications: int = 100,
    seed: int = 20260101,
    n_per_cell: int = 20,
    settings: FitSettings | None = None,
    chunk: int = 50,
    thin: int = 99,
) -> SbcResult:
    settings = settings or FitSettings(draws=500, warmup=200, chains=2, seed=seed)
    rng = np.random.default_rng(seed)
    truths, datas = [], []
    for r in range(replications):
        truth = prior_draw(rng)
        rows = replicate_rows(rng, truth, n_per_cell)
        counts = ordinal_counts_from_rows(rows)
        datas.append(ordinal_counts(counts, list(range(1, NUM_CLASSES + 1)), dimension=f"r{r}"))
        truths.append(_flatten(truth))
    start = time.perf_counter()
    posteriors, divergences = [], 0
    for at in range(0, replications, chunk):
        fits = run_batch(MODELS["grader_model"], datas[at : at + chunk], Priors(), settings)
        for fit in fits:
            divergences += fit.divergences
            draws = fit.flat(PARAMETERS)
            posteriors.append(
                np.concatenate([draws[p].reshape(len(draws[p]), -1) for p in PARAMETERS], axis=1)
            )
    seconds = time.perf_counter() - start
    drawn = np.stack(truths)  # (R, K)
    post = np.stack(posteriors)  # (R, S, K)
    low, high = np.quantile(post, [0.05, 0.95], axis=1)
    covered = (low <= drawn) & (drawn <= high)
    keep = np.linspace(0, post.shape[1] - 1, thin).round().astype(int)
    ranks = (post[:, keep, :] < drawn[:, None, :]).sum(axis=1)  # 0..thin
    bins = np.floor(ranks * RANK_BINS / (thin + 1)).astype(int)
    chi2_p = np.array(
        [
            stats.chisquare(np.bincount(bins[:, k], minlength=RANK_BINS)).pvalue
            for k in range(ranks.shape[1])
        ]
    )
    u = (ranks + np.random.default_rng(seed + 1).random(ranks.shape)) / (thin + 1)
    names = [f"{p}[{i}]" for p in PARAMETERS for i in range(int(np.size(prior_draw(rng)[p])))]
    return SbcResult(
        replications=replications,
        scalars=drawn.shape[1],
        coverage=float(covered.mean()),
        ranks=ranks,
        thin=thin,
        chi2_p=chi2_p,
        ks_p=float(stats.kstest(u.ravel(), "uniform").pvalue),
        divergences=divergences,
        seconds=seconds,
        names=names,
    )


def run_sbc_bench(replications: int | None = None) -> int:
    result = run_sbc(replications or 100)
    for line in result.lines():
        print(line)
    return 0
