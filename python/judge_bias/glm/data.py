"""Count data: the (design cell x outcome) groups a GLM is fitted on.

A group is one distinct combination of the predictors and the outcome with the
number of rows that share it. Every row of a group has the same likelihood
term, so the log-likelihood of the data is sum over groups of n x log p(y | cell):
exactly the row-level likelihood, computed once per group. The warehouse
aggregates the groups in SQL (models/intermediate/glm/); ``*_from_rows`` do
the same in pandas for tests and the benchmark.

Levels are coded in sorted order (as HiBayes' ``pd.factorize(sort=True)``), so
the last level of an effect-coded factor is the alphabetically last one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

ORDINAL_KEYS = ("grader", "grader_type", "model")
PAIRWISE_KEYS = ("grader", "grader_type", "model_first", "model_second")


@dataclass
class CountData:
    """One dimension's groups, coded for a model."""

    kind: str  # "ordinal" or "binary"
    dimension: str
    codes: dict[str, np.ndarray]  # per group: an integer code per factor, or x
    y: np.ndarray  # outcome per group: class index (ordinal) or 0/1 (binary)
    n: np.ndarray  # rows per group
    levels: dict[str, list[str]]  # the names behind each factor's codes
    type_of_grader: np.ndarray  # grader code -> grader_type code
    num_classes: int = 2
    class_scores: list[float] = field(default_factory=list)
    pair_coding: str = "effect"  # binary: "effect" (one order per pair) or "free"
    x_mean: float = float("nan")  # binary: the raw length difference's mean and sd
    x_sd: float = float("nan")
    notes: list[str] = field(default_factory=list)

    @property
    def n_obs(self) -> int:
        return int(self.n.sum())

    @property
    def n_groups(self) -> int:
        return len(self.n)

    def count(self, factor: str) -> int:
        return len(self.levels.get(factor, []))

    def array_bytes(self) -> int:
        return int(sum(a.nbytes for a in self.codes.values()) + self.y.nbytes + self.n.nbytes)


def in_key_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The count rows sorted by every column but the count: SQL gives them in no
    fixed order, and the sampler's sums follow the row order, so the same counts
    must come in the same order to give the same draws for a seed."""
    keys = [c for c in frame.columns if c != "n"]
    return frame.sort_values(keys, kind="stable", na_position="last").reset_index(drop=True)


def _code(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    codes, uniques = pd.factorize(values.astype(str), sort=True)
    return codes.astype(np.int32), [str(u) for u in uniques]


def _type_map(frame: pd.DataFrame, grader_codes: np.ndarray, n_graders: int) -> np.ndarray:
    type_codes, _ = _code(frame["grader_type"])
    mapping = np.zeros(n_graders, dtype=np.int32)
    mapping[grader_codes] = type_codes
    return mapping


def ordinal_counts(
    frame: pd.DataFrame, class_scores: list[float], dimension: str = "all"
) -> CountData:
    """Groups from a count table with columns grader, grader_type, model, score, n
    (and item for the item models); ``class_scores`` are the scale's points in order."""
    frame = in_key_order(frame)
    scores = [float(s) for s in class_scores]
    index = {s: k for k, s in enumerate(scores)}
    y = frame["score"].astype(float).map(index)
    if y.isna().any():
        bad = sorted(frame.loc[y.isna(), "score"].unique().tolist())[:5]
        raise ValueError(f"{dimension}: score(s) {bad} are not points of the scale {scores}")
    codes: dict[str, np.ndarray] = {}
    levels: dict[str, list[str]] = {}
    factors = [*ORDINAL_KEYS, *(["item"] if "item" in frame.columns else [])]
    for factor in factors:
        codes[factor], levels[factor] = _code(frame[factor])
    return CountData(
        kind="ordinal",
        dimension=dimension,
        codes=codes,
        y=y.to_numpy(np.int32),
        n=frame["n"].to_numpy(np.float64),
        levels=levels,
        type_of_grader=_type_map(frame, codes["grader"], len(levels["grader"])),
        num_classes=len(scores),
        class_scores=scores,
    )


def pairwise_counts(frame: pd.DataFrame, dimension: str = "all") -> CountData:
    """Groups from a count table with columns grader, grader_type, model_first,
    model_second, length_diff (nullable), first_chosen (0/1), n.

    A pair is the unordered pair of models, named "A vs B" (sorted); ``sign`` is
    +1 when A sat in the first slot. When some pair was shown in both orders the
    position intercept is identified and each pair effect is free (A's advantage
    over B); when every pair was shown in one order only, pair effects are
    effect-coded as in HiBayes and the intercept holds the mean first-slot pull.
    The length difference (first - second) is standardised over the rows, as
    HiBayes does (sample sd); rows without one cannot enter a model with length
    slopes and are counted in ``notes`` by the caller.
    """
    frame = in_key_order(frame)
    first = frame["model_first"].astype(str)
    second = frame["model_second"].astype(str)
    a = np.where(first <= second, first, second)
    b = np.where(first <= second, second, first)
    pair_names = pd.Series([f"{x} vs {y}" for x, y in zip(a, b, strict=True)], index=frame.index)
    sign = np.where(first.to_numpy() == a, 1.0, -1.0)
    codes: dict[str, np.ndarray] = {}
    levels: dict[str, list[str]] = {}
    codes["grader"], levels["grader"] = _code(frame["grader"])
    codes["pair"], levels["pair"] = _code(pair_names)
    codes["sign"] = sign
    n = frame["n"].to_numpy(np.float64)
    x = frame["length_diff"].astype(float).to_numpy()
    if np.isfinite(x).any():
        ok = np.isfinite(x)
        mean = float(np.sum(n[ok] * x[ok]) / n[ok].sum())
        var = float(np.sum(n[ok] * (x[ok] - mean) ** 2) / max(n[ok].sum() - 1.0, 1.0))
        sd = var**0.5 if var > 0 else 1.0
        codes["x"] = np.where(ok, (x - mean) / sd, 0.0)
    else:
        mean, sd = float("nan"), float("nan")
    both_orders = pd.DataFrame({"pair": codes["pair"], "sign": sign}).groupby("pair")["sign"]
    coding = "free" if (both_orders.nunique() > 1).any() else "effect"
    return CountData(
        kind="binary",
        dimension=dimension,
        codes=codes,
        y=frame["first_chosen"].to_numpy(np.int32),
        n=n,
        levels=levels,
        type_of_grader=_type_map(frame, codes["grader"], len(levels["grader"])),
        pair_coding=coding,
        x_mean=mean,
        x_sd=sd,
    )


def ordinal_counts_from_rows(
    rows: pd.DataFrame, keys: tuple[str, ...] = ORDINAL_KEYS
) -> pd.DataFrame:
    """The count table of row-level ratings (columns ``keys`` + score)."""
    return (
        rows.groupby([*keys, "score"], as_index=False, dropna=False)
        .size()
        .rename(columns={"size": "n"})
    )


def pairwise_counts_from_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The count table of row-level pairwise verdicts (first_chosen 0/1)."""
    keys = [*PAIRWISE_KEYS, "length_diff", "first_chosen"]
    return rows.groupby(keys, as_index=False, dropna=False).size().rename(columns={"size": "n"})
