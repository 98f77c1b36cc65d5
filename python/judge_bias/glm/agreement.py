"""Counterfactual agreement (paper section 2.4): Krippendorff's alpha on
posterior-predictive scores, and on scores predicted with the grader effects
removed from the linear predictor (before the cutpoints), beside the observed
alpha.

Units are completions (prompt x model), coders the graders (judges and
annotators); alpha is ordinal over the scale's points (``krippendorff``
package, fed with per-unit value counts). Each posterior draw gives one
predicted score per observed rating, so a draw's alpha has the observed
design; the quantiles over draws carry the posterior uncertainty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from judge_bias.glm.fit import Fit
from judge_bias.glm.lazy import module
from judge_bias.glm.likelihood import ordinal_log_probs

if TYPE_CHECKING:
    import jax
    import krippendorff
else:
    jax = module("jax")
    krippendorff = module("krippendorff")

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
# why an alpha is NaN (``_alpha``): no expected disagreement to divide by
UNDEFINED_ALPHA = (
    "the scores of the units rated by two or more graders take fewer than two values "
    "(or no unit has two graders), so no disagreement is expected by chance (0 / 0)"
)
# Krippendorff's levels of measurement (the krippendorff package's names).
Level = Literal["nominal", "ordinal", "interval", "ratio"]


def _alpha(units: np.ndarray, classes: np.ndarray, k: int, level: Level) -> float:
    # the per-unit value counts (np.add.at was a fifth of the 400 alphas' time at 10M)
    n_units = int(units.max()) + 1
    counts = np.bincount(units * k + classes, minlength=n_units * k).reshape(n_units, k)
    counts = counts.astype(float)
    counts = counts[counts.sum(axis=1) >= 2]
    if len(counts) == 0 or (counts.sum(axis=0) > 0).sum() < 2:
        return float("nan")
    return float(
        krippendorff.alpha(
            value_counts=counts, value_domain=np.arange(k), level_of_measurement=level
        )
    )


def unit_sample(units: pd.DataFrame, max_units: int, seed: int) -> pd.DataFrame:
    """The (dimension, unit) pairs the agreement reads: every unit of a dimension
    with at most ``max_units``, else a reproducible sample of them (drawn from
    the sorted units, so the order the warehouse returns them in does not matter)."""
    chosen = []
    for dimension, group in units.groupby("dimension", sort=True):
        names = np.sort(group["unit"].astype(str).unique())
        if len(names) > max_units:
            rng = np.random.default_rng(seed)
            names = np.sort(rng.choice(names, size=max_units, replace=False))
        chosen.append(pd.DataFrame({"dimension": dimension, "unit": names}))
    if not chosen:
        return pd.DataFrame({"dimension": [], "unit": []}, dtype=object)
    return pd.concat(chosen, ignore_index=True)


def row_codes(fit: Fit, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The fit's integer codes of every rating row (columns named as the factors)."""
    codes = {}
    for factor, names in fit.data.levels.items():
        if factor in rows.columns:
            lookup = {name: i for i, name in enumerate(names)}
            codes[factor] = rows[factor].astype(str).map(lookup).to_numpy()
    return codes


def log_probs_of(fit: Fit) -> Callable[[dict, dict], jax.Array]:
    """A draw's class log-probabilities of every row (params, row codes), eagerly."""
    return lambda p, c: ordinal_log_probs(fit.spec.predictor(p, c), p["cutpoints"])


def jitted_log_probs(fit: Fit) -> Callable[[dict, dict], jax.Array]:
    """log_probs_of as one compiled program: eagerly, each of its ~15 operations was
    a dispatch of its own, and the 2 x draws calls per dimension were a third of
    int_glm_results' CPU (1M ratings, 2 x 200 calls: 4.9 CPU s). XLA's fused floats
    differ from the eager ones in the last bits (tests/test_glm_agreement.py: within
    1e-12)."""
    return jax.jit(log_probs_of(fit))


def alpha_draws(
    fit: Fit, rows: pd.DataFrame, draws: int = 100, seed: int = 0, level: Level = "ordinal"
) -> tuple[float, dict[str, np.ndarray]]:
    """The observed alpha of ``rows`` (unit, grader, grader_type, model, [item],
    score) and, per kind (posterior, counterfactual), the alpha of each of
    ``draws`` posterior draws (seeded; the same draws for both kinds)."""
    scores = fit.data.class_scores
    y = rows["score"].astype(float).map({s: i for i, s in enumerate(scores)}).to_numpy(int)
    units = pd.factorize(rows["unit"])[0]
    codes = row_codes(fit, rows)
    k = fit.data.num_classes
    rng = np.random.default_rng(seed)
    flat = fit.flat()
    total = next(iter(flat.values())).shape[0]
    picks = rng.choice(total, size=min(draws, total), replace=False)
    out: dict[str, list[float]] = {"posterior": [], "counterfactual": []}
    log_probs = jitted_log_probs(fit)
    for s in picks:
        params = {name: value[s] for name, value in flat.items()}
        removed = dict(params)
        for name in fit.spec.grader_terms:
            removed[name] = np.zeros_like(params[name])
        for kind, p in (("posterior", params), ("counterfactual", removed)):
            logp = np.asarray(log_probs(p, codes))
            draw = np.argmax(logp + rng.gumbel(size=logp.shape), axis=-1)  # Gumbel-max sampling
            out[kind].append(_alpha(units, draw, k, level))
    return _alpha(units, y, k, level), {kind: np.asarray(v) for kind, v in out.items()}


def agreement(
    fit: Fit, rows: pd.DataFrame, draws: int = 100, seed: int = 0, level: Level = "ordinal"
) -> pd.DataFrame:
    """Observed, posterior-predictive and counterfactual alpha of ``rows``
    (``alpha_draws``) as quantiles over draws."""
    return summarise_alphas(*alpha_draws(fit, rows, draws, seed, level), rows, level)


def summarise_alphas(
    observed: float, by_kind: dict[str, np.ndarray], rows: pd.DataFrame, level: Level
) -> pd.DataFrame:
    """One row per kind: the mean and quantiles of its alphas over draws, and notes
    when an alpha is undefined (0 / 0: the scores of the units with two or more
    graders take one value; newuser20: constant scores left the observed alpha null
    with nothing saying why)."""
    rows_out = [
        {
            "kind": "observed",
            "mean": observed,
            **{f"q{int(q * 100):02d}": observed for q in QUANTILES},
            "n_draws": 0,
            "notes": f"alpha undefined: {UNDEFINED_ALPHA}" if np.isnan(observed) else None,
        }
    ]
    for kind, v in by_kind.items():
        # NaN is _alpha's undefined alpha; n_draws, mean and quantiles stay main's
        # (n_draws the finite draws, nanmean and nanquantile: identical numbers)
        undefined = np.isnan(v)
        defined = not undefined.all()
        rows_out.append(
            {
                "kind": kind,
                "mean": float(np.nanmean(v)) if defined else float("nan"),
                **{
                    f"q{int(q * 100):02d}": float(np.nanquantile(v, q)) if defined else np.nan
                    for q in QUANTILES
                },
                "n_draws": int(np.isfinite(v).sum()),
                "notes": f"alpha undefined on {int(undefined.sum())} of {len(v)} draws, left out "
                f"of the mean and quantiles: {UNDEFINED_ALPHA}"
                if undefined.any()
                else None,
            }
        )
    frame = pd.DataFrame(rows_out)
    frame["n_units"] = int(rows["unit"].nunique())
    frame["n_ratings"] = int(len(rows))
    frame["level"] = level
    return frame
