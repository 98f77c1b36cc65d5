"""Log-probabilities of the two likelihoods, written for count cells.

An ordered-logistic observation with linear predictor eta and cutpoints c has
P(y = k) = sigmoid(c_k - eta) - sigmoid(c_{k-1} - eta) (c_0 = -inf, c_K = +inf).
The difference is evaluated in log space, using
sigmoid(b) - sigmoid(a) = sigmoid(b) sigmoid(-a) (1 - exp(a - b)) for b > a,
so that probabilities far in a tail keep finite gradients in float32.

The sampler needs only the observed class of each cell (``ordinal_log_prob``):
two log-sigmoids and one gap term per cell instead of all K classes' (the
transcendentals were two thirds of the item model's gradient on the demo).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.nn import log_sigmoid


def ordinal_log_probs(eta: jnp.ndarray, cutpoints: jnp.ndarray) -> jnp.ndarray:
    """log P(y = k | eta, cutpoints) for every class k, shape eta.shape + (K,)."""
    c = jnp.asarray(cutpoints)
    eta = jnp.asarray(eta)[..., None]
    if c.ndim > 1:  # a leading draw axis on the cutpoints: align it with eta's
        c = c.reshape(c.shape[:1] + (1,) * (eta.ndim - 2) + c.shape[-1:])
    below = log_sigmoid(c - eta)  # log P(y <= k)
    above = log_sigmoid(eta - c)  # log P(y > k)
    gaps = jnp.diff(c, axis=-1)
    interior = below[..., 1:] + above[..., :-1] + jnp.log(-jnp.expm1(-gaps))
    return jnp.concatenate([below[..., :1], interior, above[..., -1:]], axis=-1)


def ordinal_log_prob(eta: jnp.ndarray, cutpoints: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """log P(y | eta, cutpoints) of the observed class y (0-based) of every
    cell: the entry y of ``ordinal_log_probs``, computed alone. ``eta`` may
    carry a leading draw axis, matched by one on the cutpoints."""
    c = jnp.asarray(cutpoints)
    eta = jnp.asarray(eta)
    y = jnp.asarray(y)
    last_class = c.shape[-1]  # K - 1
    lo = jnp.clip(y - 1, 0, last_class - 1)  # the cutpoint below class y
    hi = jnp.clip(y, 0, last_class - 1)  # the cutpoint above it
    if c.ndim > 1:  # (draws, K - 1) against eta (draws, ..., cells)
        c = c.reshape(c.shape[:1] + (1,) * (eta.ndim - 2) + c.shape[-1:])
    c_lo = jnp.take(c, lo, axis=-1)
    c_hi = jnp.take(c, hi, axis=-1)
    first, last = y == 0, y == last_class
    edge = first | last
    below = jnp.where(last, 0.0, log_sigmoid(c_hi - eta))  # log P(y <= hi)
    above = jnp.where(first, 0.0, log_sigmoid(eta - c_lo))  # log P(y > lo)
    gap = jnp.where(edge, 1.0, c_hi - c_lo)  # 1.0: a safe value where unused
    return below + above + jnp.where(edge, 0.0, jnp.log(-jnp.expm1(-gap)))


def binary_log_probs(eta: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """log P(y | logit eta) for y in {0, 1}."""
    return jnp.where(y == 1, log_sigmoid(eta), log_sigmoid(-eta))
