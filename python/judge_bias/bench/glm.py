"""``judge-bias bench --glm``: the count-based grader_model fit against a
raw-row numpyro fit (HiBayes' way: numpyro's OrderedLogistic on every row, its
own MCMC with a dense mass matrix) on the same simulated ratings, at growing
sizes: wall time, peak memory (each fit in its own process) and the largest
posterior-mean difference in combined MCSE units.

The raw-row fit is run up to ``raw_max`` ratings and for at most
``raw_seconds``; above either, it is skipped or stopped with a printed note
(its gradient touches every row: over 10 minutes per fit at 100k here).
Above ``RAW_FULL_MAX`` ratings it runs ``RAW_CAPPED_WARMUP`` +
``RAW_CAPPED_DRAWS`` per chain, as the printed note says.
"""

from __future__ import annotations

import multiprocessing as mp
import queue as queues
import resource
import time

import numpy as np
import pandas as pd

GRADERS = [f"judge-{i}" for i in range(6)] + [f"human-{i}" for i in range(3)]
MODELS = [f"judge-{i}" for i in range(6)]
CUTS = np.array([-2.0, -0.7, 0.6, 1.9])


def simulate_rows(n: int, seed: int = 1) -> pd.DataFrame:
    """n ratings on a 5-point scale: grader and model effects, a self bias."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, len(GRADERS), n)
    m = rng.integers(0, len(MODELS), n)
    ge, me = rng.normal(0, 0.5, len(GRADERS)), rng.normal(0, 0.5, len(MODELS))
    eta = ge[g] + me[m] + 0.5 * (g == m)
    latent = eta + rng.logistic(size=n)
    score = np.searchsorted(CUTS, latent) + 1
    graders = np.array(GRADERS)[g]
    return pd.DataFrame({
        "grader": graders,
        "grader_type": np.where(np.char.startswith(graders, "human"), "human", "llm"),
        "model": np.array(MODELS)[m],
        "score": score,
    })  # fmt: skip


def _count_fit(n: int, draws: int, warmup: int, queue) -> None:
    from judge_bias.glm import MODELS as REGISTRY
    from judge_bias.glm import FitSettings, Priors, ordinal_counts, ordinal_counts_from_rows, run
    from judge_bias.glm.sampler import compilation_cache

    compilation_cache()

    rows = simulate_rows(n)
    start = time.perf_counter()
    data = ordinal_counts(ordinal_counts_from_rows(rows), [1, 2, 3, 4, 5])
    fit = run(REGISTRY["grader_model"], data, Priors(), FitSettings(draws=draws, warmup=warmup))
    seconds = time.perf_counter() - start
    samples = {k: fit.samples[k] for k in ("grader_effects", "model_effects", "cutpoints")}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((seconds, peak, samples))


def _row_fit(n: int, draws: int, warmup: int, queue) -> None:
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    rows = simulate_rows(n)
    start = time.perf_counter()
    gi = jnp.asarray(pd.factorize(rows["grader"], sort=True)[0])
    mi = jnp.asarray(pd.factorize(rows["model"], sort=True)[0])
    y = jnp.asarray(rows["score"].to_numpy() - 1)
    ng, nm = len(GRADERS), len(MODELS)

    def zero_sum(name, k):
        free = numpyro.sample(name, dist.Normal(0, 1).expand([k - 1]))
        return jnp.append(free, -free.sum())

    def model():  # HiBayes' ordered_logistic_model with the grader x model interaction
        b0 = numpyro.sample("intercept", dist.Normal(0, 1))
        g = numpyro.deterministic("grader_effects", zero_sum("g", ng))
        m = numpyro.deterministic("model_effects", zero_sum("m", nm))
        free = numpyro.sample("gm", dist.Normal(0, 1).expand([(ng - 1) * (nm - 1)]))
        inner = free.reshape(ng - 1, nm - 1)
        top = jnp.hstack([inner, -inner.sum(1, keepdims=True)])
        gm = jnp.vstack([top, -top.sum(0, keepdims=True)])
        c1 = numpyro.sample("c1", dist.Normal(-4, 0.2))
        gaps = numpyro.sample("gaps", dist.LogNormal(-0.5, 0.3).expand([3]))
        cut = numpyro.deterministic(
            "cutpoints", jnp.concatenate([c1[None], c1 + jnp.cumsum(gaps + 0.3)])
        )
        numpyro.sample("y", dist.OrderedLogistic(b0 + g[gi] + m[mi] + gm[gi, mi], cut), obs=y)

    mcmc = MCMC(NUTS(model, dense_mass=True), num_warmup=warmup, num_samples=draws,
                num_chains=2, chain_method="vectorized", progress_bar=False)  # fmt: skip
    mcmc.run(jax.random.PRNGKey(3))
    seconds = time.perf_counter() - start
    out = mcmc.get_samples(group_by_chain=True)
    samples = {k: np.asarray(out[k]) for k in ("grader_effects", "model_effects", "cutpoints")}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((seconds, peak, samples))


def _in_child(target, *args, timeout: float | None = None):
    """``target(*args, queue)`` in a fresh process: its result, or None when
    it did not finish within ``timeout`` seconds (the process is killed)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    try:
        result = queue.get(timeout=timeout)
    except queues.Empty:
        proc.kill()
        proc.join()
        return None
    proc.join()
    return result


def _mcse_gap(a: dict, b: dict) -> float:
    import arviz as az

    worst = 0.0
    for name in a:
        sa = az.summary(az.convert_to_dataset({name: a[name]}), kind="diagnostics")
        sb = az.summary(az.convert_to_dataset({name: b[name]}), kind="diagnostics")
        ma = a[name].reshape(-1, *a[name].shape[2:]).mean(0).ravel()
        mb = b[name].reshape(-1, *b[name].shape[2:]).mean(0).ravel()
        tol = np.hypot(sa["mcse_mean"].to_numpy(), sb["mcse_mean"].to_numpy())
        ok = tol > 0
        worst = max(worst, float(np.max(np.abs(ma - mb)[ok] / tol[ok])))
    return worst


# above this many ratings the raw-row fit runs fewer draws (its gradient
# touches every row: at 100k, 200 warm-up + 1,000 draws did not finish in
# 900 s), so the rung finishes; the MCSE units of the comparison account for it
RAW_FULL_MAX = 10_000
RAW_CAPPED_DRAWS = 200
RAW_CAPPED_WARMUP = 150


def run_glm_bench(
    sizes: list[int] | None = None,
    raw_max: int = 100_000,
    draws: int = 1000,
    warmup: int = 200,
    raw_seconds: float = 900.0,
) -> int:
    sizes = sizes or [10_000, 100_000, 1_000_000]
    print("grader_model, 9 graders x 6 models, 1 dimension; count-based vs raw-row numpyro")
    print(f"{'ratings':>9} {'count s':>8} {'count MB':>9} {'raw s':>8} {'raw MB':>8} "
          f"{'time x':>7} {'mem x':>6} {'max |diff|/MCSE':>16}")  # fmt: skip
    for n in sizes:
        cs, cm, csamp = _in_child(_count_fit, n, draws, warmup)
        if n > raw_max:
            print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f}   raw-row skipped (over raw_max={raw_max:,})")
            continue
        raw_draws, raw_warmup = draws, warmup
        if n > RAW_FULL_MAX:
            raw_draws, raw_warmup = min(draws, RAW_CAPPED_DRAWS), min(warmup, RAW_CAPPED_WARMUP)
            print(f"{n:>9,}   raw-row capped at {raw_warmup} warm-up + {raw_draws} draws x 2 "
                  f"chains (count fit: {warmup} + {draws}); the MCSE units below use each "
                  "fit's own MCSE")  # fmt: skip
        raw = _in_child(_row_fit, n, raw_draws, raw_warmup, timeout=raw_seconds)
        if raw is None:
            print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f}   raw-row stopped at the {raw_seconds:.0f} s cap "
                  f"(> {raw_seconds / cs:.0f}x the count fit)")  # fmt: skip
            continue
        rs, rm, rsamp = raw
        gap = _mcse_gap(csamp, rsamp)
        print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f} {rs:>8.1f} {rm:>8.0f} "
              f"{rs / cs:>7.1f} {rm / cm:>6.2f} {gap:>16.2f}")  # fmt: skip
    return 0
