"""What a registered GLM is (``ModelSpec``), the registry and the building
blocks the models in ``models.py`` are made of: effect-coded and sum-to-zero
effects, HiBayes' cutpoints, the intercept.

Each model is a ``ModelSpec``: ``params`` samples the parameters (numpyro sample
sites, with the interpretable effects as deterministic sites), ``predictor``
maps parameters to the linear predictor of every group (it broadcasts over a
leading draw axis, so the same code serves the sampler and the posterior
predictive), ``grader_terms`` are zeroed for the counterfactual agreement,
and ``unsupported`` says why the data cannot carry the model (or None).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from judge_bias.glm.data import CountData
from judge_bias.glm.lazy import module
from judge_bias.glm.likelihood import binary_log_probs, ordinal_log_probs
from judge_bias.glm.priors import Priors

if TYPE_CHECKING:
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
else:
    jnp = module("jax.numpy")
    numpyro = module("numpyro")
    dist = module("numpyro.distributions")

Params = dict[str, "jnp.ndarray"]


@dataclass(frozen=True)
class Variant:
    """A data-chosen parameterisation: its name, the note glm_fits records and
    a floor on the target acceptance (0: glm_target_accept as set)."""

    name: str
    note: str
    min_target_accept: float = 0.0


@dataclass(frozen=True)
class ModelSpec:
    name: str
    kind: str  # "ordinal" or "binary"
    description: str
    params: Callable[[CountData, Priors, dict], Params]
    predictor: Callable[[Params, dict], jnp.ndarray]
    grader_terms: tuple[str, ...]  # parameter names removed for the counterfactual
    unsupported: Callable[[CountData], str | None]
    effects: tuple[str, ...]  # deterministic sites reported in glm_effects
    # Models with group scales (HalfCauchy sds): their posterior is a funnel
    # that the fixed Laplace mass matrix at the mode fits badly (hierarchical
    # on the demo: 150-400 leapfrog steps per draw, dozens of divergences), so
    # numpyro's windowed mass adaptation runs, started from the Laplace matrix,
    # over at least this many warm-up iterations (0: the fixed Laplace matrix)
    adapt_warmup: int = 0
    # the sampler's parameterisation chosen from the data (None: one
    # parameterisation); part of the compiled shape
    variant: Callable[[CountData], Variant] | None = None
    # group scales held at 1 while the start is optimised (``FlatModel.laplace``):
    # the item model's joint mode is degenerate (a scale at 0 or infinity)
    hold_at_start: tuple[str, ...] = ()

    def numpyro_model(self, data: CountData, priors: Priors) -> Callable[..., None]:
        """The numpyro model of the groups, each likelihood term scaled by its count.

        The arrays (codes, y, n) are arguments, not constants, so one compiled
        sampler serves every dimension whose level counts and padded group
        count match (``fit.run`` keeps them); ``data`` only fixes the shapes.
        """

        def model(codes: dict, y: jnp.ndarray, n: jnp.ndarray) -> None:
            p = self.params(data, priors, codes)
            numpyro.factor("loglik", jnp.sum(n * self._log_lik(p, codes, y)))

        return model

    def _log_lik(self, p: Params, codes: dict, y: jnp.ndarray) -> jnp.ndarray:
        eta = self.predictor(p, codes)
        if self.kind == "binary":
            return binary_log_probs(eta, y)
        logp = ordinal_log_probs(eta, p["cutpoints"])
        return jnp.take_along_axis(logp, jnp.broadcast_to(y, eta.shape)[..., None], axis=-1)[..., 0]

    def group_log_lik(
        self, draws: Params, data: CountData, groups: slice = slice(None)
    ) -> jnp.ndarray:
        """Log-likelihood of one row of each group (of the ``groups`` slice)
        under each draw: (draws, groups)."""
        codes = {k: v[groups] for k, v in data.codes.items()}
        return self._log_lik(draws, codes, jnp.asarray(data.y[groups]))

    def group_log_lik_chunks(
        self, draws: Params, data: CountData, size: int
    ) -> Iterator[np.ndarray]:
        """``group_log_lik`` ``size`` groups at a time, in group order: the
        whole (draws x groups) matrix is never held."""
        on_device = {k: jnp.asarray(v) for k, v in draws.items()}
        for start in range(0, data.n_groups, size):
            yield np.asarray(self.group_log_lik(on_device, data, slice(start, start + size)))


MODELS: dict[str, ModelSpec] = {}


def register(fn: Callable[[], ModelSpec]) -> Callable[[], ModelSpec]:
    spec = fn()
    MODELS[spec.name] = spec
    return fn


# -- building blocks ----------------------------------------------------------


def normal_dist(loc: float, scale: float, n: int) -> dist.Distribution:
    return dist.Normal(loc, scale).expand([n])


def effect_coded(name: str, n: int, priors: Priors) -> jnp.ndarray:
    """n effects summing to zero: n - 1 free ~ Normal, the last minus their sum."""
    if n < 2:
        coefs = jnp.zeros(n)
    else:
        free = numpyro.sample(
            f"{name}_free", normal_dist(priors.effect_loc, priors.effect_scale, n - 1)
        )
        coefs = jnp.concatenate([free, -jnp.sum(free, keepdims=True)])
    return numpyro.deterministic(name, coefs)


def sum_to_zero_matrix(name: str, n1: int, n2: int, priors: Priors) -> jnp.ndarray:
    """An n1 x n2 interaction whose rows and columns sum to zero; the
    (n1 - 1)(n2 - 1) free cells ~ Normal (HiBayes' categorical interaction)."""
    if n1 < 2 or n2 < 2:
        return numpyro.deterministic(name, jnp.zeros((n1, n2)))
    free = numpyro.sample(
        f"{name}_free",
        normal_dist(priors.interaction_loc, priors.interaction_scale, (n1 - 1) * (n2 - 1)),
    ).reshape(n1 - 1, n2 - 1)
    top = jnp.concatenate([free, -free.sum(axis=1, keepdims=True)], axis=1)
    full = jnp.concatenate([top, -top.sum(axis=0, keepdims=True)], axis=0)
    return numpyro.deterministic(name, full)


def cutpoints(num_classes: int, priors: Priors, active=None, first=None) -> jnp.ndarray:
    """The ordered cutpoints. ``active`` (a data value: the dimension's own
    number of classes, <= num_classes) lets dimensions with shorter scales
    share one compiled sampler: cutpoints past the dimension's last one sit 30
    logits above it (class probabilities beyond the scale ~1e-13), so their
    gaps keep only their prior and are dropped after sampling (fit.run_batch)."""
    if first is None:
        first = numpyro.sample(
            "first_cutpoint", dist.Normal(priors.first_cutpoint_loc, priors.first_cutpoint_scale)
        )
    if num_classes <= 2:
        return numpyro.deterministic("cutpoints", jnp.reshape(first, (1,)))
    gaps = numpyro.sample(
        "cutpoint_gaps",
        dist.LogNormal(priors.cutpoint_gap_loc, priors.cutpoint_gap_scale).expand(
            [num_classes - 2]
        ),
    )
    steps = jnp.cumsum(gaps + priors.min_cutpoint_spacing)
    cuts = jnp.concatenate([first[None], first + steps])
    if active is not None:
        k = jnp.arange(num_classes - 1)
        last = cuts[active - 2]
        cuts = jnp.where(k < active - 1, cuts, last + 30.0 * (k - active + 2))
    return numpyro.deterministic("cutpoints", cuts)


def intercept(priors: Priors) -> jnp.ndarray:
    return numpyro.sample("intercept", dist.Normal(priors.intercept_loc, priors.intercept_scale))


def at_index(values: jnp.ndarray, index) -> jnp.ndarray:
    """values[..., index] for parameters with or without a leading draw axis."""
    return jnp.asarray(values)[..., index]


def scalar(value) -> jnp.ndarray:
    return jnp.asarray(value)[..., None]


def needs_data(data: CountData, **minimum: int) -> str | None:
    for factor, k in minimum.items():
        if data.count(factor) < k:
            return f"needs at least {k} {factor} levels, the data has {data.count(factor)}"
    return None


def group_scale(name: str, prior_scale: float, signed: bool) -> jnp.ndarray:
    """A group sd ~ HalfCauchy(prior_scale); ``signed``: sampled as s ~
    Cauchy(0, prior_scale) and returned as the signed s, the sd |s| recorded
    under ``name``. For non-centred effects s x Normal(0, 1): (s, raw) and
    (-s, -raw) have the same density and the same effects, so the posterior of
    the sd and the effects is that of the HalfCauchy form, but s has no
    boundary at 0. On the log scale numpyro gives a HalfCauchy, the curvature
    of the weakly informed non-centred sd grows with sd^2 (the demo's grader x
    item sd: from ~0 at its bottom to 45 prior-scaled units at its upper
    tail), which forced 31 leapfrog steps per draw; in s it is about constant
    (the sum of raw^2 x the data's information)."""
    if not signed:
        return numpyro.sample(name, dist.HalfCauchy(prior_scale))
    s = numpyro.sample(f"{name}_signed", dist.Cauchy(0.0, prior_scale))
    numpyro.deterministic(name, jnp.abs(s))
    return s


def scaled_effect(
    name: str, scale: jnp.ndarray, shape: tuple[int, ...], centred: bool
) -> jnp.ndarray:
    """Effects ~ Normal(0, scale) (``scale`` broadcast to ``shape``), sampled
    centred or as scale x Normal(0, 1) (non-centred; ``scale`` may be the
    signed one of ``group_scale``)."""
    scale = jnp.broadcast_to(scale, shape)
    if centred:
        return numpyro.sample(name, dist.Normal(jnp.zeros(shape), scale).to_event(len(shape)))
    raw = numpyro.sample(f"{name}_raw", dist.Normal(jnp.zeros(shape), 1.0).to_event(len(shape)))
    return numpyro.deterministic(name, scale * raw)


def zero_sum_scaled(name: str, scale: jnp.ndarray, n: int, centred: bool) -> jnp.ndarray:
    """n effects ~ Normal(0, scale) given that they sum to zero (numpyro's
    ZeroSumNormal: effect coding, as the paper codes items, with a
    hierarchical scale), sampled centred or as scale x ZeroSumNormal(1)."""
    if centred:
        return numpyro.sample(name, dist.ZeroSumNormal(scale, event_shape=(n,)))
    raw = numpyro.sample(f"{name}_raw", dist.ZeroSumNormal(1.0, event_shape=(n,)))
    return numpyro.deterministic(name, scale * raw)
