"""The per-file input summary a build ends with: rows read, accepted and
rejected, the files that fail or warn at the publishing gates, and every reason
code of rejection with its count, example values and how to fix it (a single
unknown model among thousands of rows is named, not hidden behind the top codes).

Read from input_row_counts (counts, rejected share and the gates' thresholds,
which are dbt vars) and rejected_rows (reason_code, reason). Needs no Great
Expectations, so the report can use it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from judge_bias.inputs.loads import MARK_COLUMN

# How to fix each reason_code of rejected_rows (the codes: contract.REASON_CODES;
# a test holds the two to the same set).
FIXES: dict[str, str] = {
    "malformed_row": (
        "the record does not split into the header's columns: quote fields holding a comma, "
        "quote or line break with double quotes, and double the quotes inside them"
    ),
    "missing_value": "fill in the empty required values, or remove those rows",
    "invalid_value": "use one of the values the reason names (docs/inputs.md, Input contract)",
    "invalid_scale": "give the dimension at least two different scores in rating_scales",
    "unparseable_raw_output": (
        "end each raw_output with a line 'Answer: <label>', or give the label column"
    ),
    "unknown_dimension": "add the dimension's labels and scores to rating_scales",
    "unknown_model": (
        "add the names to the models file (alias, model, family) or to seeds/model_aliases.csv"
    ),
    "unknown_prompt": "add the prompt ids to the prompts file, or leave that file out",
    "unknown_label": "add the label to rating_scales for that dimension, or correct its spelling",
    "score_out_of_range": "give scores inside the dimension's scale, or widen it in rating_scales",
    "duplicate_key": "remove the repeated rows, or give repeated runs their own run_id",
}
# the fixes on the relation route where a file's do not apply: its malformed_row is a
# row whose watermark is null (judge_bias.inputs.relations.NULL_WATERMARK); its
# duplicate_key is often a table that keeps every version of a row (a full build reads
# them all, where the loads replaced the earlier: docs/incremental.md)
RELATION_FIXES: dict[str, str] = {
    # a team that reads judge_ratings alone has no models relation yet: say how to add one
    "unknown_model": (
        "add the names to the models relation (alias, model, family), listing models in "
        "judge_bias_input_relations, or to seeds/model_aliases.csv"
    ),
    "malformed_row": (
        "give every row its watermark (judge_bias_loaded_at_column): a row without one "
        "belongs to no load and is read again by every load until it has one"
    ),
    "duplicate_key": (
        "read one row per key (a view of each key's latest row), or give repeated runs "
        "their own run_id"
    ),
}
TOP_REASONS = 3  # distinct reason texts (example values) shown per code; every code is shown
# duplicate_key's texts name the earlier row ("... as row N"): grouped into one text per
# file (" as an earlier row"), with the first few rejected rows' numbers; rejected_rows
# keeps every row and its exact text
GROUPED_BY_ROW = ("duplicate_key",)
SHOWN_ROWS = 5  # row numbers shown for a grouped text
REASON_WIDTH = 110  # a longer reason text is cut


@dataclass
class Reason:
    """One reason_code of one file: its count and its most frequent reason texts."""

    code: str
    n: int
    examples: list[tuple[str, int]] = field(default_factory=list)  # (reason, rows)
    n_distinct: int = 0  # distinct reason texts
    # a grouped text (GROUPED_BY_ROW) -> the first SHOWN_ROWS of its rows' numbers
    rows: dict[str, list[int]] = field(default_factory=dict)

    @property
    def fix(self) -> str:
        return FIXES.get(self.code, "see the reason column of rejected_rows")

    def _rows(self, text: str, n: int) -> str:
        return _shown_rows(self.rows[text], n) if text in self.rows else ""

    def describe(self) -> str:
        shown = "; ".join(f"{_cut(text)} ({n:,}{self._rows(text, n)})" for text, n in self.examples)
        more = self.n_distinct - len(self.examples)
        if more > 0:
            shown += f"; {more:,} more distinct reason{'s' if more > 1 else ''}"
        return f"{self.n:,} {self.code}: {shown}"


@dataclass
class FileCounts:
    """One input file's row counts and its place against the gates."""

    source: str
    source_file: str | None
    rows_read: int
    rows_accepted: int
    rows_rejected: int
    rejected_share: float | None
    warn_share: float | None
    max_share: float | None
    reasons: list[Reason] = field(default_factory=list)
    # What the gates judge (input_row_counts' gate_* columns): the whole file on a
    # full build (None here: the counts above), an incremental build's load.
    gate_scope: str | None = None
    gate_rows_read: int | None = None
    gate_rows_accepted: int | None = None
    gate_share: float | None = None
    # A relation load with a watermark (judge_bias_loaded_at_column): the column, the
    # load's start (the earlier loads' largest value; None: the first load) and the
    # largest value it read, so that the team sees which of its rows the load took
    watermark: tuple[str, object, object] | None = None
    # Late rows of a relation load (stg_inputs__relation_counts.rows_late): below the
    # load's start, their key held by no load at their watermark or a later one, so
    # never read: (rows, smallest and largest watermark, the column as the window
    # line names it, or as the relation does when the load has no window)
    late: tuple[int, str, str, str] | None = None
    # listed in judge_bias_input_relations (a row of stg_inputs__relation_counts),
    # so a kind with no rows is an empty relation, not one left out of the var
    listed: bool = False

    @property
    def late_warning(self) -> str | None:
        """A WARNING naming the late rows, their watermarks and the fix (None when
        the load left none): not a failure, the marts are right for the rows loaded."""
        return f"WARNING: {self.late_rows}" if self.late_rows else None

    @property
    def late_rows(self) -> str | None:
        """The late-row warning's words without 'WARNING: ' (the build record's
        warnings, printed as 'warning: ...')."""
        if not self.late:
            return None
        n, low, high, mark = self.late
        values = f"from {low} to {high}" if low != high else f"at {high}"
        return (
            f"{n:,} row{'s' if n != 1 else ''} of {self.name} written late ({mark} "
            f"{values}, below this load's start) never read by a load: no load holds "
            f"their key at that {mark} or a later one; fix: give them a newer {mark} (the "
            "next load reads them), or build with --full-refresh"
        )

    @property
    def judged(self) -> tuple[int, int, float | None]:
        """(rows read, rows accepted, rejected share) that the gates judge."""
        if self.gate_rows_read is None or self.gate_rows_accepted is None:
            return self.rows_read, self.rows_accepted, self.rejected_share
        return self.gate_rows_read, self.gate_rows_accepted, self.gate_share

    @property
    def scope(self) -> str:
        """'' on a full build, else ' in load <id>' (for the gate's words)."""
        return f" in {self.gate_scope}" if self.gate_scope and self.gate_scope != "build" else ""

    @property
    def is_relation(self) -> bool:
        """Read from a relation or a DuckDB table function (the relation route,
        docs/dbt-package.md), not from a file."""
        where = self.source_file or ""
        return where.startswith('"') or "(" in where

    @property
    def name(self) -> str:
        if not self.source_file:
            return self.source
        if self.is_relation:
            return f"{self.source} from {self.source_file}"
        return Path(self.source_file).name

    @property
    def per_load(self) -> bool:
        """An incremental build's counts: rows_* are totals of every load, gate_* this load's."""
        return bool(self.gate_scope) and self.gate_scope != "build"

    def counts(self) -> str:
        """'N read, A accepted, R rejected', the totals of every load and this load's
        counts after an incremental build."""
        share = ""
        if self.rows_rejected and self.rejected_share:
            share = f" ({self.rejected_share:.1%})"
        text = (
            f"{self.rows_read:,} read, {self.rows_accepted:,} accepted, "
            f"{self.rows_rejected:,} rejected{share}"
        )
        read, accepted = self.gate_rows_read, self.gate_rows_accepted
        if not self.per_load or read is None or accepted is None:
            return text
        if read == 0:
            # the mart's scope then reads "none in this load (no new rows)": the kind has
            # rows (the earlier loads'), this load brought none of them
            return f"{text} in every load; none in this load (no new rows)"
        return (
            f"{text} in every load; {read:,} read, {accepted:,} accepted, "
            f"{read - accepted:,} rejected{self.scope}{self.window}"
        )

    @property
    def window(self) -> str:
        """', logged_at from A (the earlier loads' largest) to B': the watermark values
        the load read ('' without a watermark)."""
        if self.watermark is None:
            return ""
        mark, above, through = self.watermark
        if above is None:
            return f", {mark} up to {through}"
        return f", {mark} from {above} (the earlier loads' largest) to {through}"

    @property
    def all_rejected(self) -> bool:
        read, accepted, _ = self.judged
        return read > 0 and accepted == 0

    @property
    def over_max(self) -> bool:
        share, limit = self.judged[2], self.max_share
        return share is not None and limit is not None and share > limit

    @property
    def over_warn(self) -> bool:
        share, limit = self.judged[2], self.warn_share
        return share is not None and limit is not None and share > limit

    @property
    def gate(self) -> str | None:
        """Why this file fails (or warns at) the gates, None when it passes."""
        read, _, share = self.judged
        if self.all_rejected:
            return f"{read:,} rows read{self.scope}, all rejected"
        if self.over_max:
            return (
                f"{share:.1%} of its {read:,} rows{self.scope} rejected, above "
                f"max_rejected_share {self.max_share:g}"
            )
        if self.over_warn:
            return (
                f"{share:.1%} of its rows{self.scope} rejected, above "
                f"warn_rejected_share {self.warn_share:g} (a warning)"
            )
        return None

    @property
    def fails(self) -> bool:
        return self.all_rejected or self.over_max

    def fix(self, reason: Reason) -> str:
        """The reason's fix, in the words of the route: an input kind is a relation
        on the relation route ("the models relation"), a file otherwise."""
        if not self.is_relation:
            return reason.fix
        return RELATION_FIXES.get(reason.code) or for_relations(reason.fix)

    def top_reason(self) -> str:
        """The most frequent reason in a few words: code, an example, the fix."""
        if not self.reasons:
            return "no reason recorded"
        r = self.reasons[0]
        example = f": {_cut(r.examples[0][0])}" if r.examples else ""
        return f"top reason {r.code} ({r.n:,} rows){example}; fix: {self.fix(r)}"


# the input kinds a fix names as files ("the models file"), named as relations on
# the relation route
_FILE_WORDS = re.compile(r"\b(models|prompts) file\b")


def for_relations(text: str) -> str:
    """A fix's words for the relation route: "the models file" -> "the models relation"."""
    return _FILE_WORDS.sub(r"\1 relation", text)


def _shown_rows(numbers: list[int], n: int) -> str:
    """': rows 4, 9, 12' (', ...' when there are more than shown)."""
    more = ", ..." if n > len(numbers) else ""
    return f": row{'s' if n > 1 else ''} {', '.join(f'{r:,}' for r in numbers)}{more}"


def _cut(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 3] + "..."


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    return {r[0] for r in con.execute(f'describe "{table}"').fetchall()}


def read_input_counts(con: duckdb.DuckDBPyConnection) -> list[FileCounts]:
    """Every input file's counts with its top rejection reasons (empty list when the
    warehouse has no input_row_counts)."""
    tables = {
        r[0]
        for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main'"
        ).fetchall()
    }
    if "input_row_counts" not in tables:
        return []
    have = _columns(con, "input_row_counts")
    optional = (
        *("source_file", "rejected_share", "warn_rejected_share", "max_rejected_share"),
        *("gate_scope", "gate_rows_read", "gate_rows_accepted", "gate_rejected_share"),
    )
    select = ", ".join(c if c in have else f"null as {c}" for c in optional)
    rows = con.execute(
        "select source, rows_read, rows_accepted, rows_rejected, "
        f"{select} from input_row_counts order by source"
    ).fetchall()
    files = {
        r[0]: FileCounts(r[0], r[4], r[1], r[2], r[3], r[5], r[6], r[7], [], *r[8:12]) for r in rows
    }
    for f in files.values():
        if f.per_load and f.gate_rows_read and f"base_inputs__{f.source}" in tables:
            f.watermark = _watermark(con, f"base_inputs__{f.source}", f.gate_scope or "")
    if "stg_inputs__relation_counts" in tables:
        _read_late(con, files)
    if "rejected_rows" in tables:
        for source, reason in _reasons(con):
            if source in files:
                files[source].reasons.append(reason)
    return list(files.values())


def _read_late(con: duckdb.DuckDBPyConnection, files: dict[str, FileCounts]) -> None:
    """The kinds listed on the relation route (each a row of
    stg_inputs__relation_counts) and each relation load's late rows (counted there
    in SQL), with the watermark column named as the window line names it."""
    for (source,) in con.execute("select source from stg_inputs__relation_counts").fetchall():
        if source in files:
            files[source].listed = True
    if not {"rows_late", "watermark_column"} <= _columns(con, "stg_inputs__relation_counts"):
        return  # a warehouse built before session 26
    rows = con.execute(
        "select source, rows_late, late_from, late_through, watermark_column "
        "from stg_inputs__relation_counts where watermark_column is not null"
    ).fetchall()
    for source, n, low, high, mark in rows:
        # one name per summary: the window line's (the loads' _watermark_column, the
        # var as typed) when this load has one; the relation's own name of the column
        # (the count model's) only without it (a quiet load: no window line)
        if (f := files.get(source)) is not None and n:
            named = f.watermark[0] if f.watermark is not None else mark
            f.late = (int(n), str(low), str(high), str(named))


def _base_mark(columns: list[str]) -> str:
    """The watermark column as the base keeps it (the loader's name, lower case): the
    column before _watermark_above; the name shown for loads read before
    _watermark_column was kept."""
    return columns[columns.index("_watermark_above") - 1]


def _watermark(
    con: duckdb.DuckDBPyConnection, table: str, scope: str
) -> tuple[str, object, object] | None:
    """The watermark column of a relation's loads as judge_bias_loaded_at_column
    spells it (the load's _watermark_column: judge_bias.inputs.loads.as_load; in
    loads read before it was kept, the base's column before _watermark_above, lower
    case), and the start and end of the load ``scope`` ('load <id>') read; None when
    the loads have no watermark."""
    columns = [r[0] for r in con.execute(f'describe "{table}"').fetchall()]
    if "_watermark_above" not in columns or not scope.startswith("load "):
        return None
    mark = _base_mark(columns)
    spelled = MARK_COLUMN if MARK_COLUMN in columns else "null"
    above, through, named = con.execute(
        f"select any_value(_watermark_above), max(_watermark_through), any_value({spelled}) "
        f'from "{table}" where _load_id = ?',
        [scope.removeprefix("load ")],
    ).fetchall()[0]
    return (named or mark, above, through) if through is not None else None


def load_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """One line per load of an incremental warehouse, oldest first: its id and time,
    and each kind it read with the rows still kept from it (a key re-sent later is
    deleted and inserted by the later load: its row counts there) and, read from a
    relation with a watermark, the window (the loads' base tables grouped by
    _load_id; one row per kind and load, not per input row). Empty for a full
    build's warehouse (no _load_id)."""
    kinds: dict[str, list[str]] = {}
    when: dict[str, str] = {}  # the load's time (UTC, ISO text: ordered as text)
    names = con.execute(
        "select table_name from information_schema.tables where table_schema = 'main' "
        "and table_name like 'base\\_inputs\\_\\_%' escape '\\' order by table_name"
    ).fetchall()
    for (table,) in names:
        columns = [r[0] for r in con.execute(f'describe "{table}"').fetchall()]
        if "_load_id" not in columns:
            continue
        marked = "_watermark_above" in columns
        window = "min(_watermark_above), max(_watermark_through)" if marked else "null, null"
        spelled = f"any_value({MARK_COLUMN})" if MARK_COLUMN in columns else "null"
        at = "min(_loaded_at)" if "_loaded_at" in columns else "null"
        rows = con.execute(
            f'select _load_id, {at}, count(*), {window}, {spelled} from "{table}" group by _load_id'
        ).fetchall()
        kind = table.removeprefix("base_inputs__")
        for load, at, n, above, through, named in rows:
            text = f"{kind} {n:,} row{'s' if n != 1 else ''} kept from it"
            if through is not None:
                mark = named or _base_mark(columns)
                shown = f"up to {through}" if above is None else f"from {above} to {through}"
                text += f" ({mark} {shown})"
            kinds.setdefault(load, []).append(text)
            when[load] = min(when.get(load, str(at)), str(at))
    order = sorted(kinds, key=lambda load: (when[load], load))
    return [f"load {load} ({when[load]}): {', '.join(kinds[load])}" for load in order]


def _reasons(con: duckdb.DuckDBPyConnection) -> list[tuple[str, Reason]]:
    """Every reason code per source (most rows first), each with its most frequent
    reason texts."""
    grouped = ", ".join(f"'{code}'" for code in GROUPED_BY_ROW)
    rows = con.execute(
        f"""
        with grouped as (
            select
                source, reason_code, row_number,
                case when reason_code in ({grouped})
                    then regexp_replace(reason, ' as row [0-9]+$', ' as an earlier row')
                    else reason end as reason
            from rejected_rows
        ),
        texts as (
            select
                source, reason_code, reason, count(*) as n,
                case when reason_code in ({grouped})
                    then min(row_number, {SHOWN_ROWS}) end as row_numbers
            from grouped group by source, reason_code, reason
        ),
        codes as (
            select
                source, reason_code, sum(n) as code_n, count(*) as n_distinct,
                row_number() over (partition by source order by sum(n) desc, reason_code) as rank
            from texts group by source, reason_code
        ),
        ranked as (
            select
                texts.*,
                row_number() over (
                    partition by texts.source, texts.reason_code order by texts.n desc, reason
                ) as k
            from texts
        )
        select codes.source, codes.reason_code, codes.code_n, codes.n_distinct,
            ranked.reason, ranked.n, ranked.row_numbers
        from codes inner join ranked using (source, reason_code)
        where ranked.k <= {TOP_REASONS}
        order by codes.source, codes.rank, ranked.k
        """
    ).fetchall()
    out: dict[tuple[str, str], Reason] = {}
    for source, code, code_n, n_distinct, reason, n, numbers in rows:
        r = out.setdefault((source, code), Reason(code, int(code_n), n_distinct=n_distinct))
        r.examples.append((reason, int(n)))
        if numbers is not None:
            r.rows[reason] = [int(x) for x in numbers]
    return [(source, r) for (source, _), r in out.items()]


def summarise_inputs(db_path: str | Path) -> list[FileCounts]:
    """read_input_counts on the warehouse at ``db_path`` (read-only)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return read_input_counts(con)
    finally:
        con.close()


def format_summary(files: list[FileCounts], late: bool = True) -> str:
    """The per-file summary: one line per file given, each reason code with its count,
    examples and fix; each late-row warning unless ``late`` is False (the report
    shows them apart, in bold)."""
    given = [f for f in files if f.rows_read > 0 or f.source_file]
    what = "relations" if given and all(f.is_relation for f in given) else "files"
    lines = [f"input {what} (rows read = accepted + rejected):"]
    for f in given:
        gate = f": {'FAILED' if f.fails else 'warning'}, {f.gate}" if f.gate else ""
        lines.append(f"  {f.name}: {f.counts()}{gate}")
        if late and f.late_warning:
            lines.append(f"    {f.late_warning}")
        for r in f.reasons:
            lines.append(f"    {r.describe()}")
            lines.append(f"      fix: {f.fix(r)}")
    empty = [f for f in files if f not in given]
    if what != "relations":
        whys = [("no rows (absent or header only)", empty)]
    else:
        # on the relation route a kind is empty (listed in the var: a row of
        # stg_inputs__relation_counts) or not configured (not listed), not "absent"
        whys = [
            ("no rows (the relation is empty)", [f for f in empty if f.listed]),
            (
                "not configured (not in judge_bias_input_relations)",
                [f for f in empty if not f.listed],
            ),
        ]
    for why, kinds in whys:
        if kinds:
            lines.append(f"  {why}: {', '.join(f.source for f in kinds)}")
    return "\n".join(lines)


def gate_failures(files: list[FileCounts]) -> list[str]:
    """One line per file that fails the gates, most rows lost first: the file, what
    is wrong, the top reason and its fix."""
    failing = sorted((f for f in files if f.fails), key=lambda f: -f.rows_rejected)
    return [f"{f.name}: {f.gate}; {f.top_reason()}" for f in failing]


def input_note(con: duckdb.DuckDBPyConnection, source: str) -> str | None:
    """Why a mart fed by ``source`` is empty, in the report's words: the file is
    absent or has no rows, or its rows were all rejected (None when neither)."""
    match = [f for f in read_input_counts(con) if f.source == source]
    if not match:
        return None
    f = match[0]
    if f.rows_read == 0:
        return f"no {source} input"
    if f.all_rejected:
        return f"{f.rows_read:,} {source} rows read, all rejected; {f.top_reason()}"
    return None
