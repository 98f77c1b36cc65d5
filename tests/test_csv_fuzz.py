"""Generated CSV files against an independent reference: every valid record is
loaded with its exact values, every invalid one is rejected with its record
number, and the counts reconcile with Python's csv module.

The generator writes each file from a list it keeps (good records, bad
records, blank lines, line ends), so the expected record numbers come from
the generator, not from any parser; Python's csv module is the reference for
the record count of every file whose quoting is balanced.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge_bias.inputs.loading import load_input

COLUMNS = ["judge", "prompt_id", "model", "dimension", "label"]
TEXT = st.lists(
    st.one_of(
        st.sampled_from(['"', ",", "\n", "\r\n", "\r", " ", ";", "\t", "\x00", "'", "é", "😀"]),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=12,
).map("".join)
# now and then a long value (the delimiter, quotes and line breaks repeated in it)
TEXT = st.one_of(TEXT, st.tuples(TEXT, st.integers(50, 400)).map(lambda t: t[0] * t[1]))
PLAIN = st.text(alphabet="abcxyz019 -_.", max_size=8)


@dataclass
class Item:
    # good, short, long, junk (text after a closing quote), junkml (the same after a
    # quoted value over several lines, one of which looks like a record), blank,
    # unbalanced (an opening quote never closed)
    kind: str
    values: list[str]
    text: str = ""


def _write(values: list[str], quote_all: bool, end: str) -> str:
    buf = io.StringIO()
    # the writer quotes only the line-end characters of its own terminator
    csv.writer(buf, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL,
               lineterminator="\r\n").writerow(values)  # fmt: skip
    return buf.getvalue().removesuffix("\r\n") + end


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[str, list[Item]]:
    """A judge_ratings file's text and the items it was written from."""
    items: list[Item] = []
    n = draw(st.integers(0, 25))
    unbalanced_at = draw(st.one_of(st.none(), st.integers(0, n)))
    for i in range(n + 1):
        after_unbalanced = unbalanced_at is not None and i > unbalanced_at
        if i == unbalanced_at:
            # an opening quote never closed: the rest of the file has no quote
            items.append(Item("unbalanced", [], f'j,"p{i},m,d,l'))
            continue
        if i == n:
            break
        kind = draw(st.sampled_from(["good"] * 6 + ["short", "long", "junk", "junkml", "blank"]))
        if after_unbalanced and kind in ("junk", "junkml"):
            kind = "good"
        # junk is written as is: plain values keep it one line
        values_st = PLAIN if after_unbalanced or kind in ("junk", "junkml") else TEXT
        width = {"short": draw(st.integers(2, 4)), "long": draw(st.integers(6, 8))}.get(kind, 5)
        values = draw(st.lists(values_st, min_size=width, max_size=width))
        if kind == "junk":
            values = [*values[:1], f'"{values[1]}"x', *values[2:]]
        if kind == "junkml":
            # text before the closing quote (a quote first on a line would look like
            # the opening quote of a later record: an unbalanced quote before it)
            inner = f"{values[4]}\nj,INJ{i},m,d,5\nx{values[3]}"
            values = [*values[:4], f'"{inner}" ']
        items.append(Item(kind, values))
    ends = st.sampled_from(["\n", "\r\n", "\r"])
    text = draw(st.sampled_from(["", "\ufeff"])) + draw(st.sampled_from(["", "\n", "\r\n\n"]))
    text += ",".join(COLUMNS) + draw(ends)
    unbalanced = False  # records after an unbalanced quote are written without quotes
    for item in items:
        end = draw(ends)
        if item.kind == "blank":
            text += end
        elif item.kind == "unbalanced":
            text += item.text + end
            unbalanced = True
        elif item.kind in ("junk", "junkml"):
            text += ",".join(item.values) + end
        else:
            text += _write(item.values, draw(st.booleans()) and not unbalanced, end)
    if items and items[-1].kind != "blank" and draw(st.booleans()):
        text = text.rstrip("\r\n") if not text.endswith(('"\r', '"\n')) else text
    return text, items


def _expected(items: list[Item]) -> tuple[dict[int, list[str]], set[int]]:
    good: dict[int, list[str]] = {}
    bad: set[int] = set()
    number = 0
    for item in items:
        if item.kind == "blank":
            continue
        number += 1
        if item.kind == "good":
            good[number] = item.values
        else:
            bad.add(number)
    return good, bad


def _load(tmp: Path, text: str) -> pd.DataFrame:
    path = tmp / "judge_ratings.csv"
    path.write_bytes(text.encode("utf-8"))
    con = duckdb.connect()
    try:
        return load_input(con, tmp, "judge_ratings").df()
    finally:
        con.close()


def _check(text: str, items: list[Item], df: pd.DataFrame) -> None:
    good, bad = _expected(items)
    assert len(df) == len(good) + len(bad)
    assert df["_row_number"].is_unique
    rejected = df[df["_parse_error"].notna()]
    assert set(rejected["_row_number"]) == bad
    accepted = df[df["_parse_error"].isna()].set_index("_row_number")
    assert set(accepted.index) == set(good)
    for number, values in good.items():
        row = accepted.loc[number, COLUMNS].tolist()
        # an empty field is null (missing), never "": exact values otherwise
        assert [None if not isinstance(v, str) else v for v in row] == [
            v if v != "" else None for v in values
        ], number
    if not any(i.kind == "unbalanced" for i in items):
        # the independent parser counts the same records
        reference = [r for r in csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")) if r]
        assert len(df) == len(reference) - 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(csv_files())
def test_generated_files_load_exactly(tmp_path_factory, case) -> None:
    text, items = case
    df = _load(tmp_path_factory.mktemp("fuzz"), text)
    _check(text, items, df)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(csv_files())
def test_fast_and_record_by_record_paths_read_the_same(tmp_path_factory, case) -> None:
    """The same file through pyarrow (fast path) and the csv module (record by
    record): the same records, numbers and values, nulls kept apart from text."""
    from judge_bias.inputs import csv_records

    text, items = case
    if any(i.kind != "good" and i.kind != "blank" for i in items):
        return  # only clean files take the fast path
    path = tmp_path_factory.mktemp("diff") / "judge_ratings.csv"
    path.write_bytes(text.encode("utf-8"))
    names = [f"c{i}" for i in range(len(COLUMNS))]
    con = duckdb.connect()
    dialect = csv_records.Dialect()
    assert csv_records.read_into(con, "fast", path, dialect, names) == []
    bad: list = []
    slow = csv_records.walk_records(path, dialect, names, bad)
    csv_records.store(con, "slow", csv_records._schema(names), slow)
    assert bad == []
    for a, b in (("fast", "slow"), ("slow", "fast")):
        assert con.execute(f"select count(*) from (from {a} except all from {b})").fetchone() == (
            0,
        )
    n = con.execute("select count(*) from fast").fetchone()[0]
    assert n == sum(i.kind == "good" for i in items)


def test_quotes_first_seen_after_row_100000(tmp_path: Path) -> None:
    """The case the sniffer lost: the first quote is far beyond any sample."""
    rows = [["j", f"p{i}", "m", "d", "1"] for i in range(120_000)]
    rows[108_000] = ["j", "p108000", "m", "d", 'says "yes", then\nno']
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    df = _load(tmp_path, buf.getvalue())
    assert len(df) == 120_000 and df["_parse_error"].isna().all()
    assert df.set_index("_row_number").loc[108_001, "label"] == 'says "yes", then\nno'


def test_unbalanced_quote_rejects_one_line(tmp_path: Path) -> None:
    """An unbalanced quote at record 100 rejects that line only, even when a later
    quoted field closes the runaway field (strict RFC 4180: junk after a quote)."""
    lines = [f"j,p{i},m,d,{i % 3}" for i in range(1, 301)]
    lines[99] = 'j,"p100,m,d,1'
    lines[199] = 'j,p200,m,d,"quoted, fine"'
    df = _load(tmp_path, ",".join(COLUMNS) + "\n" + "\n".join(lines) + "\n")
    assert len(df) == 300
    bad = df[df["_parse_error"].notna()]
    assert bad["_row_number"].tolist() == [100]
    assert bad["_raw_line"].tolist() == ['j,"p100,m,d,1']
    good = df[df["_parse_error"].isna()].set_index("_row_number")
    assert good.loc[200, "label"] == "quoted, fine"
    assert good.loc[101, "prompt_id"] == "p101"


def test_long_field_and_record_numbers_after_blank_lines(tmp_path: Path) -> None:
    big = "x" * 1_000_000
    text = ",".join(COLUMNS) + "\n\nj,p1,m,d,1\n\n\nj,p2,m,d\nj,p3,m,d," + big + "\n"
    df = _load(tmp_path, text).set_index("_row_number")
    assert df.loc[2, "_parse_error"].startswith("4 fields where the header has 5 (line 6)")
    assert df.loc[3, "label"] == big
    assert df.loc[1, "judge"] == "j"


def test_fast_path_disagreement_falls_back_to_record_by_record(tmp_path: Path, monkeypatch):
    """If pyarrow ever read other records than the csv module counted, the file is
    read record by record instead of trusting either."""
    from judge_bias.inputs import csv_records

    real = csv_records._arrow_batches

    def lossy(path, dialect, names):
        for batch in real(path, dialect, names):
            yield batch.slice(1)  # drops a record

    monkeypatch.setattr(csv_records, "_arrow_batches", lossy)
    df = _load(tmp_path, ",".join(COLUMNS) + "\nj,p1,m,d,1\nj,p2,m,d,2\n")
    assert sorted(df["prompt_id"]) == ["p1", "p2"]
    assert sorted(df["_row_number"]) == [1, 2]
