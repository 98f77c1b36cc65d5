"""glm.sampler.FlatModel finds every model's unconstrained sites from an
abstract trace (jax.eval_shape: no operation compiled) and builds its masks in
numpy; checked against the eager way it replaced, as a reference: numpyro's
trace run on the data, ravel_pytree over JAX arrays. The sites' names in the
trace's order, the flat size, the unravelling of a vector, the masks of
``held`` and the dense block must all be the same, for every registered model
(both parameterisations where the data pick one)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions.transforms import biject_to

from judge_bias.glm import MODELS, Priors
from judge_bias.glm.data import (
    ordinal_counts,
    ordinal_counts_from_rows,
    pairwise_counts,
    pairwise_counts_from_rows,
)
from judge_bias.glm.fit import _padded
from judge_bias.glm.sampler import FlatModel


def ratings(per_cell: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    graders = {"human-1": "human", "human-2": "human", "judge-a": "llm", "judge-b": "llm"}
    rows = [
        {"grader": g, "grader_type": kind, "model": m, "item": f"p{i}",
         "score": int(rng.integers(1, 6))}
        for g, kind in graders.items() for m in ["judge-a", "judge-b", "m-c"]
        for i in range(4) for _ in range(per_cell)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def verdicts(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = ["m-a", "m-b", "m-c"]
    rows = [
        {"grader": g, "grader_type": "human" if g == "human" else "llm", "model_first": a,
         "model_second": b, "length_diff": float(rng.integers(-200, 200)),
         "first_chosen": int(rng.random() < 0.5)}
        for g in ["judge-x", "judge-y", "human"] for a in models for b in models if a != b
        for _ in range(20)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def cases():
    for name, spec in MODELS.items():
        if spec.kind == "binary":
            yield pytest.param(name, 0, id=name)
        else:  # few and many ratings per cell: centred and non-centred variants
            yield pytest.param(name, 1, id=f"{name}-sparse")
            yield pytest.param(name, 40, id=f"{name}-dense")


def model_and_args(name: str, per_cell: int):
    spec = MODELS[name]
    if spec.kind == "binary":
        data = pairwise_counts(pairwise_counts_from_rows(verdicts()))
    else:
        rows = ratings(per_cell)
        keys = ("grader", "grader_type", "model", "item") if name == "items" else None
        counts = ordinal_counts_from_rows(rows, keys) if keys else ordinal_counts_from_rows(rows)
        data = ordinal_counts(counts, [1, 2, 3, 4, 5])
    _, codes, y, n = _padded(data)
    if spec.kind == "ordinal":
        codes["num_classes"] = np.int32(data.num_classes)
    return spec, spec.numpyro_model(data, Priors()), (codes, y, n)


def eager_reference(model, args, seed: int = 0):
    trace = handlers.trace(handlers.seed(model, seed)).get_trace(*args)
    shapes = {
        name: jnp.zeros(jnp.shape(biject_to(site["fn"].support).inv(site["value"])))
        for name, site in trace.items()
        if site["type"] == "sample" and not site["is_observed"]
    }
    return shapes, *ravel_pytree(shapes)


@pytest.mark.parametrize(("name", "per_cell"), list(cases()))
def test_sites_and_masks_equal_the_eager_trace(name, per_cell):
    spec, model, args = model_and_args(name, per_cell)
    flat = FlatModel(model, args)
    shapes, reference, unravel = eager_reference(model, args)
    assert flat.names == tuple(shapes)
    assert flat.size == reference.size
    x = np.random.default_rng(3).normal(size=flat.size)
    ours, theirs = flat.unravel(jnp.asarray(x)), unravel(jnp.asarray(x))
    assert list(ours) == list(theirs)
    for site in shapes:
        np.testing.assert_array_equal(np.asarray(ours[site]), np.asarray(theirs[site]))
    for hold in [(site,) for site in shapes] + [tuple(spec.hold_at_start), tuple(shapes)]:
        tree = {k: jnp.full(v.shape, k in hold, jnp.float64) for k, v in shapes.items()}
        np.testing.assert_array_equal(flat.held(hold), np.asarray(ravel_pytree(tree)[0]) > 0.5)
    assert flat.dense_block().size <= flat.size
