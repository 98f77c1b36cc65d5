"""Log-probabilities of the two likelihoods, written for count cells.

An ordered-logistic observation with linear predictor eta and cutpoints c has
P(y = k) = sigmoid(c_k - eta) - sigmoid(c_{k-1} - eta) (c_0 = -inf, c_K = +inf).
The difference is evaluated in log space, using
sigmoid(b) - sigmoid(a) = sigmoid(b) sigmoid(-a) (1 - exp(a - b)) for b > a,
so that probabilities far in a tail keep finite gradients in float32.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge_bias.glm.lazy import module

if TYPE_CHECKING:
    import jax.nn as jax_nn
    import jax.numpy as jnp
else:
    jnp = module("jax.numpy")
    jax_nn = module("jax.nn")


def ordinal_log_probs(eta: jnp.ndarray, cutpoints: jnp.ndarray) -> jnp.ndarray:
    """log P(y = k | eta, cutpoints) for every class k, shape eta.shape + (K,)."""
    c = jnp.asarray(cutpoints)
    eta = jnp.asarray(eta)[..., None]
    if c.ndim > 1:  # a leading draw axis on the cutpoints: align it with eta's
        c = c.reshape(c.shape[:1] + (1,) * (eta.ndim - 2) + c.shape[-1:])
    below = jax_nn.log_sigmoid(c - eta)  # log P(y <= k)
    above = jax_nn.log_sigmoid(eta - c)  # log P(y > k)
    gaps = jnp.diff(c, axis=-1)
    interior = below[..., 1:] + above[..., :-1] + jnp.log(-jnp.expm1(-gaps))
    return jnp.concatenate([below[..., :1], interior, above[..., -1:]], axis=-1)


def binary_log_probs(eta: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """log P(y | logit eta) for y in {0, 1}."""
    return jnp.where(y == 1, jax_nn.log_sigmoid(eta), jax_nn.log_sigmoid(-eta))
