"""``judge-bias bench --glm``: the count-based grader_model fit against a
raw-row numpyro fit (HiBayes' way: numpyro's OrderedLogistic on every row, its
own MCMC with a dense mass matrix) on the same simulated ratings, at growing
sizes: wall time, peak memory (each fit in its own process) and the largest
posterior-mean difference in combined MCSE units.

Both fits run in double precision (the count engine always does; the raw-row
child turns on ``jax_enable_x64`` too, so the comparison is like for like) and
draw the same number of draws per chain. The raw-row fit warms up for
``RAW_WARMUP`` iterations: numpyro's dense mass adaptation needs windows that
long (with 150 it learnt a poor matrix and NUTS ran to its maximum tree
depth, so the 100k rung hit the time cap; with 400, 14 leapfrog steps per
draw). It is run up to ``raw_max`` ratings and for at most ``raw_seconds``;
above either, it is skipped or stopped with a printed note.
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
    steps = float(np.mean(fit.num_steps)) if fit.num_steps is not None else float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((seconds, peak, samples, steps))


def _row_fit(n: int, draws: int, warmup: int, queue) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
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
    mcmc.run(jax.random.PRNGKey(3), extra_fields=("num_steps",))
    out = mcmc.get_samples(group_by_chain=True)
    # jax dispatches asynchronously: the clock stops once the draws exist
    # (before this, the raw-row time was taken when run() returned: 12.9 s
    # printed for a 100k fit that ran for minutes)
    samples = {k: np.asarray(out[k]) for k in ("grader_effects", "model_effects", "cutpoints")}
    seconds = time.perf_counter() - start
    steps = float(np.mean(mcmc.get_extra_fields()["num_steps"]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((seconds, peak, samples, steps))


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
        sa = az.summary(az.convert_to_dataset({name: a[name]}), kind="diagnostics", round_to="none")
        sb = az.summary(az.convert_to_dataset({name: b[name]}), kind="diagnostics", round_to="none")
        ma = a[name].reshape(-1, *a[name].shape[2:]).mean(0).ravel()
        mb = b[name].reshape(-1, *b[name].shape[2:]).mean(0).ravel()
        tol = np.hypot(sa["mcse_mean"].to_numpy(), sb["mcse_mean"].to_numpy())
        ok = tol > 0
        worst = max(worst, float(np.max(np.abs(ma - mb)[ok] / tol[ok])))
    return worst


# numpyro's windowed dense mass adaptation needs this many warm-up
# iterations: at 150 (the old cap above 10k ratings) the matrix was poor, NUTS
# ran to its maximum tree depth and 100k ratings did not finish in 900 s
RAW_WARMUP = 500


def run_glm_bench(
    sizes: list[int] | None = None,
    raw_max: int = 1_000_000,
    draws: int = 1000,
    warmup: int = 200,
    raw_seconds: float = 900.0,
) -> int:
    sizes = sizes or [10_000, 100_000, 1_000_000]
    raw_warmup = max(warmup, RAW_WARMUP)
    print("grader_model, 9 graders x 6 models, 1 dimension; count-based vs raw-row numpyro, "
          f"float64, {draws} draws x 2 chains each; warm-up {warmup} (count: Laplace mass) "
          f"and {raw_warmup} (raw-row: numpyro's dense adaptation)")  # fmt: skip
    print(f"{'ratings':>9} {'count s':>8} {'count MB':>9} {'steps':>6} {'raw s':>8} "
          f"{'raw MB':>8} {'steps':>6} {'time x':>7} {'mem x':>6} "
          f"{'max |diff|/MCSE':>16}")  # fmt: skip
    for n in sizes:
        cs, cm, csamp, csteps = _in_child(_count_fit, n, draws, warmup)
        if n > raw_max:
            print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f} {csteps:>6.1f}   raw-row skipped "
                  f"(over raw_max={raw_max:,})")  # fmt: skip
            continue
        raw = _in_child(_row_fit, n, draws, raw_warmup, timeout=raw_seconds)
        if raw is None:
            print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f} {csteps:>6.1f}   raw-row stopped at the "
                  f"{raw_seconds:.0f} s cap (> {raw_seconds / cs:.0f}x the count fit)")  # fmt: skip
            continue
        rs, rm, rsamp, rsteps = raw
        gap = _mcse_gap(csamp, rsamp)
        print(f"{n:>9,} {cs:>8.1f} {cm:>9.0f} {csteps:>6.1f} {rs:>8.1f} {rm:>8.0f} "
              f"{rsteps:>6.1f} {rs / cs:>7.1f} {rm / cm:>6.2f} {gap:>16.2f}")  # fmt: skip
    return 0
