"""MT-Bench judgments (Zheng et al. 2023, FastChat llm_judge), model_judgment/*.jsonl.

FastChat's ``gen_judgment.py`` writes one JSON object per line:

- ``*_single.jsonl`` (single-answer grading): question_id, model, judge
  (``[judge model, prompt name]``), score (1-10, ``-1`` when the judgment
  could not be parsed), turn, judgment (the judge's text). Each line is one
  judge_ratings row: judge = judge[0], model, dimension ``mt_bench_score``
  (scale 1-10 in ``rating_scales``; a number in between, e.g. 7.5, is on the
  scale), label = score as given (``-1`` is rejected by the build as out of
  range; the importer says how many), raw judgment kept as an extra column.
- ``*_pair.jsonl`` (pairwise, both orders): question_id, model_1, model_2,
  g1_winner (game 1: model_1 shown first as A), g2_winner (game 2: model_2
  shown first), each ``model_1``, ``model_2``, ``tie`` or ``error``, judge,
  turn. Each line gives two pairwise_judgments rows with the same run_id:
  game 1 (model_first = model_1) and game 2 (model_first = model_2), the
  verdict the slot of the winner; ``error`` or any other value is written as
  given and rejected by the build (the importer says how many).

- ``human_judgments.json`` (the MT-Bench human study, lmsys/mt_bench_human_judgments,
  a JSON list or JSON lines): question_id, model_a, model_b, winner
  (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), judge (the human:
  ``expert_<k>``, ``author_<k>``), turn. Each vote is a pairwise row of that
  human as judge (model_a was shown first; family ``Human``), and the votes
  give the LLM pair rows their **human_verdict**: per question, turn and
  unordered pair, the option (either model or a tie) with the most votes, a
  tie when two options share the most; ``n_human_votes`` says how many.

prompt_id = ``mt-<question_id>-t<turn>``: each turn is its own item (turn 2
is judged on the whole conversation). A file is single, pair or human by its
records' fields (``score``, ``g1_winner``, ``model_a``), so the names need
not follow FastChat's. ``models.csv``: names as given, families by prefix
(gpt-4 GPT, claude Claude, vicuna and llama Llama, ...), human judges
``Human``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._write import (
    parse_json,
    read_text,
    report_unmapped,
    write_models,
)
from judge_bias.inputs.writer import csv_text, write_contract_file

DIMENSION = "mt_bench_score"
SCALE = range(1, 11)
GAMES = (("g1", ("model_1", "model_2")), ("g2", ("model_2", "model_1")))
RATING_EXTRAS = ("judge_prompt", "turn", "judgment")
PAIRWISE_EXTRAS = ("judge_prompt", "turn", "game", "winner", "judgment", "n_human_votes")
HUMAN_TIES = ("tie", "tie (bothbad)")
WHAT = "an MT-Bench judgments file (JSON lines)"


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a .jsonl file (blank lines skipped)."""
    records = []
    for number, line in enumerate(read_text(path, WHAT).splitlines(), 1):
        if line.strip():
            record = parse_json(line, f"{path}:{number}", WHAT)
            if not isinstance(record, dict):
                raise InputError(f"{path}:{number}: expected a JSON object per line")
            records.append(record)
    return records


def read_records(path: Path) -> list[dict]:
    """A JSON list of objects, or JSON lines."""
    text = read_text(path, WHAT)
    if text.lstrip().startswith("["):
        data = parse_json(text, path, WHAT)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InputError(f"{path}: expected a JSON list of objects")
        return data
    return read_jsonl(path)


def _judge(record: dict) -> tuple[object, object]:
    judge = record.get("judge")
    return (judge[0], judge[1]) if isinstance(judge, list) and len(judge) == 2 else (judge, None)


def _prompt_id(record: dict) -> str:
    return f"mt-{csv_text(record.get('question_id'))}-t{csv_text(record.get('turn'))}"


def single_rows(records: list[dict]) -> tuple[list[dict[str, object]], int]:
    rows, off_scale = [], 0
    for r in records:
        judge, prompt = _judge(r)
        score = r.get("score")
        off_scale += not (isinstance(score, int | float) and SCALE.start <= score <= SCALE[-1])
        rows.append(
            {
                "judge": judge,
                "prompt_id": _prompt_id(r),
                "model": r.get("model"),
                "dimension": DIMENSION,
                "label": score,
                "judge_prompt": prompt,
                "turn": r.get("turn"),
                "judgment": r.get("judgment"),
            }
        )
    return rows, off_scale


def pair_rows(records: list[dict]) -> tuple[list[dict[str, object]], int]:
    rows, unknown = [], 0
    for r in records:
        judge, prompt = _judge(r)
        for game, order in GAMES:
            winner = r.get(f"{game}_winner")
            verdict = {order[0]: "first", order[1]: "second", "tie": "tie"}.get(csv_text(winner))
            unknown += verdict is None
            rows.append(
                {
                    "judge": judge,
                    "prompt_id": _prompt_id(r),
                    "model_first": r.get(order[0]),
                    "model_second": r.get(order[1]),
                    "verdict": verdict or winner,
                    "judge_prompt": prompt,
                    "turn": r.get("turn"),
                    "game": game,
                    "winner": winner,
                    "judgment": r.get(f"{game}_judgment"),
                }
            )
    return rows, unknown


def human_rows(records: list[dict]) -> tuple[list[dict[str, object]], int]:
    """Each human vote as a pairwise row of that human (model_a shown first)."""
    rows, unknown = [], 0
    for r in records:
        winner = csv_text(r.get("winner"))
        verdict = {"model_a": "first", "model_b": "second"}.get(winner)
        verdict = verdict or ("tie" if winner in HUMAN_TIES else None)
        unknown += verdict is None
        rows.append(
            {
                "judge": r.get("judge"),
                "prompt_id": _prompt_id(r),
                "model_first": r.get("model_a"),
                "model_second": r.get("model_b"),
                "verdict": verdict or r.get("winner"),
                "turn": r.get("turn"),
                "winner": r.get("winner"),
            }
        )
    return rows, unknown


def majority_votes(records: list[dict]) -> dict[tuple[str, frozenset], tuple[str, int]]:
    """Per prompt and unordered pair, the human option with the most votes (a model,
    or ``tie``; a tie also when two options share the most) and the number of votes."""
    votes: dict[tuple[str, frozenset], Counter[str]] = {}
    for r in records:
        a, b, winner = csv_text(r.get("model_a")), csv_text(r.get("model_b")), r.get("winner")
        option = {"model_a": a, "model_b": b}.get(csv_text(winner))
        if option is None and winner not in HUMAN_TIES:
            continue  # an unreadable vote: rejected on the human's own row
        key = (_prompt_id(r), frozenset((a, b)))
        votes.setdefault(key, Counter())[option or "tie"] += 1
    majority = {}
    for key, count in votes.items():
        (top, n), *rest = count.most_common()
        majority[key] = ("tie" if rest and rest[0][1] == n else top, sum(count.values()))
    return majority


def _add_human_verdicts(pairs: list[dict[str, object]], humans: list[dict]) -> None:
    majority = majority_votes(humans)
    for row in pairs:
        first, second = csv_text(row["model_first"]), csv_text(row["model_second"])
        found = majority.get((str(row["prompt_id"]), frozenset((first, second))))
        if found:
            option, n = found
            row["human_verdict"] = {first: "first", second: "second"}.get(option, "tie")
            row["n_human_votes"] = n


def import_mt_bench(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert FastChat MT-Bench judgment files to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    ratings: list[dict[str, object]] = []
    pairs: list[dict[str, object]] = []
    humans: list[dict] = []
    human_pairs: list[dict[str, object]] = []
    for path in map(Path, files):
        records = read_records(path)
        if records and "model_a" in records[0]:
            rows, unmapped = human_rows(records)
            humans += records
            human_pairs += rows
            report_unmapped(path.name, unmapped, "human vote(s) other than model_a, model_b, tie")
        elif records and "g1_winner" in records[0]:
            rows, unmapped = pair_rows(records)
            pairs += rows
            report_unmapped(path.name, unmapped, "verdict(s) other than model_1, model_2, tie")
        elif not records or "score" in records[0]:
            rows, unmapped = single_rows(records)
            ratings += rows
            report_unmapped(path.name, unmapped, "score(s) outside 1-10 (-1: not parsed)")
        else:
            raise InputError(f"{path}: neither a single (score) nor a pair (g1_winner) file")
    _add_human_verdicts(pairs, humans)
    pairs += human_pairs
    prompts = dict.fromkeys(str(r["prompt_id"]) for r in (*ratings, *pairs))
    names = [csv_text(r.get(c)) for r in (*ratings, *pairs) for c in ("judge", "model")] + [
        csv_text(r.get(c)) for r in pairs for c in ("model_first", "model_second")
    ]
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "pairwise_judgments": write_contract_file(
            out, "pairwise_judgments", pairs, PAIRWISE_EXTRAS
        ),
        "prompts": write_contract_file(
            out, "prompts", [{"prompt_id": p, "dataset": "mt_bench"} for p in prompts]
        ),
        "rating_scales": write_contract_file(
            out, "rating_scales", [{"dimension": DIMENSION, "label": s, "score": s} for s in SCALE]
        ),
        "models": write_models(
            out,
            names,
            {csv_text(r.get("judge")): (csv_text(r.get("judge")), "Human") for r in humans},
            models,
        ),
    }
