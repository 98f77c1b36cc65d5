"""NUTS on CPU: one model on every dimension's count data (``run_batch``).

The sampler is ``sampler.py``'s: started at the posterior mode with a Laplace
mass matrix (or a block one from the curvature), each chain one compiled
program run two threads at a time (no extra processes); the seed is fixed and
stored with the fit. The diagnostics are ArviZ's (rank-normalised split r_hat,
bulk and tail ESS, MCSE; ArviZ's algorithms in glm.mcmc_stats, without its
import) plus the sampler's divergences and the energy BFMI per chain.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from judge_bias.glm import mcmc_stats
from judge_bias.glm.centring import grader_centring
from judge_bias.glm.data import CountData
from judge_bias.glm.lazy import module
from judge_bias.glm.models import ModelSpec, lone_type_mask
from judge_bias.glm.priors import Priors
from judge_bias.glm.progress import progress
from judge_bias.settings import CI_LEVEL

if TYPE_CHECKING:
    import jax
    import pandas as pd
    import scipy.stats as stats

    from judge_bias.glm import sampler
else:
    jax = module("jax")
    stats = module("scipy.stats")
    # the sampler (JAX) only when a model is fitted
    sampler = module("judge_bias.glm.sampler")

# Diagnostic thresholds: a fit beyond one of them is kept, flagged "warning".
R_HAT_MAX = 1.01
ESS_MIN_PER_CHAIN = 100
BFMI_MIN = 0.3


@dataclass(frozen=True)
class FitSettings:
    draws: int = 1000
    # warm-up only tunes the step size when the Laplace mass matrix is used
    # (models up to sampler.DENSE_MASS_MAX parameters); larger models adapt a
    # diagonal mass matrix in numpyro's windows and need more (glm_warmup)
    warmup: int = 200
    chains: int = 2
    seed: int = 20250101
    # numpyro's default; HiBayes' examples use 0.95, which only shortens the
    # steps (the posterior is the same): settable with glm_target_accept
    target_accept: float = 0.8
    max_tree_depth: int = 10
    ci_level: float = CI_LEVEL


@dataclass
class Fit:
    spec: ModelSpec
    data: CountData
    settings: FitSettings
    samples: dict[str, np.ndarray]  # (chains, draws, ...) per site
    diverging: np.ndarray  # (chains, draws)
    energy: np.ndarray  # (chains, draws)
    seconds: float
    notes: list[str] = field(default_factory=list)
    num_steps: np.ndarray | None = None  # (chains, draws) leapfrog steps per draw
    warmup_steps: np.ndarray | None = None  # (chains,) leapfrog steps of the warm-up

    def flat(self, names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
        """The draws of every chain stacked: (chains x draws, ...) per site."""
        keep = names or tuple(self.samples)
        return {k: v.reshape((-1, *v.shape[2:])) for k, v in self.samples.items() if k in keep}

    @property
    def divergences(self) -> int:
        return int(self.diverging.sum())

    def bfmi(self) -> np.ndarray:
        """Energy Bayesian fraction of missing information per chain."""
        e = self.energy
        return np.square(np.diff(e, axis=1)).mean(axis=1) / e.var(axis=1)


def padded_size(n_groups: int) -> int:
    """The group count rounded up to a multiple of 1/16 of the next power of
    two (at least 64): at most 1/16 padding work (a power of two padded the
    demo's 6,480 item groups to 8,192: 26% more gradient), and few distinct
    shapes for the compiled samplers and their cache."""
    step = max(64, (1 << max(n_groups - 1, 0).bit_length()) // 16)
    return max(64, -(-n_groups // step) * step)


def _padded(data: CountData, size: int | None = None) -> tuple[int, dict, np.ndarray, np.ndarray]:
    """The group arrays padded with zero-count groups to ``size`` (default:
    ``padded_size``): a zero count adds nothing to the likelihood, and equal
    shapes let one compiled sampler serve several dimensions."""
    size = size or padded_size(data.n_groups)
    pad = size - data.n_groups

    def grow(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a, np.zeros(pad, dtype=a.dtype)])

    codes = {k: grow(v) for k, v in data.codes.items()}
    codes["type_of_grader"] = data.type_of_grader
    codes["lone_type"] = lone_type_mask(data.type_of_grader, max(data.count("grader_type"), 1))
    codes["grader_centring"] = grader_centring(data)
    return size, codes, grow(data.y), grow(data.n)


def _shape_key(spec: ModelSpec, data: CountData) -> tuple:
    levels = tuple(sorted((k, len(v)) for k, v in data.levels.items()))
    variant = spec.variant(data).name if spec.variant else None
    return (spec.name, spec.kind, levels, data.pair_coding, tuple(sorted(data.codes)), variant)


def warmup_of(spec: ModelSpec, settings: FitSettings) -> int:
    """The warm-up a model runs: glm_warmup, or more for a model that adapts
    its mass matrix (``ModelSpec.adapt_warmup``)."""
    return max(settings.warmup, spec.adapt_warmup)


def target_accept_of(spec: ModelSpec, data: CountData, settings: FitSettings) -> float:
    """The target acceptance a model runs at: glm_target_accept, or the floor
    of the parameterisation the data chose (``models.Variant``)."""
    floor = spec.variant(data).min_target_accept if spec.variant else 0.0
    return max(settings.target_accept, floor)


def sampler_note(spec: ModelSpec, data: CountData, settings: FitSettings) -> str:
    """How the sampler ran, for glm_fits.notes (empty for the default way)."""
    parts = [spec.variant(data).note] if spec.variant else []
    if spec.adapt_warmup:
        parts.append(
            f"mass matrix adapted in numpyro's windows over "
            f"{warmup_of(spec, settings)} warm-up iterations, target acceptance "
            f"{target_accept_of(spec, data, settings)} (a model with group scales)"
        )
    return "; ".join(parts)


def _own_classes(samples: dict[str, np.ndarray], num_classes: int) -> dict[str, np.ndarray]:
    """A dimension's own cutpoints (and gaps) out of a batch sampled with the
    longest scale of the batch (``models.cutpoints``)."""
    out = dict(samples)
    if "cutpoints" in out:
        out["cutpoints"] = out["cutpoints"][..., : num_classes - 1]
    if "cutpoint_gaps" in out:
        if num_classes > 2:
            out["cutpoint_gaps"] = out["cutpoint_gaps"][..., : num_classes - 2]
        else:
            del out["cutpoint_gaps"]
    return out


_FLAT: dict[tuple, sampler.FlatModel] = {}


def run_batch(
    spec: ModelSpec, datas: list[CountData], priors: Priors, settings: FitSettings
) -> list[Fit]:
    """Sample the posterior of ``spec`` on each dimension's data: dimensions
    whose level counts match share one compiled program (see ``sampler``);
    the others get their own."""
    groups: dict[tuple, list[int]] = {}
    for i, data in enumerate(datas):
        groups.setdefault(_shape_key(spec, data), []).append(i)
    fits: list[Fit | None] = [None] * len(datas)
    for shape, members in groups.items():
        size = max(padded_size(datas[i].n_groups) for i in members)
        padded = [_padded(datas[i], size)[1:] for i in members]
        classes = max(datas[i].num_classes for i in members)
        if spec.kind == "ordinal":
            for i, (codes, _, _) in zip(members, padded, strict=True):
                codes["num_classes"] = np.int32(datas[i].num_classes)
        start = time.perf_counter()
        key = (shape, size, classes, priors)
        flat = _FLAT.get(key)
        if flat is None:
            widest = replace(datas[members[0]], num_classes=classes)
            flat = sampler.FlatModel(spec.numpyro_model(widest, priors), padded[0])
            if _FLAT:  # a new model: free the previous one's compiled programs
                _FLAT.clear()
                jax.clear_caches()
            _FLAT[key] = flat
        labels = [f"{spec.name} on {datas[i].dimension}" for i in members]
        progress(f"{', '.join(labels)}: the posterior mode ({datas[members[0]].n_groups} cells)")
        laplaces = [flat.laplace(args, spec.hold_at_start) for args in padded]
        stacked = jax.tree_util.tree_map(lambda *a: np.stack(a), *padded)
        draws = sampler.sample(
            flat,
            (key, settings, len(members)),
            stacked,
            laplaces,
            warmup=warmup_of(spec, settings),
            draws=settings.draws,
            chains=settings.chains,
            seed=settings.seed,
            target_accept=target_accept_of(spec, datas[members[0]], settings),
            max_tree_depth=settings.max_tree_depth,
            # a block mass matrix (no dense Laplace inverse) is always adapted
            adapt=spec.adapt_warmup > 0 or any(lp.inverse_mass is None for lp in laplaces),
            labels=labels,
        )
        seconds = (time.perf_counter() - start) / len(members)
        for j, i in enumerate(members):
            samples = _own_classes(flat.constrained(draws.z[j], padded[j]), datas[i].num_classes)
            fits[i] = Fit(
                spec=spec,
                data=datas[i],
                settings=settings,
                samples=samples,
                diverging=draws.diverging[j],
                energy=draws.energy[j],
                seconds=seconds,
                notes=[n for n in [sampler_note(spec, datas[i], settings), laplaces[j].note] if n],
                num_steps=draws.num_steps[j],
                warmup_steps=draws.warmup_steps[j],
            )
    return [f for f in fits if f is not None]


def run(spec: ModelSpec, data: CountData, priors: Priors, settings: FitSettings) -> Fit:
    """Sample the posterior of ``spec`` on one dimension's ``data``."""
    return run_batch(spec, [data], priors, settings)[0]


def _scalars(posterior: dict[str, np.ndarray]) -> tuple[np.ndarray, list[str]]:
    """Every scalar of every (chains, draws, ...) array side by side, (chains,
    draws, k), and ArviZ's name of each (``x``, ``x[0]``, ``x[0, 1]``)."""
    arrays, labels = [], []
    for name, value in posterior.items():
        value = np.asarray(value)
        arrays.append(value.reshape(value.shape[0], value.shape[1], -1))
        shape = value.shape[2:]
        labels += [f"{name}[{', '.join(map(str, i))}]" if shape else name
                   for i in np.ndindex(*shape)]  # fmt: skip
    return np.concatenate(arrays, axis=-1), labels


def summary(fit: Fit, arrays: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """ArviZ's summary (mean, sd, HDI at ci_level, MCSE, ESS, r_hat) of the
    reported effects, or of ``arrays`` ((chains, draws, ...) each) when given,
    unrounded: ``mcmc_stats.summary``, ArviZ's numbers without its import."""
    posterior = (
        arrays
        if arrays is not None
        else {k: v for k, v in fit.samples.items() if k in fit.spec.effects}
    )
    draws, labels = _scalars(posterior)
    table = mcmc_stats.summary(draws, fit.settings.ci_level)
    table.index = labels
    return table


def chance_exceedances(
    ess_bulk: np.ndarray,
    ess_folded: np.ndarray,
    chains: int,
    draws: int,
    threshold: float = R_HAT_MAX,
) -> float:
    """How many parameters would pass ``threshold`` in ArviZ's R-hat by chance
    alone if every chain mixed (stationary chains). ArviZ's R-hat is the larger
    of two split R-hats: of the rank-normalised draws (their ESS is the bulk
    ESS) and of the rank-normalised folded draws |x - median| (their ESS is
    ArviZ's ``method="folded"``). For each, with m = 2 x chains halves of n =
    draws / 2 draws and n_e = ESS / m effective draws per half, the variance of
    the halves' means over the within-half variance is chi2(m - 1) / ((m - 1)
    n_e), so R-hat^2 = (n - 1) / n + chi2(m - 1) / ((m - 1) n_e) (Gelman et
    al., BDA3 section 11.4). The figure is the sum of both probabilities over
    the parameters (at most 2 x their product above the exact union). 1.01
    is a per-parameter rule (Vehtari et al. 2021): with 2 chains and ESS 667 a
    parameter passes it once in 90, so a fit of 1,300 such is almost always
    over it (tested against simulated AR(1) chains)."""
    m, n = 2 * chains, draws // 2
    ess = np.concatenate([np.ravel(ess_bulk), np.ravel(ess_folded)]).astype(float)
    q = (m - 1) * (ess[np.isfinite(ess)] / m) * (threshold**2 - (n - 1) / n)
    return float(np.sum(stats.chi2.sf(np.clip(q, 0, None), m - 1)))


def folded_ess(fit: Fit) -> np.ndarray:
    """ArviZ's folded ESS of every reported effect's scalars."""
    draws, _ = _scalars({k: v for k, v in fit.samples.items() if k in fit.spec.effects})
    return np.array([mcmc_stats.ess_folded(draws[:, :, j]) for j in range(draws.shape[2])])


def shown_beyond(value: float, limit: float, digits: int, above: bool = True) -> str:
    """``value`` with ``digits`` decimals, or more until the text reads beyond ``limit``
    (above it, or below it when ``above`` is false): an R-hat of 1.0103 over 1.01
    showed as "1.010 (> 1.01", an ESS of 399.6 under 400 as "400 (< 400" (new-user
    pass, session 20); at most 8 decimals."""
    text = f"{value:.{digits}f}"
    for d in range(digits, 9):
        text = f"{value:.{d}f}"
        if (float(text) > limit) if above else (float(text) < limit):
            break
    return text


def diagnostics(fit: Fit, table) -> dict[str, object]:
    """Fit-level diagnostics and the status they give: ok, or warning with why."""
    r_hat_max = float(np.nanmax(table["r_hat"])) if len(table) else float("nan")
    ess_bulk_min = float(np.nanmin(table["ess_bulk"])) if len(table) else float("nan")
    ess_tail_min = float(np.nanmin(table["ess_tail"])) if len(table) else float("nan")
    bfmi_min = float(np.min(fit.bfmi()))
    problems = []
    if fit.divergences:
        problems.append(f"{fit.divergences} divergent transitions")
    if r_hat_max > R_HAT_MAX:
        over = int(np.sum(table["r_hat"] > R_HAT_MAX))
        chance = chance_exceedances(
            table["ess_bulk"].to_numpy(), folded_ess(fit), fit.settings.chains, fit.settings.draws
        )
        problems.append(
            f"r_hat up to {shown_beyond(r_hat_max, R_HAT_MAX, 3)} (> {R_HAT_MAX} on {over} "
            f"of {len(table)} parameters; {chance:.1f} expected by chance at their ESS if "
            "every chain mixed)"
        )
    ess_floor = ESS_MIN_PER_CHAIN * fit.settings.chains
    if min(ess_bulk_min, ess_tail_min) < ess_floor:
        ess_min = min(ess_bulk_min, ess_tail_min)
        problems.append(f"ESS down to {shown_beyond(ess_min, ess_floor, 0, False)} (< {ess_floor})")
    if bfmi_min < BFMI_MIN:
        problems.append(f"BFMI {shown_beyond(bfmi_min, BFMI_MIN, 2, False)} (< {BFMI_MIN})")
    return {
        "divergences": fit.divergences,
        "bfmi_min": bfmi_min,
        "r_hat_max": r_hat_max,
        "ess_bulk_min": ess_bulk_min,
        "ess_tail_min": ess_tail_min,
        "status": "warning" if problems else "ok",
        "diagnostic_notes": "; ".join(problems),
    }
