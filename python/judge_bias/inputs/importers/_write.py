"""What the importers share: the models file (names to canonical models and families),
the --judge NAME=MODEL options and reading JSON records; the CSV files themselves
are written by judge_bias.inputs.writer.

``models.csv`` maps every name an importer writes (judges and generators) to
a canonical model and a family: the importer's documented defaults, then
``default_family`` (a name's family from its prefix), overridden row by row by
the user's ``--models FILE`` (alias, model, family; its other aliases are
added).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.writer import write_contract_file

# Substring of a lower-cased model name -> family (first match wins).
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("claude", "Claude"),
    ("anthropic", "Claude"),
    ("gpt", "GPT"),
    ("openai", "GPT"),
    ("o1-", "GPT"),
    ("mixtral", "Mistral"),
    ("mistral", "Mistral"),
    ("llama", "Llama"),
    ("alpaca", "Llama"),
    ("vicuna", "Llama"),
    ("palm", "Google"),
    ("gemini", "Google"),
    ("gemma", "Google"),
    ("bison", "Google"),
    ("falcon", "Falcon"),
    ("qwen", "Qwen"),
    ("deepseek", "DeepSeek"),
    ("human", "Human"),
)


def read_text(path: Path, what: str) -> str:
    """A file's UTF-8 text; a file that is not UTF-8 text (a binary, a spreadsheet)
    is named in a one-line error that says what was expected."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not {what}: not UTF-8 text ({exc.reason})") from exc


def parse_json(text: str, path: Path | str, what: str) -> object:
    """JSON text read from ``path``; text that is not JSON is named in a one-line
    error (json's own message says only where it stopped, not in which file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not {what}: not JSON ({exc})") from exc


def read_json(path: Path, what: str) -> object:
    """A JSON file's value, or a one-line error naming the file."""
    return parse_json(read_text(path, what), path, what)


def read_csv(path: Path, what: str, strip: bool = True) -> tuple[list[str], list[dict[str, str]]]:
    """A CSV file's header and records (names and values trimmed unless ``strip`` is
    false), or a one-line error naming the file when it is not UTF-8 CSV text."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = list(reader.fieldnames or [])
            rows = list(reader)
            if strip:
                header = [c.strip() for c in header]
                rows = [
                    {k.strip(): (v or "").strip() for k, v in r.items() if isinstance(k, str)}
                    for r in rows
                ]
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not {what}: not UTF-8 text ({exc.reason})") from exc
    except csv.Error as exc:
        raise InputError(f"{path}: not {what}: {exc}") from exc
    return header, rows


def read_json_list(path: Path, what: str) -> list[dict]:
    """A JSON file holding a list of objects (the records of ``what``)."""
    data = read_json(path, what)
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise InputError(f"{path}: expected {what}, a JSON list of objects")
    return data


def parse_judges(pairs: Iterable[str] | None) -> dict[str, str]:
    """``--judge NAME=MODEL`` options as name -> model; a one-line error otherwise."""
    judges = {}
    for pair in pairs or []:
        name, sep, model = pair.partition("=")
        if not sep or not name.strip() or not model.strip():
            raise InputError(f"--judge {pair!r}: give SCORE_NAME=MODEL")
        judges[name.strip()] = model.strip()
    return judges


def default_family(name: str) -> str:
    """The family a model name suggests (FAMILY_PATTERNS), else the name itself."""
    lower = name.lower()
    return next((family for key, family in FAMILY_PATTERNS if key in lower), name)


def read_models_file(path: str | Path) -> dict[str, tuple[str, str]]:
    """A user's models file (alias, model, family) as alias -> (model, family)."""
    with Path(path).open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = {"alias", "model", "family"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(f"{path}: a models file needs columns alias, model, family")
        return {r["alias"]: (r["model"], r["family"]) for r in reader if r["alias"]}


def write_models(
    out_dir: str | Path,
    names: Iterable[str],
    defaults: Mapping[str, tuple[str, str]] | None = None,
    overrides: str | Path | None = None,
) -> int:
    """Write ``models.csv``: one row per name (defaults, else the name itself and
    its ``default_family``), the user's rows from ``overrides`` replacing them.
    Empty names are left out (the build rejects the rows that carry them)."""
    table: dict[str, tuple[str, str]] = {}
    for name in dict.fromkeys(n for n in names if n.strip()):
        table[name] = (defaults or {}).get(name) or (name, default_family(name))
    if overrides:
        table.update(read_models_file(overrides))
    rows = [{"alias": a, "model": m, "family": f} for a, (m, f) in table.items()]
    return write_contract_file(out_dir, "models", rows)


def report_unmapped(source: str, n: int, what: str) -> None:
    """Say how many records were written as given for the build to reject."""
    if n:
        print(
            f"{source}: {n} {what} written as given; the build rejects those rows "
            "(see rejected_rows for each reason)",
            file=sys.stderr,
        )
