"""Each column of the sampled records: coverage, distinct values, numbers, and a
guessed kind (judge, model, score, verdict, human, length, id, dimension, text,
annotator, run, other).

The guess reads the column's name first (``grader``, ``gt``, ``pred_length``,
``*_id``) and its values second (a few distinct values like first/second/tie or
A/B are a verdict; numbers are a score). It is a guess and the report says so.
Nested JSON is flattened to dotted paths (``gradingResult.score``); a list of
objects is flattened as ``path.*.field`` (the mapping importer's ``each: path``).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field

from judge_bias.doctor import settings

VERDICT_VALUES = {
    "first", "second", "tie", "a", "b", "1", "2", "model_a", "model_b", "model_1",
    "model_2", "draw", "equal", "win", "lose", "loss", "pass", "fail", "true", "false",
    "yes", "no", "1.0", "2.0", "1.5", "0", "0.0",
}  # fmt: skip
# Name patterns per kind, tried in order on the lower-cased column name's last part
# (and on the whole dotted path for human labels: ``human.score``).
NAME_RULES: tuple[tuple[str, str], ...] = (
    ("length", r"(^|_)(len|length|tokens?|n_tokens|num_tokens|word_count|pred_length)($|_)"),
    ("human", r"(human|gold|^gt$|^gt_|annotation|reviewer_?(score|label|grade)|expected|"
              r"^label$|ground_truth|majority|mean_human|review_grade|^preference_human)"),
    ("annotator", r"(annotator|reviewer|rater|labeler|user_?id|author)"),
    ("judge", r"(judge|grader|evaluator|annotator_model|scorer|critic|^annotator$)"),
    ("verdict", r"(verdict|winner|preference|choice|comparison|chosen|pass|success)"),
    ("model", r"(^model|model$|model_|generator|^llm|provider|system|policy|candidate)"),
    ("dimension", r"(dimension|metric|criteri|aspect|^key$|^name$|rubric|assertion)"),
    ("run", r"(^run|epoch|seed|repeat|attempt|trial)"),
    ("id", r"(^id$|_id$|^idx$|^key$|uuid|Id$|question_id|^index$)"),
    ("score", r"(score|rating|grade|value|points|^rating$|result)"),
)  # fmt: skip
TEXT_CHARS = 60  # a string column whose values average more characters is text
MAX_LEVELS = 50  # a dimension or verdict column with more distinct values is not one


@dataclass
class Column:
    """One column's profile."""

    name: str
    n_present: int = 0
    distinct: dict[str, int] = field(default_factory=dict)
    many: bool = False
    numbers: list[float] = field(default_factory=list)
    n_strings: int = 0
    chars: int = 0
    kind: str = "other"

    @property
    def n_distinct(self) -> int:
        return len(self.distinct)

    def coverage(self, n_records: int) -> float:
        return self.n_present / n_records if n_records else 0.0

    @property
    def numeric_share(self) -> float:
        return len(self.numbers) / self.n_present if self.n_present else 0.0

    @property
    def sd(self) -> float | None:
        return statistics.pstdev(self.numbers) if len(self.numbers) > 1 else None

    def example(self) -> str:
        if not self.distinct:
            return ""
        value = max(self.distinct, key=self.distinct.__getitem__)
        return value if len(value) <= 30 else value[:27] + "..."

    def distinct_text(self) -> str:
        return f"{self.n_distinct:,}+" if self.many else f"{self.n_distinct:,}"


def _flatten(value: object, path: str, depth: int) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict) and depth < settings.MAX_DEPTH:
        for key, item in value.items():
            yield from _flatten(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) for v in value)
        and depth < settings.MAX_DEPTH
    ):
        for item in value:
            yield from _flatten(item, f"{path}.*", depth)
    else:
        yield path, value


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def profile(records: list[dict]) -> dict[str, Column]:
    """Every column of the records (flattened), with its kind guessed."""
    columns: dict[str, Column] = {}
    for record in records:
        seen: set[str] = set()
        for name, value in _flatten(record, "", 0):
            col = columns.get(name)
            if col is None:
                if len(columns) >= settings.MAX_COLUMNS:
                    continue
                col = columns[name] = Column(name)
            if value is None or value == "" or value == [] or name in seen:
                continue
            seen.add(name)
            col.n_present += 1
            text = value if isinstance(value, str) else str(value).lower()
            if not col.many:
                col.distinct[text] = col.distinct.get(text, 0) + 1
                col.many = len(col.distinct) >= settings.MAX_DISTINCT
            number = _number(value)
            if number is not None:
                col.numbers.append(number)
            if isinstance(value, str):
                col.n_strings += 1
                col.chars += len(value)
    for col in columns.values():
        col.kind = guess_kind(col, len(records))
    return columns


UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
# Text labels read as 1 / 0 when a file's judge or human labels are words.
BINARY_TEXT = {
    "pass": 1.0, "fail": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0,
    "correct": 1.0, "incorrect": 0.0, "good": 1.0, "bad": 0.0,
}  # fmt: skip


def as_number(value: object) -> float | None:
    """A value as a number: numbers, numeric text, or a binary word (pass/fail...)."""
    number = _number(value)
    if number is None and isinstance(value, str):
        return BINARY_TEXT.get(value.strip().lower())
    return number


def is_scored(col: Column) -> bool:
    """Numbers, or binary words, in (nearly) every present value."""
    if col.numeric_share > 0.9:
        return True
    words = sum(n for v, n in col.distinct.items() if v.strip().lower() in BINARY_TEXT)
    return not col.many and col.n_present > 0 and words >= 0.9 * col.n_present


def guess_kind(col: Column, n_records: int) -> str:
    """The column's kind by its name, then by its values."""
    if col.distinct and sum(bool(UUID.match(v)) for v in col.distinct) >= 0.9 * col.n_distinct:
        return "id"  # uuids, whatever the name (LangSmith's run_id is a span, not a rerun)
    last = col.name.split(".")[-1].lower()
    whole = col.name.lower()
    text_like = col.n_strings and col.chars / col.n_strings > TEXT_CHARS and col.numeric_share < 0.5
    if text_like:
        return "text"
    for kind, pattern in NAME_RULES:
        target = whole if kind == "human" else last
        if re.search(pattern, target):
            if kind == "human" and col.numeric_share < 0.5 and col.n_distinct > 50:
                continue  # an expected answer's text, not a label
            if kind in ("dimension", "verdict") and col.n_distinct > MAX_LEVELS:
                continue  # too many values for a dimension's names or a verdict
            return kind
    values = set(col.distinct)
    if col.n_present and values and values <= VERDICT_VALUES and len(values) <= 4:
        return "verdict"
    if col.numeric_share > 0.95:
        if col.n_distinct > 0.9 * max(col.n_present, 1) and col.n_present > 20:
            return "id"
        return "score"
    if col.n_present and col.n_distinct > 0.9 * col.n_present and col.n_present > 20:
        return "id"
    return "other"
