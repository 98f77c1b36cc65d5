"""promptfoo results version 2: each row's test index, from the file's table
(``results.table.body``) when it names every row's test, else from the rows' vars
and order (the promptfoo importer's numbering, kept apart for its size)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator


def json_key(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def number_tests(rows: list[dict], table: object = None, name: str = "") -> None:
    """Give version-2 rows (no testIdx) the index of their test. The file's table
    gives it: ``table.body[i]`` is test i's line, its ``outputs`` the cells of that
    test's rows (one per provider and prompt), so a row whose cell is in one line
    is test i; used when every version-2 row's cell is (the index the file gives,
    never mixed with the numbering below). Else (no table, an emptied body, cells
    alike in several lines) a test is its vars, and the n-th row of the same vars,
    provider and prompt is the n-th test of those vars (``--repeat N``, or two
    tests of identical vars: version 3's evaluator gives each repeat and each test
    its own testIdx), numbered in the order they first appear: promptfoo writes a
    row as it finishes, so with tests of identical vars two providers' n-th rows
    may be of different tests (their ratings then share a prompt_id)."""
    v2 = [row for row in rows if "testIdx" not in row]
    lines: dict[str, set[int]] = {}
    for i, key, _ in table_cells(table):
        lines.setdefault(key, set()).add(i)
    found = [lines.get(row_cell_key(row), set()) for row in v2]
    if v2 and all(len(f) == 1 for f in found):
        for row, (i,) in zip(v2, found, strict=True):
            row["testIdx"] = i
        return
    if v2 and lines:  # a table, not used: say so (its numbering and this one differ)
        one = sum(len(f) == 1 for f in found)
        print(f"promptfoo: {name}: results.table names one test for {one} of {len(v2)} "
              "version-2 row(s), not all: tests numbered by vars and the rows' order "
              "instead (rows of tests of identical vars may share a prompt_id)",
              file=sys.stderr)  # fmt: skip
    tests: dict[tuple[str, int], int] = {}
    seen: Counter[tuple[str, str, str]] = Counter()
    for row in v2:
        run = run_key(row)
        seen[run] += 1
        row["testIdx"] = tests.setdefault((run[0], seen[run]), len(tests))


def run_key(row: dict) -> tuple[str, str, str]:
    """A version-2 row's vars, provider and prompt: its test's rows for one output."""
    return json_key(row.get("vars")), json_key(row.get("provider")), json_key(row.get("prompt"))


def cell_key(vars_: object, provider: object, prompt: object, row: dict) -> str:
    """What a version-2 result row and its table cell share: the test's vars, the
    provider's label (else id), the prompt's raw text, the latency and the
    gradingResult (evaluator.js copies each into the cell)."""
    return json_key([vars_, provider, prompt, row.get("latencyMs"), row.get("gradingResult")])


def table_cells(table: object) -> Iterator[tuple[int, str, dict]]:
    """(line index, cell key, the line's test) of each cell of a version-2 table:
    promptfoo 0.80.3 keeps each test in ``table.body[rowIndex].test``."""
    body = table.get("body") if isinstance(table, dict) else None
    for i, line in enumerate(body if isinstance(body, list) else []):
        test = line.get("test") if isinstance(line, dict) else None
        outputs = line.get("outputs") if isinstance(line, dict) else None
        if not isinstance(test, dict) or not isinstance(outputs, list):
            continue
        for cell in outputs:
            if isinstance(cell, dict):
                vars_ = test.get("vars") or {}
                yield i, cell_key(vars_, cell.get("provider"), cell.get("prompt"), cell), test


def table_options(table: object) -> dict[str, list[dict]]:
    """Each table cell's key and the options of its row's test (several when cells
    are alike)."""
    found: dict[str, list[dict]] = {}
    for _, key, test in table_cells(table):
        found.setdefault(key, []).append(test.get("options") or {})
    return found


def row_cell_key(row: dict) -> str:
    provider = row.get("provider")
    if isinstance(provider, dict):
        provider = provider.get("label") or provider.get("id")
    return cell_key(row.get("vars") or {}, provider, (row.get("prompt") or {}).get("raw"), row)
