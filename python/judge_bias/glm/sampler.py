"""NUTS for a batch of dimensions, started at the posterior mode with a
Laplace mass matrix (or a block one from the curvature), each chain one
compiled program run in a thread.

Why (measured on 1M ratings, grader_model, 3 dimensions; docs/glm-sampler.md):
numpyro's ``MCMC`` compiled a sampler per fit (about 11 s of CPU each) and
spent 300 warm-up iterations learning a dense mass matrix it still got wrong
(20-30 leapfrog steps per draw with target acceptance 0.95). Here:

1. The mode and the Hessian there (``laplace``): L-BFGS on the jitted
   potential, then ``jax.hessian``. For a model with at most
   ``DENSE_MASS_MAX`` unconstrained parameters the inverse Hessian is the
   (fixed) dense inverse mass matrix, so warm-up only tunes the step size
   and a draw takes ~7 leapfrog steps; above that, a block mass matrix
   (dense over the small sites, diagonal elsewhere) started from the
   curvature (``block_start``) is adapted in numpyro's windows.
2. Each chain is one ``jax.jit``-compiled loop of numpyro's own NUTS kernel
   (``numpyro.infer.hmc.hmc``), with the data and the mass matrix as
   arguments: one compilation per model and shape, cached for the process
   and on disk; the chains of every dimension run two threads at a time.
   (Side by side under ``jax.vmap``, as before, every chain waited for the
   longest trajectory of any, and tracing the vectorised NUTS took 5-6 s per
   model at every build.)

The target is numpyro's potential energy of the model (``potential_energy``:
prior, likelihood and the Jacobians of the constraining transforms); the
start and the mass matrix change only the sampler's efficiency, never the
posterior it targets, which the tests check against row-level numpyro fits.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions.transforms import biject_to
from numpyro.infer.hmc import hmc
from numpyro.infer.util import constrain_fn, potential_energy
from scipy.optimize import minimize

from judge_bias.glm.progress import Heartbeat

# Double precision for every GLM (set when the package is imported, before any
# array exists). In float32 the count likelihood of 10M ratings sums to about
# -9.3e6, where one unit in the last place is 1: the Hamiltonian's rounding
# noise then decides NUTS's acceptance and the chains never mix (measured:
# r_hat 3.3, ESS 2, Pareto k inf at 10M ratings; docs/glm-sampler.md).
jax.config.update("jax_enable_x64", True)
FLOAT = jnp.float64

DENSE_MASS_MAX = 200
# A model over DENSE_MASS_MAX adapts a block mass matrix: dense over its small
# sites (intercept, cutpoints, scales, main effects: each of at most
# DENSE_BLOCK_SITE_MAX coordinates, DENSE_MASS_MAX in all), diagonal over the
# rest (item and grader x item effects). The small sites are where the
# correlations are (the first cutpoint and the first gap: -0.94 on the demo's
# items fit, which a diagonal cannot follow); numpyro adapts the dense block
# from the warm-up draws (its structured mass matrix, ``dense_mass=[...]``).
DENSE_BLOCK_SITE_MAX = 50
# The block mass matrix's start (``FlatModel.block_start``): Hessian-vector
# products at most HVP_CHUNK at a time and about HVP_BYTES of (products x
# groups x 16 doubles) of intermediates (1,800 prompts' 97k groups: 2 at a
# time), CURVATURE_PROBES of them for the diagonal.
HVP_CHUNK = 32
HVP_BYTES = 32 * 2**20
CURVATURE_PROBES = 64
# chains sampled at once (``sample``): one per core, as jax runs one chain's
# small operations on one core; but only for fits of at most THREADED_MAX
# (groups x parameters): two chains at once raised the peak memory of the
# sampling by 0.58 GB on the demo's items fit (6,656 groups x 1,219
# parameters; one at a time: 0.16 GB) and by 1.1 GB on Play Favorites' (17,500
# x 2,232; one at a time: 0.12 GB), growing with the fit (the cause was not
# found: not two compilations, not malloc's arenas), so larger fits run one
# chain at a time (Play Favorites' items: 130 s instead of 98 s).
THREADS = max(1, min(os.cpu_count() or 1, 4))
THREADED_MAX = 10_000_000
# jax's persistent compilation cache: the compiled samplers are written here
# and read back by the next process with the same model shapes (docs/glm-sampler.md,
# "GLM speed"). JUDGE_BIAS_JAX_CACHE names another directory, or "off".
CACHE_ENV = "JUDGE_BIAS_JAX_CACHE"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "judge-bias" / "jax"


def compilation_cache(directory: str | os.PathLike | None = None) -> Path | None:
    """Turn on jax's persistent compilation cache in ``directory`` (default
    $JUDGE_BIAS_JAX_CACHE, else ~/.cache/judge-bias/jax); the directory in
    use, or None when it is off or cannot be written (then every process
    compiles for itself, as without a cache: a read-only home is safe)."""
    chosen = directory or os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR
    if str(chosen).lower() in ("off", "none", "0"):
        return None
    path = Path(chosen).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(path, os.W_OK | os.X_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    # every program, the small ones too: a build compiles about 1,100 small
    # programs (eager operations, the pointwise log-likelihood), 30 s uncached
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_raise_persistent_cache_errors", False)
    return path


def groups_of(args: tuple) -> int:
    """The largest array in a model's data: its count cells (times the batch's
    dimensions when the data are stacked)."""
    return max(int(np.size(leaf)) for leaf in jax.tree_util.tree_leaves(args))


def _pd_inverse(h: np.ndarray) -> np.ndarray:
    """The inverse of the symmetrised Hessian ``h``; LinAlgError unless it is
    positive definite (a mass matrix must be)."""
    h = (h + h.T) / 2
    eig = np.linalg.eigvalsh(h)
    if not np.all(np.isfinite(eig)) or eig.min() <= 0:
        raise np.linalg.LinAlgError("Hessian not positive definite at the mode")
    inverse = np.linalg.inv(h)
    return (inverse + inverse.T) / 2


@dataclass
class Laplace:
    mode: np.ndarray  # unconstrained, flat
    inverse_mass: np.ndarray | None  # (d, d) dense, or None (adapt a block mass matrix)
    note: str = ""
    # the block mass matrix's start, when inverse_mass is None: the inverse of
    # the Hessian's dense block (FlatModel.dense_block) and 1 / its diagonal
    # elsewhere, at the mode (None: the identity)
    block_inverse: np.ndarray | None = None
    diagonal_inverse: np.ndarray | None = None


@dataclass
class Draws:
    z: np.ndarray  # (batch, chains, draws, d) unconstrained, flat
    diverging: np.ndarray  # (batch, chains, draws)
    energy: np.ndarray
    num_steps: np.ndarray
    warmup_steps: np.ndarray  # (batch, chains) leapfrog steps of the whole warm-up


class FlatModel:
    """A numpyro model's potential as a function of one flat vector."""

    def __init__(self, model: Callable, example_args: tuple, seed: int = 0) -> None:
        # the unconstrained sites' shapes, from one abstract trace (numpyro's
        # initialize_model would compile a search for a valid start: seconds;
        # an eager trace compiled each of its ~40 operations: 0.9 CPU s a build)
        names: list[str] = []

        def unconstrained() -> tuple:
            trace = handlers.trace(handlers.seed(model, seed)).get_trace(*example_args)
            names[:] = [
                n for n, s in trace.items() if s["type"] == "sample" and not s["is_observed"]
            ]
            return tuple(biject_to(trace[n]["fn"].support).inv(trace[n]["value"]) for n in names)

        abstract = jax.eval_shape(unconstrained)  # in the trace's order (a dict's is sorted)
        shapes = {n: np.zeros(a.shape) for n, a in zip(names, abstract, strict=True)}
        self.unravel = ravel_pytree(shapes)[1]
        self.size = sum(int(v.size) for v in shapes.values())
        self.names = tuple(shapes)
        self._ravel = lambda tree: ravel_pytree(tree)[0]
        self._shapes = shapes
        self.start = np.zeros(self.size)  # the optimiser's start: 0 on the unconstrained scale
        self.model = model

        def potential(x, args):
            return potential_energy(self.model, args, {}, self.unravel(x))

        self.potential = potential
        self._value_and_grad = jax.jit(jax.value_and_grad(potential))
        self._hessian = jax.jit(jax.hessian(potential))
        grad = jax.grad(potential)

        def hvps(x, vectors, args):  # Hessian-vector products, one per row
            return jax.vmap(lambda v: jax.jvp(lambda y: grad(y, args), (x,), (v,))[1])(vectors)

        self._hvps = jax.jit(hvps)

        def one(x, args):
            return constrain_fn(self.model, args, {}, self.unravel(x), return_deterministic=True)

        self._constrain = jax.jit(jax.vmap(one, in_axes=(0, None)))

    def dense_block(self) -> np.ndarray:
        """The flat coordinates of the block mass matrix's dense part: the
        sites of at most DENSE_BLOCK_SITE_MAX coordinates, smallest first,
        DENSE_MASS_MAX in all."""
        sizes = {k: int(np.prod(v.shape)) for k, v in self._shapes.items()}
        chosen, total = [], 0
        for name in sorted(sizes, key=lambda k: (sizes[k], k)):
            if sizes[name] > DENSE_BLOCK_SITE_MAX or total + sizes[name] > DENSE_MASS_MAX:
                break
            chosen.append(name)
            total += sizes[name]
        return np.flatnonzero(self.held(tuple(chosen)))

    def held(self, names: tuple[str, ...]) -> np.ndarray:
        """A mask of the flat coordinates of the sites ``names``."""
        # numpy in ravel_pytree's order (the flattened tree's: keys sorted), no JAX op
        leaves = jax.tree_util.tree_leaves(
            {k: np.full(v.shape, k in names) for k, v in self._shapes.items()}
        )
        return np.concatenate([np.ravel(leaf) for leaf in leaves]) if leaves else np.zeros(0, bool)

    def laplace(self, args: tuple, hold: tuple[str, ...] = ()) -> Laplace:
        """The posterior mode (L-BFGS) and, for small models, the inverse
        Hessian there as the dense inverse mass matrix.

        ``hold``: sites kept at the start (0 unconstrained: a scale of 1) while
        the others are optimised, for a model whose joint mode is degenerate
        (centred effects with their group scale -> 0, or non-centred ones with
        it -> infinity, as in the item model: item_sigma went to 1e-6); the
        chains then start there and the windowed adaptation finds the typical
        set (no Laplace mass matrix is used)."""
        free = ~self.held(hold)

        def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
            full = self.start.copy()
            full[free] = x
            v, g = self._value_and_grad(jnp.asarray(full, dtype=FLOAT), args)
            return float(v), np.asarray(g, dtype=np.float64)[free]

        # numpy's floating-point warnings of the line search silenced for this thread
        # (np.errstate): scipy's L-BFGS-B warns of nothing else with these options (no
        # bounds, disp or iprint), and catch_warnings would swap the process's filters,
        # dropping the warnings of the Python model dbt runs beside this one (review20b)
        with np.errstate(all="ignore"):
            res = minimize(fun, self.start[free], jac=True, method="L-BFGS-B",
                           options={"maxiter": 2000})  # fmt: skip
        mode = self.start.copy()
        if np.all(np.isfinite(res.x)):
            mode[free] = res.x
        if hold or self.size > DENSE_MASS_MAX:
            lp = self.block_start(mode, args)
            if hold:
                held = [k for k in self._shapes if k in hold]
                lp.note = (f"chains started at the mode with {', '.join(held)} held at their "
                           f"start; {lp.note}")  # fmt: skip
            return lp
        h = np.asarray(self._hessian(jnp.asarray(mode, dtype=FLOAT), args), np.float64)
        try:
            return Laplace(mode, _pd_inverse(h))
        except np.linalg.LinAlgError as exc:
            # a unit mass matrix scaled to the curvature: still a valid sampler
            scale = 1.0 / np.clip(np.abs(np.diag(h)), 1e-6, None)
            return Laplace(mode, np.diag(scale), f"Laplace mass matrix not used ({exc})")

    def _products(self, x: np.ndarray, vectors: np.ndarray, args: tuple) -> np.ndarray:
        """H(x) v for each row v of ``vectors``, a fixed number of rows per call (one
        compiled shape)."""
        rows = int(np.clip(HVP_BYTES // (8 * 16 * groups_of(args)), 1, HVP_CHUNK))
        out = []
        for start in range(0, len(vectors), rows):
            chunk = vectors[start : start + rows]
            padded = np.zeros((rows, self.size))
            padded[: len(chunk)] = chunk
            hv = self._hvps(jnp.asarray(x, FLOAT), jnp.asarray(padded, FLOAT), args)
            out.append(np.asarray(hv, np.float64)[: len(chunk)])
        return np.concatenate(out) if out else np.zeros((0, self.size))

    def curvature_diagonal(self, x: np.ndarray, args: tuple, probes: int,
                           rng: np.random.Generator) -> np.ndarray:  # fmt: skip
        """Hutchinson's estimate of the Hessian's diagonal at ``x``: the mean
        of v * (H v) over ``probes`` random +-1 vectors v (unbiased; the error
        of entry i has sd sqrt(sum over j != i of H_ij^2 / probes))."""
        v = rng.choice([-1.0, 1.0], size=(probes, self.size))
        return np.mean(v * self._products(x, v, args), axis=0)

    def block_hessian(self, x: np.ndarray, args: tuple, block: np.ndarray) -> np.ndarray:
        """The Hessian at ``x`` restricted to the coordinates ``block``: one
        Hessian-vector product per coordinate."""
        h = self._products(x, np.eye(self.size)[block], args)[:, block]
        return (h + h.T) / 2

    def block_start(self, mode: np.ndarray, args: tuple, seed: int = 0) -> Laplace:
        """The start of the block mass matrix (``dense_block`` dense, the rest
        diagonal) from the curvature: 1 / the Hessian's diagonal (Hutchinson,
        CURVATURE_PROBES probes) at the mode, and the inverse of the dense
        block's exact Hessian at the mode moved by one draw of that diagonal
        Laplace approximation outside the block. At the mode itself
        non-centred effects are 0, where their group scale's curvature is its
        prior's alone (the demo's grader x item sd: 150 times too wide); a
        typical draw of the effects gives the curvature the sampler meets.
        Entries that are not positive, or a block that is not positive
        definite, fall back to the identity's (the diagonal's).

        Measured on the demo's items fit (one dimension, 1,219 parameters):
        warm-up took 74k leapfrog steps per chain from the identity, 13k from
        this start, as from the posterior's own variances (docs/glm-sampler.md)."""
        rng = np.random.default_rng(seed)
        block = self.dense_block()
        diag = self.curvature_diagonal(mode, args, CURVATURE_PROBES, rng)
        ok = np.isfinite(diag) & (diag > 0)
        diagonal_inverse = np.where(ok, 1.0 / np.where(ok, diag, 1.0), 1.0)
        note = (
            f"block mass matrix (dense over {block.size} coordinates of the small sites, "
            f"diagonal over {self.size - block.size}) started from the curvature"
        )
        if not block.size:
            return Laplace(mode, None, note, diagonal_inverse=diagonal_inverse)
        moved = mode + np.sqrt(diagonal_inverse) * rng.standard_normal(self.size)
        moved[block] = mode[block]
        try:
            block_inverse = _pd_inverse(self.block_hessian(moved, args, block))
        except np.linalg.LinAlgError:
            block_inverse = np.diag(diagonal_inverse[block])
        return Laplace(mode, None, note, block_inverse, diagonal_inverse)

    def constrained(self, z: np.ndarray, args: tuple) -> dict[str, np.ndarray]:
        """Every sample and deterministic site of flat unconstrained draws
        ``z`` (..., d): shapes (..., site shape)."""
        lead = z.shape[:-1]
        out = self._constrain(jnp.asarray(z.reshape(-1, z.shape[-1])), args)
        return {k: np.asarray(v).reshape(*lead, *np.shape(v)[1:]) for k, v in out.items()}


_COMPILED: dict[tuple, Any] = {}  # jax.jit-wrapped programs


def _program(flat: FlatModel, key: tuple, warmup: int, draws: int, dense: bool,
             target_accept: float, max_tree_depth: int, adapt: bool,
             block: np.ndarray | None = None) -> Any:  # fmt: skip
    """The compiled sampler of one model and shape, one chain: (start, key,
    args, inverse mass) -> draws. ``block``: the flat coordinates given a
    dense mass block (the rest diagonal), adapted."""
    key = (key, warmup, draws, dense, target_accept, max_tree_depth, adapt, block is not None)
    cached = _COMPILED.get(key)
    if cached is not None:
        return cached

    split: Callable | None = None
    join: Callable | None = None
    mass_kw: dict = {"dense_mass": dense}
    if block is not None:
        # the state is {"dense": x[block], "diagonal": x[rest]}: numpyro's
        # structured mass matrix is keyed by such sites
        rest = np.setdiff1d(np.arange(flat.size), block)
        order = np.argsort(np.concatenate([block, rest]))

        def split(x):
            return {"dense": x[block], "diagonal": x[rest]}

        def join(z):
            return jnp.concatenate([z["dense"], z["diagonal"]])[order]

        mass_kw = {"dense_mass": [("dense",)]}

    def target(args):
        if join is None:
            return lambda x: flat.potential(x, args)
        return lambda z: flat.potential(join(z), args)

    init_kernel, sample_kernel = hmc(potential_fn_gen=lambda *a: target(a), algo="NUTS")

    def chain(start, rng, args, inverse_mass):
        if split is not None:
            inverse_mass = {("dense",): inverse_mass["dense"],
                            ("diagonal",): inverse_mass["diagonal"]}  # fmt: skip
        state = init_kernel(
            start if split is None else split(start),
            num_warmup=warmup,
            inverse_mass_matrix=inverse_mass,
            adapt_mass_matrix=adapt or not dense,
            target_accept_prob=target_accept,
            max_tree_depth=max_tree_depth,
            model_args=args,
            rng_key=rng,
            **mass_kw,
        )
        buffer = jnp.zeros((draws, start.shape[0]), start.dtype)
        # one row per draw, and a last row summing the warm-up's leapfrog steps
        stats = jnp.zeros((draws + 1, 3), start.dtype)

        def body(i, carry):
            state, buffer, stats = carry
            state = sample_kernel(state, model_args=args)
            warm = i < warmup
            # warm-up writes buffer slot 0 (later overwritten) and the last stats row
            buffer = buffer.at[jnp.maximum(i - warmup, 0)].set(
                state.z if join is None else join(state.z)
            )
            steps = state.num_steps.astype(start.dtype)
            row = jnp.stack([state.diverging.astype(start.dtype), state.energy, steps])
            row = jnp.where(warm, stats[draws] + jnp.stack([0.0, 0.0, steps]), row)
            stats = stats.at[jnp.where(warm, draws, i - warmup)].set(row)
            return state, buffer, stats

        _, buffer, stats = jax.lax.fori_loop(0, warmup + draws, body, (state, buffer, stats))
        return buffer, stats

    program = jax.jit(chain)
    _COMPILED.clear()  # one compiled sampler at a time: the next model's
    _COMPILED[key] = program
    return program


def _block_masses(laplaces: list[Laplace], block: np.ndarray, d: int) -> dict[str, np.ndarray]:
    """The block mass matrices' starts, stacked over the batch: the dense
    block's inverse and the diagonal elsewhere (the identity's where the
    Laplace has none)."""
    rest = np.setdiff1d(np.arange(d), block)
    return {
        "dense": np.stack([lp.block_inverse if lp.block_inverse is not None
                           else np.eye(block.size) for lp in laplaces]),
        "diagonal": np.stack([lp.diagonal_inverse[rest] if lp.diagonal_inverse is not None
                              else np.ones(rest.size) for lp in laplaces]),
    }  # fmt: skip


def sample(flat: FlatModel, key: tuple, args: tuple, laplaces: list[Laplace], *,
           warmup: int, draws: int, chains: int, seed: int, target_accept: float,
           max_tree_depth: int, jitter: float = 0.1, adapt: bool = False,
           labels: list[str] | None = None) -> Draws:  # fmt: skip
    """NUTS on every dimension of the batch (``args`` stacked on axis 0, one
    Laplace per dimension); each chain starts at the mode plus a small jitter
    drawn from the Laplace approximation (or 0.1 on the unconstrained scale).
    ``adapt``: the mass matrix is adapted in numpyro's windows during warm-up,
    starting from the Laplace one (dense when it is), instead of kept fixed.
    A Laplace without a dense inverse mass (a large model, or one started with
    held sites) gets the block mass matrix (``FlatModel.dense_block``, dense
    there and diagonal elsewhere), from its curvature start; it must be
    adapted (``adapt``; a ValueError otherwise). ``labels`` (one per
    dimension, e.g. "items on Faithfulness") turn on progress lines on stderr:
    each chain's start and end (draws, seconds) and a line every
    PROGRESS_EVERY seconds while it runs.

    Each chain runs alone, THREADS at a time (one compiled program per model
    and shape). Side by side (``jax.vmap`` over dimension x chain, as before)
    every chain waited for the longest trajectory of any, and the vectorised
    NUTS took 5-6 s to trace per model at every build; alone, each chain takes
    its own steps and two threads use both cores (the demo's items fit, one
    dimension: 22 s vs 36 s for the same draws; the demo's GLMs in all: 140 s
    vs 171 s, docs/glm-sampler.md, "GLM speed")."""
    laplace_mass = all(lp.inverse_mass is not None for lp in laplaces)
    d = flat.size
    rng = np.random.default_rng(seed)
    starts: list[np.ndarray] = []
    for lp in laplaces:
        if laplace_mass and lp.inverse_mass is not None:  # half a Laplace sd from the mode
            chol = np.linalg.cholesky(lp.inverse_mass)
            noise = 0.5 * rng.standard_normal((chains, d)) @ chol.T
        else:
            noise = jitter * rng.standard_normal((chains, d))
        starts.append(lp.mode[None, :] + noise)
    # the keys, the mass matrices and the data are sliced per chain in numpy: an
    # eager slice of a JAX array compiles a program of its own
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(seed), len(laplaces) * chains))
    keys = keys.reshape(len(laplaces), chains, *keys.shape[1:])
    block: np.ndarray | None = None
    mass: object
    if laplace_mass:
        dense, mass = True, np.stack([np.asarray(lp.inverse_mass) for lp in laplaces])
    else:
        if not adapt:
            raise ValueError("a block mass matrix (no dense Laplace inverse mass) must adapt")
        block = flat.dense_block()
        masses = _block_masses(laplaces, block, d)
        dense = block.size == d  # every site small: one dense block
        if dense or not block.size:  # one dense block, or a diagonal alone
            mass, block = masses["dense" if dense else "diagonal"], None
        else:
            mass = masses
    program = _program(flat, (key, adapt), warmup, draws, dense, target_accept, max_tree_depth,
                       adapt, block)  # fmt: skip
    start_array = np.stack(starts)
    mass = jax.tree_util.tree_map(lambda m: np.asarray(m, np.float64), mass)

    def inputs(j: int, c: int) -> tuple:
        own_args = jax.tree_util.tree_map(lambda a: a[j], args)
        own_mass = jax.tree_util.tree_map(lambda m: jnp.asarray(m[j], FLOAT), mass)
        return jnp.asarray(start_array[j, c], FLOAT), keys[j, c], own_args, own_mass

    # compiled once before the threads start: two threads meeting an
    # uncompiled program each compile it (Play Favorites' items fit: 0.9 GB
    # more peak memory than one thread)
    compiled = program.lower(*inputs(0, 0)).compile()

    def one(job: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        out = compiled(*inputs(*job))
        return np.asarray(out[0]), np.asarray(out[1])  # waits for the chain

    jobs = [(j, c) for j in range(len(laplaces)) for c in range(chains)]
    threads = THREADS if groups_of(args) // len(laplaces) * d <= THREADED_MAX else 1
    names = [f"{labels[j]}, chain {c + 1}/{chains}" for j, c in jobs] if labels else []
    with ThreadPoolExecutor(min(threads, len(jobs))) as pool, Heartbeat(bool(labels)) as beat:
        what = f"{warmup} warm-up + {draws} draws"
        done = list(pool.map(
            lambda k: beat.run(names[k] if names else "", what, lambda: one(jobs[k])),
            range(len(jobs))))  # fmt: skip
    buffer = np.stack([b for b, _ in done]).reshape(len(laplaces), chains, draws, d)
    stats = np.stack([s for _, s in done]).reshape(len(laplaces), chains, draws + 1, 3)
    draw_stats = stats[..., :draws, :]
    return Draws(z=buffer, diverging=draw_stats[..., 0] > 0.5, energy=draw_stats[..., 1],
                 num_steps=draw_stats[..., 2], warmup_steps=stats[..., draws, 2])  # fmt: skip
