"""Inspect AI evaluation logs (.eval or .json), read with inspect_ai's log reader.

inspect_ai is an optional dependency: ``pip install 'judge-bias[inspect]'``.

Every score of every sample becomes one judge_ratings row:

- **model** = the evaluated model (``log.eval.model``), **judge** = the
  grader model: for a model-graded scorer (model_graded_qa, model_graded_fact
  and any scorer that keeps the grader's messages in its metadata under
  ``grading``), the ``model`` of the grader's last reply, else the log's
  ``grader`` model role; in logs whose scores keep no grading messages
  (inspect_ai 0.3.60 and others before), the model called inside the scorer's
  step or span of the sample's transcript when it called one (of several, none:
  counted on stderr), else the one model the scorer was
  given (``model_graded_qa(model=...)``: its ``params`` in the log's results;
  log version 1, 0.3.5, has no transcript). A scorer with no grader model (match, includes, ...)
  is its own judge, named ``scorer:<name>`` (family ``scorer``).
- **dimension** = the scorer's name (``<scorer>:<key>`` for each key of a
  dict-valued score); **label** = the score's value as given; run_id = the
  epoch; prompt_id = ``<task>-<sample id>``; dataset = the task name.
- **rating_scales**, per dimension: Inspect's letter grades C 1, P 0.5, I 0,
  N 0 (its ``value_to_float``) when a value is one of these letters; true 1 / false 0
  for booleans; otherwise the smallest and largest finite number seen (a
  number between them is on the scale). A value that fits none of these
  (NaN, which model_graded_qa gives when it finds no grade; a list; a number
  among letters) is written as given and rejected by the build; the
  importer says how many.
- **Names**: ``models.csv`` maps every provider-qualified name to the part
  after the provider (``openai/gpt-4o`` -> ``gpt-4o``), so a grader named
  ``gpt-4o`` in its reply and the evaluated model ``openai/gpt-4o`` are the
  same model (self-judgments); family from the name's prefix (override with
  ``--models``). A grader reply's model names the provider's snapshot
  (``gpt-4o-2024-08-06``) where the evaluation called ``openai/gpt-4o``: the judge
  is the name called when the model events (name called, reply's name) and the
  samples' outputs (the evaluated model's) of all the logs of one import tie the
  two one to one (so importing logs together can name other judges than one at a
  time); a name answered by two snapshots, or one snapshot answering two names,
  ties nothing (no fuzzy match: two dated snapshots are two models). Each log is
  read twice (once for the ties, once to convert it): one log at a time is held.
- A sample without scores (an error, a cancelled run) is counted and named,
  not written: there is no judgment to write; a run that did not end in success
  is said with its error's first line. ``prompts.csv`` and
  ``completions.csv`` carry the input and output texts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from judge_bias.errors import InputError
from judge_bias.inputs.importers._extras import require
from judge_bias.inputs.importers._write import default_family, report_unmapped, write_models
from judge_bias.inputs.writer import csv_text, write_contract_file
from judge_bias.stats.scalars import is_finite_number

LETTER_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
RATING_EXTRAS = ("task", "sample_id", "scorer", "answer", "explanation")


def _text(value: object) -> str:
    """A sample input or output as text (chat messages joined by their text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n\n".join(getattr(m, "text", "") or str(getattr(m, "content", m)) for m in value)
    return csv_text(value)


def grader_model(score: object, roles: dict) -> str | None:
    """The model that graded a score: its grader reply's model, else the grader role."""
    grading = (getattr(score, "metadata", None) or {}).get("grading")
    if not isinstance(grading, list):
        return None
    for message in reversed(grading):
        model = message.get("model") if isinstance(message, dict) else None
        if model:
            return str(model)
    role = roles.get("grader")
    return getattr(role, "model", None) if role is not None else None


def scorer_models(events: Sequence[object] | None) -> dict[str, list[str]]:
    """Scorer name -> the distinct models it called, in order, from a sample's transcript.

    Logs of inspect_ai before model_graded_qa kept its grading messages (0.3.60 is
    one) name the grader only there: a model event between a scorer's begin and end
    (``StepEvent`` begin/end of type scorer in those versions, ``SpanBeginEvent``/
    ``SpanEndEvent`` in later ones). A scorer that called several (model_graded_qa
    with a list of graders, a scorer calling a grader and then the evaluated model)
    names no one grader by its calls."""
    models: dict[str, list[str]] = {}
    open_spans: dict[str, str] = {}  # span id -> scorer name
    current: list[str] = []
    for event in events or []:
        kind, etype = getattr(event, "event", None), getattr(event, "type", None)
        if kind == "step" and etype == "scorer":
            if getattr(event, "action", None) == "begin":
                current.append(str(event.name))  # type: ignore[attr-defined]
            elif current:
                current.pop()
        elif kind == "span_begin" and etype == "scorer":
            open_spans[str(event.id)] = str(event.name)  # type: ignore[attr-defined]
            current.append(str(event.name))  # type: ignore[attr-defined]
        elif kind == "span_end" and open_spans.pop(str(getattr(event, "id", "")), None):
            current.pop()
        elif kind == "model" and current and getattr(event, "model", None):
            called = models.setdefault(current[-1], [])
            if str(event.model) not in called:  # type: ignore[attr-defined]
                called.append(str(event.model))  # type: ignore[attr-defined]
    return models


def reply_names(logs: Iterable[object]) -> dict[str, str]:
    """Reply model name -> the model name the logs called for it, where the logs of
    one import tie the two one to one (``gpt-4o-2024-08-06`` -> ``openai/gpt-4o``).
    The pairs are gathered over every log before the tie: a name one log answered
    with ``-2024-08-06`` and another with ``-2024-05-13`` ties nothing, rather than
    each log tying its snapshot and the import merging two models into one judge.

    A grader's reply names the model the provider answered with (OpenAI's dated
    snapshot), not the name the evaluation called. The log states the pair: each
    model event of a transcript has the name called (``model``) and the reply's
    (``output.model``), and the samples' outputs are the evaluated model's
    (``eval.model``) replies. A reply name is tied only when every call giving it was
    to one name and every call to that name gave only it: a name answered by two
    snapshots (``-2024-05-13`` and ``-08-06``), or a snapshot answering two names,
    ties nothing, and the reply's name stays the judge."""
    pairs: set[tuple[str, str]] = set()
    for log in logs:
        evaluated = getattr(getattr(log, "eval", None), "model", None)
        for sample in getattr(log, "samples", None) or []:
            said = getattr(getattr(sample, "output", None), "model", None)
            if evaluated and said:
                pairs.add((str(said), str(evaluated)))
            for event in getattr(sample, "events", None) or []:
                replied = getattr(getattr(event, "output", None), "model", None)
                name = getattr(event, "model", None)
                if getattr(event, "event", None) == "model" and name and replied:
                    pairs.add((str(replied), str(name)))
    called: dict[str, set[str]] = {}
    answered: dict[str, set[str]] = {}
    for reply, name in pairs:
        called.setdefault(reply, set()).add(name)
        answered.setdefault(name, set()).add(reply)
    return {
        reply: name
        for reply, (name,) in ((r, tuple(n)) for r, n in called.items() if len(n) == 1)
        if answered[name] == {reply} and reply != name
    }


def declared_graders(log: object) -> dict[str, str]:
    """Scorer name -> the one grader model its call declared (``model_graded_qa(model=
    "openai/gpt-4o")``), from the log's results (``params``, kept by every version):
    the last resort of logs with neither grading models nor a transcript (inspect_ai
    0.3.5's log version 1: replies without a model, no events)."""
    results = getattr(log, "results", None)
    return {
        str(s.name): s.params["model"]
        for s in (getattr(results, "scores", None) or [])
        if isinstance((s.params or {}).get("model"), str)
    }


def canonical(name: str) -> tuple[str, str]:
    """(model, family) of a provider-qualified name: the part after the provider."""
    if name.startswith("scorer:"):
        return name, "scorer"
    model = name.split("/", 1)[1] if "/" in name else name
    return model, default_family(model)


def _scale_rows(dimension: str, values: list[object]) -> list[dict[str, object]]:
    if any(isinstance(v, str) and v in LETTER_GRADES for v in values):
        return [{"dimension": dimension, "label": k, "score": s} for k, s in LETTER_GRADES.items()]
    if values and all(isinstance(v, bool) for v in values):
        return [
            {"dimension": dimension, "label": k, "score": s} for k, s in (("true", 1), ("false", 0))
        ]
    numbers = [v for v in values if is_finite_number(v)]
    ends = sorted({min(numbers), max(numbers)}) if numbers else []
    return [{"dimension": dimension, "label": n, "score": n} for n in ends]


def import_inspect(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert Inspect AI logs to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    read_eval_log = require("inspect_ai.log", "inspect", "judge-bias import inspect").read_eval_log

    ratings: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    values: dict[str, list[object]] = {}
    paths = list(map(Path, files))
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")

    def read(path: Path) -> Any:
        try:
            return read_eval_log(str(path))
        except Exception as exc:  # inspect_ai's reader names neither the file nor the format
            raise InputError(f"{path}: not an Inspect log (.eval or .json): {exc}") from exc

    # the names are tied over every log of the import, each log read twice (once for
    # the pairs, once to convert) so that one log at a time is held, not all of them
    tied = reply_names(read(path) for path in paths)
    for path in paths:
        log = read(path)
        task, model = log.eval.task, log.eval.model
        roles = log.eval.model_roles or {}
        declared = declared_graders(log)
        unscored = []
        # scorer -> (scores, the models its steps called, the judges credited): scores
        # whose step called several models (no one of them named the grader)
        several: dict[str, tuple[list[int], set[str], set[str]]] = {}
        for sample in log.samples or []:
            pid = f"{task}-{sample.id}"
            prompts.setdefault(
                pid, {"prompt_id": pid, "dataset": task, "prompt_text": _text(sample.input)}
            )
            completion = sample.output.completion if sample.output else None
            completions.setdefault(
                (pid, model), {"prompt_id": pid, "model": model, "completion_text": completion}
            )
            if not sample.scores:
                unscored.append(f"{sample.id} (epoch {sample.epoch})")
            called = scorer_models(sample.events) if sample.scores else {}
            for scorer, score in (sample.scores or {}).items():
                graders, replied = called.get(scorer) or [], grader_model(score, roles)
                replied = tied.get(replied, replied) if replied else replied
                judge = (
                    replied
                    or (graders[0] if len(graders) == 1 else None)
                    or declared.get(scorer)
                    or f"scorer:{scorer}"
                )
                if not replied and len(graders) > 1:
                    count, seen, credited = several.setdefault(scorer, ([0], set(), set()))
                    count[0] += 1
                    seen.update(graders)
                    credited.add(judge)
                parts = (
                    score.value.items() if isinstance(score.value, dict) else [(None, score.value)]
                )
                for key, value in parts:
                    dimension = f"{scorer}:{key}" if key is not None else scorer
                    values.setdefault(dimension, []).append(value)
                    ratings.append(
                        {
                            "judge": judge,
                            "prompt_id": pid,
                            "model": model,
                            "dimension": dimension,
                            "label": value,
                            "run_id": sample.epoch,
                            "task": task,
                            "sample_id": sample.id,
                            "scorer": scorer,
                            "answer": score.answer,
                            "explanation": score.explanation,
                        }
                    )
        if unscored:
            print(f"{path.name}: {len(unscored)} sample(s) without scores, nothing to import: "
                  + ", ".join(unscored[:10]), file=sys.stderr)  # fmt: skip
        for scorer, (count, seen, credited) in several.items():
            print(f"{path.name}: {count[0]} score(s) of {scorer} from a step that called "
                  f"several models ({', '.join(sorted(seen))}): credited to "
                  f"{', '.join(sorted(credited))} (the scorer's one declared model, else "
                  "the scorer itself)", file=sys.stderr)  # fmt: skip
        if log.status != "success":  # an error or cancelled run: say why samples are missing
            # the error's first line of text (a message may begin with a blank line)
            error = (getattr(log.error, "message", None) or "").strip()
            print(f"{path.name}: the run ended {log.status!r}, {len(log.samples or [])} "
                  f"sample(s) logged: {error.splitlines()[0][:200] if error else 'no error given'}",
                  file=sys.stderr)  # fmt: skip
    scales = [row for dim, vals in values.items() for row in _scale_rows(dim, vals)]
    on_scale = {(str(r["dimension"]), csv_text(r["label"])) for r in scales}
    numeric = {str(r["dimension"]) for r in scales if is_finite_number(r["label"])}
    off_scale = sum(
        (str(r["dimension"]), csv_text(r["label"])) not in on_scale
        and not (r["dimension"] in numeric and is_finite_number(r["label"]))
        for r in ratings
    )
    report_unmapped("inspect logs", off_scale, "score value(s) off every scale")
    names = [str(r["judge"]) for r in ratings] + [m for _, m in completions]
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "rating_scales": write_contract_file(out, "rating_scales", scales),
        "models": write_models(out, names, {n: canonical(n) for n in names}, models),
    }
