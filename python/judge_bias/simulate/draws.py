"""Random text, token counts, the logistic and rounding to a scale: shared by the generators."""

from __future__ import annotations

import re

import numpy as np

_WORDS: tuple[str, ...] = tuple(
    (
        "the model answer explains data result figure claim source summary article "
        "evidence report number quality method value reason example context detail "
        "point issue view because however therefore while although clearly likely "
        "often rarely mostly"
    ).split()
)


def random_text(rng: np.random.Generator, n_words: int) -> str:
    words = rng.choice(_WORDS, size=n_words)
    out, sentence = [], []
    for i, w in enumerate(words):
        sentence.append(str(w))
        if len(sentence) >= 12 or i == n_words - 1:
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    text = " ".join(out)
    # a few completions carry quotes, commas and line breaks, as real ones do
    if n_words % 7 == 0:
        text = f'He said "{words[0]}, {words[-1]}".\n' + text
    return text


def token_count(text: str) -> int:
    """Token count as the warehouse computes it (int_completions_checked)."""
    return len(re.findall(r"[^\W]+|[^\w\s]", text))


def inverse_logit(z: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float)))


def to_scale(latent: np.ndarray, k: int) -> np.ndarray:
    """Round a latent [0, 1] value to the nearest of k points, scores 1..k."""
    return np.clip(np.rint(latent * (k - 1)), 0, k - 1).astype(int) + 1
