"""Posterior summaries with names: effects, self and family contrasts, pair
effects and intransitive triples.

Each reported parameter is flattened to scalars labelled by the levels behind
its indices; the contrasts are functions of the draws, summarised like
parameters (their MCSE and ESS come from their own draws).
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from itertools import combinations

import numpy as np
import pandas as pd

from judge_bias.glm.fit import Fit, summary

# which factor's levels label each axis of a parameter
AXES: dict[str, tuple[str, ...]] = {
    "grader_effects": ("grader",),
    "model_effects": ("model",),
    "grader_type_effects": ("grader_type",),
    "grader_type_means": ("grader_type",),
    "grader_type_sigmas": ("grader_type",),
    "grader_model_effects": ("grader", "model"),
    "item_effects": ("item",),
    "grader_item_effects": ("grader", "item"),
    "pair_effects": ("pair",),
    "grader_length_slopes": ("grader",),
    "cutpoints": ("cutpoint",),
}
TERM_TYPES = {
    "intercept": "intercept",
    "grader_effects": "grader",
    "model_effects": "model",
    "grader_type_effects": "grader_type",
    "grader_type_means": "grader_type_mean",
    "grader_type_sigmas": "grader_type_sd",
    "grader_model_effects": "grader_model",
    "item_sigma": "item_sd",
    "grader_item_sigma": "grader_item_sd",
    "item_effects": "item",
    "grader_item_effects": "grader_item",
    "cutpoints": "cutpoint",
    "pair_effects": "pair",
    "length_slope_mean": "length_slope_mean",
    "length_slope_sigma": "length_slope_sd",
    "grader_length_slopes": "length_slope",
}
# the rated model's column is rated_model: "model" names the GLM in the marts
COLUMN = {"model": "rated_model"}
STAT_COLUMNS = ["mean", "sd", "hdi_low", "hdi_high", "mcse", "ess_bulk", "ess_tail", "r_hat"]


@contextmanager
def warnings_to_notes(notes: list[str]) -> Iterator[None]:
    """Keep the warnings raised inside out of the build log: append one note per
    distinct message, with its count, to ``notes`` (for glm_fits.notes). ArviZ warns
    "invalid value encountered in scalar divide" for a scalar constant over the
    draws (a pinned level): its R-hat is 0/0, published as null. Only this thread's
    warnings: dbt runs two Python models at once in threads of one process, and
    Python's warning hooks are process-wide (a statsmodels ConvergenceWarning of
    another model once landed in glm_fits.notes, in one build of two); another
    thread's warning goes on to the hook it would have reached."""
    own = threading.get_ident()
    caught: list[str] = []
    active = [True]
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        previous = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            # after the block (another thread's catch_warnings may restore this hook
            # when it leaves after us), every warning goes on as before
            if active[0] and threading.get_ident() == own:
                caught.append(f"{category.__name__} '{message}'")
            else:
                previous(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        try:
            yield
        finally:
            active[0] = False
    counts = Counter(caught)
    notes.extend(
        f"{n} x {text} while summarising the posterior (null r_hat/ess where a "
        "scalar is constant over the draws)"
        if "invalid value" in text
        else f"{n} x {text} while summarising the posterior"
        for text, n in counts.items()
    )


def _labels(fit: Fit, name: str, shape: tuple[int, ...]) -> list[dict[str, str]]:
    levels = dict(fit.data.levels)
    scores = fit.data.class_scores
    levels["cutpoint"] = [f"{scores[k]:g}|{scores[k + 1]:g}" for k in range(len(scores) - 1)]
    axes = AXES.get(name, ())
    out = []
    for index in np.ndindex(*shape):
        label = {
            COLUMN.get(axis, axis): levels[axis][i] for axis, i in zip(axes, index, strict=True)
        }
        out.append(label)
    return out


def constant_notes(stacked: np.ndarray, labels: list[dict]) -> list[str | None]:
    """Per scalar of ``stacked`` ((chains, draws, k), labelled by ``labels``), why its
    r_hat is null when it takes one value in every draw (ArviZ's R-hat is 0 / 0
    there): a factor with a single level, whose effects the sum-to-zero coding fixes
    at 0 (a single grader's effect: spec.effect_coded; an interaction with one
    grader or one model: spec.sum_to_zero_matrix), a cycle indicator never or
    always 1; else the value. None for a scalar that varies."""
    first = stacked[:1, :1, :]
    constant = np.all(stacked == first, axis=(0, 1))
    levels: dict[tuple[object, str], set[object]] = {}
    for label in labels:
        for axis in AXES.get(str(label.get("parameter")), ()):
            key = (label.get("parameter"), axis)
            levels.setdefault(key, set()).add(label.get(COLUMN.get(axis, axis)))
    notes: list[str | None] = []
    for k, label in enumerate(labels):
        if not constant[k]:
            notes.append(None)
            continue
        value = float(first[0, 0, k])
        parameter = label.get("parameter")
        axes = AXES.get(str(parameter), ())
        if parameter == "intransitive_triple":
            why = "a cycle in every draw" if value else "no cycle in any draw"
        elif value == 0.0 and (single := [a for a in axes if len(levels[parameter, a]) == 1]):
            level = label.get(COLUMN.get(single[0], single[0]))
            why = (
                f"a single {single[0]} ({level}): the sum-to-zero coding fixes its effect "
                "at 0, not sampled"
            )
        else:
            why = f"{value:g} in every draw"
        notes.append(f"constant over the draws ({why}): r_hat null (0 / 0)")
    return notes


def summarise(fit: Fit, draws: dict[str, np.ndarray], labels: list[dict]) -> pd.DataFrame:
    """One row per scalar: ``draws`` maps a parameter name to (chains, draws, k)
    arrays whose k scalars ``labels`` describe (in order, over all parameters);
    ``notes`` says why r_hat is null on a scalar constant over the draws
    (constant_notes)."""
    stacked = np.concatenate(
        [v.reshape(v.shape[0], v.shape[1], -1) for v in draws.values()], axis=-1
    )
    table = summary(fit, {"p": stacked})
    stats = pd.DataFrame(
        {
            "mean": table["mean"].to_numpy(),
            "sd": table["sd"].to_numpy(),
            "hdi_low": table.iloc[:, 2].to_numpy(),
            "hdi_high": table.iloc[:, 3].to_numpy(),
            "mcse": table["mcse_mean"].to_numpy(),
            "ess_bulk": table["ess_bulk"].to_numpy(),
            "ess_tail": table["ess_tail"].to_numpy(),
            "r_hat": table["r_hat"].to_numpy(),
            "prob_positive": (stacked > 0).mean(axis=(0, 1)),
            "notes": pd.Series(constant_notes(stacked, labels), dtype="string"),
        }
    )
    return pd.concat([pd.DataFrame(labels), stats], axis=1)


def effect_draws(fit: Fit) -> tuple[dict[str, np.ndarray], list[dict]]:
    """The reported parameters' draws and a label per scalar."""
    draws, labels = {}, []
    for name in fit.spec.effects:
        value = fit.samples[name]
        draws[name] = value
        for label in _labels(fit, name, value.shape[2:]):
            labels.append({"parameter": name, "term_type": TERM_TYPES[name], **label})
    return draws, labels


def _mean_over(matrix: np.ndarray, columns: list[int]) -> np.ndarray:
    return matrix[..., columns].mean(axis=-1)


def contrast_draws(
    fit: Fit, families: Mapping[str, str]
) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Self and family contrasts of every LLM judge from the grader x model
    interactions: self = own model minus the mean over the other models;
    family = mean over the same family's other models minus the mean over
    other families' models. A judge without its own model (or without a
    same-family / other-family model) has no such contrast."""
    if "grader_model_effects" not in fit.samples:
        return {}, []
    gm = fit.samples["grader_model_effects"]
    graders, models = fit.data.levels["grader"], fit.data.levels["model"]
    types = [fit.data.levels["grader_type"][t] for t in fit.data.type_of_grader]
    draws, labels = {}, []
    for g, (judge, kind) in enumerate(zip(graders, types, strict=True)):
        if kind == "human":
            continue
        row = gm[:, :, g, :]
        if judge in models:
            own = models.index(judge)
            others = [m for m in range(len(models)) if m != own]
            if others:
                draws[f"self {judge}"] = row[..., own] - _mean_over(row, others)
                labels.append(
                    {
                        "parameter": "self_contrast",
                        "term_type": "self",
                        "grader": judge,
                        "rated_model": judge,
                    }
                )
        family = families.get(judge)
        same = [
            m
            for m, name in enumerate(models)
            if name != judge and family is not None and families.get(name) == family
        ]
        other = [
            m
            for m, name in enumerate(models)
            if family is not None and families.get(name) not in (None, family)
        ]
        if family is not None and same and other:  # (no family: both lists are empty)
            draws[f"family {judge}"] = _mean_over(row, same) - _mean_over(row, other)
            labels.append(
                {
                    "parameter": "family_contrast",
                    "term_type": "family",
                    "grader": judge,
                    "family": family,
                }
            )
    return draws, labels


def pair_advantages(fit: Fit, first_sign: np.ndarray) -> np.ndarray:
    """Draws of A's advantage over B (log-odds) per pair "A vs B": the pair
    effect itself when pairs come in both orders; with one order per pair (sign
    s0 = +1 when A was first) the position intercept cannot be separated and
    the advantage is s0 x intercept + pair effect, as HiBayes reads it."""
    pair = fit.samples["pair_effects"]
    if fit.data.pair_coding == "free":
        return pair
    return first_sign * fit.samples["intercept"][..., None] + pair


def triple_draws(fit: Fit) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Per triple of models with all three pairs compared: the indicator of a
    cycle (A > B > C > A or the reverse) under each draw; its mean is the
    posterior probability that the pair effects are intransitive."""
    pairs = fit.data.levels["pair"]
    codes, sign = fit.data.codes["pair"], fit.data.codes["sign"]
    first_sign = np.array([sign[codes == p][0] for p in range(len(pairs))])
    adv = pair_advantages(fit, first_sign)
    index = {tuple(p.split(" vs ")): i for i, p in enumerate(pairs)}
    models = sorted({m for p in index for m in p})
    draws, labels = {}, []
    for a, b, c in combinations(models, 3):
        if not all(k in index for k in ((a, b), (b, c), (a, c))):
            continue
        ab, bc, ca = adv[..., index[(a, b)]], adv[..., index[(b, c)]], -adv[..., index[(a, c)]]
        cycle = ((ab > 0) & (bc > 0) & (ca > 0)) | ((ab < 0) & (bc < 0) & (ca < 0))
        draws[f"{a}>{b}>{c}"] = cycle.astype(float)
        labels.append(
            {
                "parameter": "intransitive_triple",
                "term_type": "intransitive_triple",
                "pair": f"{a} vs {b} vs {c}",
            }
        )
    return draws, labels
