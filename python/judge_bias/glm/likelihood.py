"""Log-probabilities of the two likelihoods, written for count cells.

An ordered-logistic observation with linear predictor eta and cutpoints c has
P(y = k) = sigmoid(c_k - eta) - sigmoid(c_{k-1} - eta) (c_0 = -inf, c_K = +inf).
The difference is evaluated in log space, using
sigmoid(b) - sigmoid(a) = sigmoid(b) sigmoid(-a) (1 - exp(a - b)) for b > a,
so that probabilities far in a tail keep finite gradients in float32.
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


def binary_log_probs(eta: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """log P(y | logit eta) for y in {0, 1}."""
    return jnp.where(y == 1, log_sigmoid(eta), log_sigmoid(-eta))
