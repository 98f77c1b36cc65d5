"""HiBayes long CSVs (UK AISI, the autograder-GLM paper's package).

Two layouts, told apart by their header:

- ratings: ``score,grader,LLM[,item]``. Graders whose name starts with
  ``Human`` become annotators (human_annotations, annotator_id = the grader),
  the others judges (judge_ratings). HiBayes rows carry no prompt: the k-th
  rating a grader gives an LLM (on an item) gets prompt ``<item>#k`` (``r#k``
  without items), so the k-th ratings of every grader share a prompt, the
  pairing HiBayes' simulations produce; the dimension is the file's stem
  (files of one import sharing a stem, such as the repository's
  ``q1/data/data.csv`` and ``q3/data/data.csv``, are told apart by their
  path below the folder they share: ``q1/data/data``, ``q3/data/data``).
- pairwise: ``LLM_1,LLM_2,grader,first_is_chosen,length_diff[,llm_pair]``:
  pairwise_judgments with verdict first (1) or second (0); length_diff and
  llm_pair stay as extra columns (the pairwise GLM reads length_diff); the
  prompt is ``<LLM_1>|<LLM_2>#k`` per grader.

Every record is written, as given; a value the warehouse cannot read (a
non-integer score, a first_is_chosen that is not 0 or 1) is rejected by the
build with its reason, never dropped here. The scale is the integers from 0
(or the lowest score, if negative) to the highest score seen, at least 10 as
in HiBayes' 11-class examples.

``models.csv`` names every LLM and every judge (the non-human graders of the
ratings, every grader of the pairwise files) as given, the family from the
name's prefix (gpt -> GPT, claude -> Claude, ...; a name like ``LLM A`` or
``Autograder A`` is its own family), with ``--models FILE`` on top.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.importers._write import read_csv, write_models
from judge_bias.inputs.writer import write_rows as _write

RATING_COLUMNS = ("score", "grader", "LLM")
PAIRWISE_COLUMNS = ("LLM_1", "LLM_2", "grader", "first_is_chosen", "length_diff")
HUMAN_PREFIX = "human"
MIN_TOP_SCORE = 10


def _is_human(grader: str) -> bool:
    return grader.lower().startswith(HUMAN_PREFIX)


def dimension_names(paths: Sequence[Path]) -> dict[Path, str]:
    """Each rating file's dimension: its stem, or, when rating files of one import
    share a stem (the repository's ``examples/<example>/<question>/data/data.csv``),
    its path without the suffix below the folder those files have in common
    (``q1/data/data``), so that two questions never merge into one dimension; with
    the suffix when the paths are equal without it (``data.csv`` beside
    ``data.txt``), for those paths only (``a/data.csv``, ``a/data.txt`` beside
    ``b/data``)."""
    stems = Counter(p.stem for p in paths)
    names = {p: p.stem for p in paths}
    for stem in (s for s, n in stems.items() if n > 1):
        group = [p for p in paths if p.stem == stem]
        short, full = (_below_common([p.resolve() for p in group], s) for s in (False, True))
        taken = Counter(short)
        names.update(
            (p, a if taken[a] == 1 else b) for p, a, b in zip(group, short, full, strict=True)
        )
    return names


def _below_common(paths: list[Path], suffix: bool) -> list[str]:
    """Each path below the folder the paths have in common, with or without its suffix."""
    shared = [p if suffix else p.with_suffix("") for p in paths]
    root = Path(os.path.commonpath(shared))
    return [s.relative_to(root).as_posix() for s in shared]


def _columns(path: Path) -> list[str]:
    """A CSV file's header (empty when unreadable: read_csv then says why)."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            return [c.strip() for c in next(csv.reader(fh), [])]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def _once(paths: list[Path]) -> None:
    """Refuse a file given twice: its ratings would be counted twice."""
    twice = [p for p, n in Counter(p.resolve() for p in paths).items() if n > 1]
    if twice:
        raise InputError(f"hibayes: a file given twice (import it once): {twice[0]}")


def import_hibayes(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert HiBayes CSVs to the input contract in ``out_dir``; returns the
    rows written per file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ratings, humans, pairs = [], [], []
    names: list[str] = []  # every LLM and judge, in the order the files name them
    prompts: dict[str, str] = {}
    scales: dict[str, tuple[int, int]] = {}
    paths = [Path(f) for f in files]
    _once(paths)
    dimensions = dimension_names(
        [p for p in paths if all(c in _columns(p) for c in RATING_COLUMNS)]
    )
    for file in paths:
        header, rows = read_csv(file, "a HiBayes CSV")
        seen: defaultdict[tuple, int] = defaultdict(int)
        if all(c in header for c in RATING_COLUMNS):
            dimension, low, top = dimensions[file], 0, MIN_TOP_SCORE
            for r in rows:
                item = r.get("item", "") or "r"
                seen[(r["grader"], r["LLM"], item)] += 1
                prompt = f"{item}#{seen[(r['grader'], r['LLM'], item)]}"
                prompts.setdefault(prompt, item)
                names.append(r["LLM"])
                with contextlib.suppress(ValueError):
                    value = float(r["score"])
                    if math.isfinite(value) and value == int(value):
                        low, top = min(low, int(value)), max(top, int(value))
                if _is_human(r["grader"]):
                    humans.append([prompt, r["LLM"], dimension, r["grader"], r["score"]])
                else:
                    names.append(r["grader"])
                    ratings.append([r["grader"], prompt, r["LLM"], dimension, r["score"]])
            scales[dimension] = (low, top)
        elif all(c in header for c in PAIRWISE_COLUMNS):
            for r in rows:
                key = (r["grader"], r["LLM_1"], r["LLM_2"])
                seen[key] += 1
                prompt = f"{r['LLM_1']}|{r['LLM_2']}#{seen[key]}"
                prompts.setdefault(prompt, "pairwise")
                names += [r["LLM_1"], r["LLM_2"], r["grader"]]
                verdict = {"1": "first", "0": "second"}.get(
                    r["first_is_chosen"], r["first_is_chosen"]
                )
                pairs.append(
                    [
                        r["grader"],
                        prompt,
                        r["LLM_1"],
                        r["LLM_2"],
                        verdict,
                        r["length_diff"],
                        r.get("llm_pair", ""),
                    ]
                )
        else:
            raise InputError(
                f"{file}: not a HiBayes file; expected the columns {list(RATING_COLUMNS)} or "
                f"{list(PAIRWISE_COLUMNS)}, found {header}"
            )
    _write(
        out / "prompts.csv",
        ["prompt_id", "dataset", "task_type"],
        [[p, "hibayes", item] for p, item in prompts.items()],
    )
    _write(
        out / "judge_ratings.csv", ["judge", "prompt_id", "model", "dimension", "label"], ratings
    )
    _write(out / "human_annotations.csv", list(KINDS["human_annotations"].required), humans)
    written = {
        "prompts": len(prompts),
        "models": write_models(out, names, None, models),
        "judge_ratings": len(ratings),
        "human_annotations": len(humans),
    }
    if pairs:
        _write(
            out / "pairwise_judgments.csv",
            [*KINDS["pairwise_judgments"].required, "length_diff", "llm_pair"],
            pairs,
            extra=("length_diff", "llm_pair"),  # HiBayes' own columns, kept for the GLM
        )
        written["pairwise_judgments"] = len(pairs)
    scale_rows = [
        [d, str(s), str(s), "false"] for d, (lo, hi) in scales.items() for s in range(lo, hi + 1)
    ]
    _write(out / "rating_scales.csv", [*KINDS["rating_scales"].required, "is_na"], scale_rows)
    written["rating_scales"] = len(scale_rows)
    return written
