"""How far ``hierarchical`` centres each grader's effect (a partially
non-centred parameterisation, Papaspiliopoulos, Roberts and Skold 2007).

With grader effects g ~ Normal(m, s) (eq. 3) the sampler draws
p ~ Normal(w m, s^w) and sets g = m + s^(1 - w) (p - w m): g has the same
Normal(m, s) law for every w in [0, 1], so the posterior is unchanged (the
change of variables adds (1 - w) log s to the density); w = 1 is the centred
form, w = 0 the non-centred one. For a normal effect measured with standard
error e the right weight is the shrinkage factor s^2 / (s^2 + e^2): centred
when the data pin the effect far tighter than the group spreads (the demo:
spread about 0.5, e about 0.05), half way when they are alike.

That second case is where the centred form broke: judges with one leniency
(1M bench ratings, 83k per judge, e about 0.005) put the LLM type's sd at
0.004, at the scale of e, and centred NUTS diverged 66 and 137 times of
2,000 on its two dimensions; fully non-centred, 68 and 94 at 184 leapfrog
steps per draw (docs/glm-sampler.md, "GLM speed").

Both s and e are estimated from the counts before sampling: each grader's
shift against the pooled cutpoints of its dimension by maximum likelihood
(Fisher scoring; against pooled cutpoints the shifts come out attenuated,
about 15% at a spread of 0.8, which only moves w towards non-centred), e
from its Fisher information, and per type the
method-of-moments between-grader variance (DerSimonian and Laird), floored
at that estimate's own standard error when there is no spread (mean e^2 x
sqrt(2 / (G - 1)) for G graders): on the 1M bench w = 0.39 gave 1 and 1
divergences, w = 0.3 none, 0.5 6 and 5, 0.7 5 and 11. Only the sampler's
geometry depends on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from judge_bias.glm.data import CountData
from judge_bias.glm.lazy import module

if TYPE_CHECKING:
    import scipy.special as special
else:
    special = module("scipy.special")


def grader_shifts(d: CountData, iterations: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Per grader: the maximum-likelihood shift of its scores on the latent
    logistic scale against the dimension's pooled cutpoints, and its standard
    error (1 / sqrt(Fisher information); inf for a grader without ratings)."""
    g, k = d.count("grader"), max(d.num_classes, 2)
    counts = np.zeros((g, k))
    np.add.at(counts, (d.codes["grader"], d.y.astype(int)), d.n)
    pooled = counts.sum(axis=0)
    cum = np.clip(np.cumsum(pooled)[:-1] / max(pooled.sum(), 1.0), 1e-6, 1 - 1e-6)
    cuts = np.concatenate([[-np.inf], special.logit(cum), [np.inf]])
    shift = np.zeros(g)
    info = np.zeros(g)
    for _ in range(iterations):
        cdf = special.expit(cuts[None, :] - shift[:, None])  # (g, k + 1)
        dens = cdf * (1 - cdf)
        p = np.clip(np.diff(cdf, axis=1), 1e-300, None)
        dp = -np.diff(dens, axis=1)  # d p_k / d shift
        score = (counts * dp / p).sum(axis=1)
        info = counts.sum(axis=1) * (dp**2 / p).sum(axis=1)
        step = np.divide(score, info, out=np.zeros(g), where=info > 0)
        shift = np.clip(shift + step, -20.0, 20.0)
        if np.all(np.abs(step) < 1e-10):
            break
    se = np.divide(1.0, np.sqrt(info), out=np.full(g, np.inf), where=info > 0)
    return shift, se


def grader_centring(d: CountData) -> np.ndarray:
    """The weight w of each grader (1 for a grader alone in its type, whose
    type ``hierarchical`` factors another way)."""
    g = d.count("grader")
    if not g or "grader_type" not in d.levels or "grader" not in d.codes:
        return np.ones(g)
    shift, se = grader_shifts(d)
    types = d.type_of_grader
    weight = np.ones(g)
    for t in np.unique(types):
        if np.sum(types == t) < 2:
            continue
        weight[(types == t) & ~np.isfinite(se)] = 0.0  # no ratings: non-centred
        members = np.flatnonzero((types == t) & np.isfinite(se))
        if not len(members):
            continue
        noise = float(np.mean(se[members] ** 2))
        between = float(np.var(shift[members], ddof=1)) if len(members) > 1 else 0.0
        # floored at the moment estimate's own standard error under no spread
        spread = max(between - noise, noise * np.sqrt(2 / max(len(members) - 1, 1)))
        weight[members] = spread / (spread + se[members] ** 2)
    return weight
