"""Benchmark of the pairwise statistics on N simulated pairwise rows.

``simulate_pairwise_rows`` draws rows shaped like the accepted rows of
int_pairwise_checked, vectorised (no per-row Python): each unordered pair is
asked in both orders, with planted per-judge position bias, length slope and
self-preference on the logit of "first slot chosen". ``write_pairwise_data``
writes them as a data directory (pairwise_judgments.parquet plus the
completions with their lengths), ``time_pairwise`` times the functions.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from judge_bias.errors import InputError
from judge_bias.inputs.writer import write_rows
from judge_bias.pairwise.features import length_difference_feature
from judge_bias.pairwise.reference.rates import pairwise_bias, perplexity_bins

JUDGES = ("judge-a", "judge-b", "judge-c", "judge-d")
MODELS = (*JUDGES, "writer-x", "writer-y")


def _expit(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def simulate_pairwise_rows(
    n_rows: int = 1_000_000,
    seed: int = 5,
    judges: tuple[str, ...] = JUDGES,
    models: tuple[str, ...] = MODELS,
    position: dict[str, float] | None = None,
    length_slope: dict[str, float] | None = None,
    self_logit: dict[str, float] | None = None,
    tie_prob: float = 0.0,
    quality_weight: float = 1.0,
    n_prompts: int | None = None,
) -> pd.DataFrame:
    """``n_rows`` (rounded down to even) ordered judgments: n_rows / 2 pairs, each in
    both orders. Judge j picks the first slot with probability
    expit(position[j] + length_slope[j] * x + self_logit[j] * (own first - own
    second) + quality_weight * (quality first - quality second)), or says tie
    with probability tie_prob; x is the tanh length difference over the pair's
    mean length (pairwise_features.length_difference_feature). Humans pick by quality alone (logit =
    quality difference), p_first is the judge's probability of the first
    slot, perplexities are lower for the judge's own completion."""
    rng = np.random.default_rng(seed)
    position = position or {"judge-a": 1.0}
    length_slope = length_slope or {"judge-b": 1.5}
    self_logit = self_logit or {"judge-c": 1.0}
    n_pairs = n_rows // 2
    n_prompts = n_prompts or max(1, n_pairs // 10)
    n_models = len(models)
    lengths = rng.integers(20, 400, size=(n_prompts, n_models)).astype(float)
    quality = rng.normal(size=(n_prompts, n_models)) + np.linspace(0.3, -0.3, n_models)
    # distinct unordered pairs per judge and prompt (the input rejects duplicates):
    # draw more than needed, keep the first draw of each, top up if short
    max_pairs = n_prompts * len(judges) * n_models * (n_models - 1) // 2
    if n_pairs > max_pairs:
        raise InputError(f"{n_pairs} distinct pairs asked, at most {max_pairs} exist")
    prompt = judge = a = b = np.empty(0, dtype=np.int64)
    while len(prompt) < n_pairs:
        m = 2 * n_pairs
        prompt = np.concatenate([prompt, rng.integers(0, n_prompts, size=m)])
        judge = np.concatenate([judge, rng.integers(0, len(judges), size=m)])
        a_new = rng.integers(0, n_models, size=m)
        a = np.concatenate([a, a_new])
        b = np.concatenate([b, (a_new + rng.integers(1, n_models, size=m)) % n_models])
        code = ((prompt * len(judges) + judge) * n_models + np.minimum(a, b)) * n_models + (
            np.maximum(a, b)
        )
        keep = np.sort(np.unique(code, return_index=True)[1])
        prompt, judge, a, b = prompt[keep], judge[keep], a[keep], b[keep]
    prompt, judge, a, b = prompt[:n_pairs], judge[:n_pairs], a[:n_pairs], b[:n_pairs]
    # the feature's sd: lengths of the prompt's completions seen in any pair
    seen = np.zeros((n_prompts, n_models), dtype=bool)
    seen[prompt, a] = seen[prompt, b] = True
    # both orders: rows 0..n_pairs-1 are (a, b), the rest (b, a)
    first, second = np.concatenate([a, b]), np.concatenate([b, a])
    prompt2, judge2 = np.tile(prompt, 2), np.tile(judge, 2)
    model_names = np.asarray(models, dtype=object)
    judge_models = np.array([models.index(j) if j in models else -1 for j in judges])
    self_first = judge_models[judge2] == first
    self_second = judge_models[judge2] == second
    x = length_difference_feature(lengths[prompt2, first], lengths[prompt2, second])
    pos = np.array([position.get(j, 0.0) for j in judges])[judge2]
    slope = np.array([length_slope.get(j, 0.0) for j in judges])[judge2]
    selfb = np.array([self_logit.get(j, 0.0) for j in judges])[judge2]
    dq = quality[prompt2, first] - quality[prompt2, second]
    p_first = _expit(
        pos + slope * x + selfb * (self_first.astype(float) - self_second) + quality_weight * dq
    )
    u = rng.random(2 * n_pairs)
    verdict = np.where(u < p_first, "first", "second").astype(object)
    verdict[rng.random(2 * n_pairs) < tie_prob] = "tie"
    human = np.where(rng.random(n_pairs) < _expit(quality[prompt, a] - quality[prompt, b]), 0, 1)
    human = np.concatenate([human, 1 - human])  # 0: first slot of that row preferred
    log_ppl = rng.normal(2.0, 0.3, size=(n_prompts, n_models))
    ppl_first = np.exp(log_ppl[prompt2, first] - 0.3 * self_first)
    ppl_second = np.exp(log_ppl[prompt2, second] - 0.3 * self_second)
    judge_names = np.asarray(judges, dtype=object)[judge2]
    prompt_ids = np.char.add("p", prompt2.astype(str)).astype(object)
    lo, hi = np.minimum(first, second), np.maximum(first, second)
    pair_key = (
        judge2.astype(str).astype(object)
        + "|"
        + prompt2.astype(str).astype(object)
        + "|"
        + lo.astype(str).astype(object)
        + "|"
        + hi.astype(str).astype(object)
        + "|1"
    )
    return pd.DataFrame(
        {
            "judge": judge_names,
            "prompt_id": prompt_ids,
            "model_first": model_names[first],
            "model_second": model_names[second],
            "run_id": "1",
            "verdict": verdict,
            "p_first": p_first,
            "human_verdict": np.where(human == 0, "first", "second").astype(object),
            "perplexity_first": ppl_first,
            "perplexity_second": ppl_second,
            "length_first": lengths[prompt2, first],
            "length_second": lengths[prompt2, second],
            "is_self_first": self_first,
            "is_self_second": self_second,
            "pair_key": pair_key,
            "has_swapped": True,
            "x_true": x,
        }
    )


def write_pairwise_data(out: str | Path, n_rows: int = 1_000_000, seed: int = 5) -> Path:
    """A data directory with pairwise_judgments.parquet (the contract's columns) and
    completions.csv (lengths); returns it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = simulate_pairwise_rows(n_rows, seed)
    contract = [
        "judge",
        "prompt_id",
        "model_first",
        "model_second",
        "verdict",
        "p_first",
        "human_verdict",
        "run_id",
        "perplexity_first",
        "perplexity_second",
    ]
    rows[contract].to_parquet(out / "pairwise_judgments.parquet", index=False)
    completions = pd.concat(
        [
            rows[["prompt_id", "model_first", "length_first"]].set_axis(
                ["prompt_id", "model", "length_tokens"], axis=1
            ),
            rows[["prompt_id", "model_second", "length_second"]].set_axis(
                ["prompt_id", "model", "length_tokens"], axis=1
            ),
        ]
    ).drop_duplicates(["prompt_id", "model"])
    completions["length_tokens"] = completions["length_tokens"].astype(int)
    write_rows(
        out / "completions.csv", list(completions.columns), completions.itertuples(index=False)
    )
    # every judge and model is declared (its own family), so no row is an unknown model
    names = sorted(set(rows["judge"]) | set(rows["model_first"]) | set(rows["model_second"]))
    write_rows(
        out / "models.csv", ["alias", "model", "family"], zip(names, names, names, strict=True)
    )
    return out


def time_pairwise(n_rows: int = 1_000_000, seed: int = 5) -> dict[str, float]:
    """Seconds taken by pairwise_bias and perplexity_bins on n_rows simulated rows."""
    rows = simulate_pairwise_rows(n_rows, seed).drop(columns="x_true")
    t0 = time.perf_counter()
    bias = pairwise_bias(rows)
    t1 = time.perf_counter()
    bins = perplexity_bins(rows)
    t2 = time.perf_counter()
    return {
        "rows": float(len(rows)),
        "pairwise_bias_s": t1 - t0,
        "perplexity_bins_s": t2 - t1,
        "mart_rows": float(len(bias) + len(bins)),
    }


if __name__ == "__main__":  # pragma: no cover
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    result = time_pairwise(n)
    print(
        f"{int(result['rows']):,} pairwise rows: pairwise_bias {result['pairwise_bias_s']:.1f} s, "
        f"perplexity_bins {result['perplexity_bins_s']:.1f} s"
    )
