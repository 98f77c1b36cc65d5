"""Built warehouses reconcile with an independent parser: every record Python's
csv module reads is a row of the warehouse, accepted or rejected with its
record number; nothing the sniffer used to lose is lost."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from judge_bias.simulate import simulate
from judge_bias.warehouse.build import BuildResult, build
from tests.conftest import DEMO_DIR, query

pytestmark = pytest.mark.dbt


def _csv_records(path: Path) -> int:
    """Records as Python's csv module counts them (header and empty lines excluded)."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return sum(1 for row in csv.reader(fh) if row) - 1


def test_simulated_400_prompts_are_all_accepted(tmp_path: Path) -> None:
    """At 400 prompts the sniffing loader lost 14,400 of 50,400 ratings."""
    data = simulate(tmp_path / "data", n_prompts=400)
    result = build(data, tmp_path / "w.duckdb")
    assert result.validation.success
    counts = query(result.db_path, "select * from input_row_counts").set_index("source")
    for source, row in counts.iterrows():
        path = data / f"{source}.csv"
        expected = _csv_records(path) if path.exists() else 0
        assert row["rows_read"] == expected, source
        assert row["rows_rejected"] == 0, source
    assert counts.loc["judge_ratings", "rows_read"] == 50_400


def _plain_record_at_or_after(records: list[list[str]], start: int) -> int:
    """The index of the first record from ``start`` on with no quote or line break."""
    return next(
        i for i in range(start, len(records))
        if not any(c in v for v in records[i] for c in '"\r\n,')
    )  # fmt: skip


def break_records(path: Path) -> dict:
    """Rewrite the demo's judge_ratings.csv at ``path`` with an unbalanced quote, a
    short record, empty lines and quoted line breaks: its header, records, record
    texts as written, and the indexes of the two broken records."""
    with path.open(newline="", encoding="utf-8") as fh:
        header, *records = list(csv.reader(fh))
    assert any("\n" in v for r in records for v in r)  # the demo has quoted line breaks
    texts = []
    for record in records:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(record)
        texts.append(buf.getvalue())
    # an opening quote never closed (what the sniffer turned into 8,640 malformed
    # rows), a record one field short, empty lines before both
    unbalanced = _plain_record_at_or_after(records, 100)
    short = _plain_record_at_or_after(records, unbalanced + 50)
    texts[unbalanced] = '"' + texts[unbalanced]
    texts[short] = ",".join(records[short][:-1]) + "\n"
    texts[short] = "\n" + texts[short]
    texts[unbalanced] = "\r\n" + texts[unbalanced]
    path.write_text(",".join(header) + "\r\n" + "".join(texts), encoding="utf-8")
    return {"header": header, "records": records, "texts": texts, "unbalanced": unbalanced,
            "short": short}  # fmt: skip


def build_gapped_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuildResult, dict]:
    """The session's `gapped_demo` (tests/conftest.py): the demo without its optional
    pairwise and perturbation files (test_scorecard) and with two broken rating
    records (break_records, here), one build for both files' checks, which read
    disjoint parts of it: (BuildResult, what break_records returned)."""
    data = tmp_path_factory.mktemp("gapped_demo") / "data"
    shutil.copytree(DEMO_DIR, data)
    (data / "pairwise_judgments.csv").unlink()
    (data / "perturbation_judgments.csv").unlink()
    broken = break_records(data / "judge_ratings.csv")
    return build(data, data.parent / "w.duckdb"), broken


def test_broken_records_are_one_row_each_and_the_rest_is_read(gapped_demo) -> None:
    """An unbalanced quote, a short record, empty lines and quoted line breaks
    in one file: each bad record is one rejected row at its record number. (The
    build is the session's gapped_demo: the missing pairwise and perturbation files
    touch no judge_ratings row.)"""
    result, broken = gapped_demo
    records, texts, header = broken["records"], broken["texts"], broken["header"]
    unbalanced, short = broken["unbalanced"], broken["short"]
    counts = query(result.db_path, "select * from input_row_counts where source = 'judge_ratings'")
    assert counts["rows_read"].item() == len(records)
    rejected = query(
        result.db_path,
        "select row_number, reason_code, reason from rejected_rows "
        "where source = 'judge_ratings' and reason_code = 'malformed_row' order by row_number",
    )
    assert rejected["row_number"].tolist() == [unbalanced + 1, short + 1]
    first_line = 2 + sum(t.count("\n") for t in texts[:unbalanced]) + 1  # header, blank line
    assert f"record from line {first_line}, error on line" in rejected["reason"].iloc[0]
    width = len(header)
    assert f"{width - 1} fields where the header has {width}" in rejected["reason"].iloc[1]
    # every other record is accepted, the one after the broken one included
    accepted = query(
        result.db_path,
        "select count(*) as n, count(*) filter (where row_number = "
        f"{unbalanced + 2}) as after from int_judge_ratings_checked where reject_code is null "
        "or reject_code <> 'malformed_row'",
    )
    assert accepted["n"].item() == len(records) - 2 and accepted["after"].item() == 1
