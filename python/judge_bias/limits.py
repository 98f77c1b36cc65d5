"""Resource limits of the Python steps: one memory budget and two time caps,
checked before a fit.

Every Python step that holds data in memory (a fit's p x p matrices, a table of
distinct rows, rows pulled into pandas, a bootstrap) estimates its size first
and compares it with the budget (dbt var ``memory_budget``, default ``2GB``,
the same bound DuckDB has). Fits whose time grows fast with their size are
capped as well: an analysis runs at most ``max_fits`` fits (one per slice), and
an ordered logit at most ``max_ordinal_params`` parameters (its numerical
Hessian costs params^2 likelihood evaluations). A step over a limit is skipped
with a note that says why and how to raise the limit, never killed by the
kernel and never left running for an hour.

The size formulas live here too, next to the budget they are compared with
(docs/resources.md lists them).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judge_bias.errors import SettingError
from judge_bias.settings import is_unset

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MEMORY_BUDGET = "2GB"
DEFAULT_MAX_FITS = 200
DEFAULT_MAX_ORDINAL_PARAMS = 200
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip
FLOAT = 8  # bytes of a float64
# p x p float matrices an OLS fit holds at once (X'X, its inverse, the meat, the
# covariance, the sparse product before it is made dense, temporaries of the solves)
OLS_SQUARE_MATRICES = 10
# bytes per stats row of an OLS fit: 31 moments read, and the (rows, 3, 3) arrays
# of z z', the HC0 meat's weights and their per-cell sums, with temporaries
OLS_BYTES_PER_STATS_ROW = 31 * FLOAT + 6 * 9 * FLOAT
# bytes per value of a table pulled into pandas (text held as Python objects)
PANDAS_BYTES_PER_VALUE = 80
# bytes per row of the bias statistics pulled by compact_frame (12 keys and 31 sums:
# the Arrow copy with its text, then the DataFrame with categorical keys)
STATS_BYTES_PER_ROW = 1_000


def parse_size(text: str | int | float) -> int:
    """Bytes in a size such as ``2GB``, ``1.5GB``, ``512 MiB`` or a plain number of
    bytes; a unit ends in B (``1.5G`` is refused as a SettingError, as DuckDB's
    memory limit refuses it: duckdb_memory_limit)."""
    if isinstance(text, int | float):
        return int(text)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*((?:[KMGT]I?)?B)?\s*", str(text), flags=re.IGNORECASE)
    if not m:
        raise SettingError(f"memory_budget {text!r}: write a size such as 2GB or 512MiB")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").upper()])


# the environment variable that sets DuckDB's memory_limit for a build
# (profiles.yml), its default, and the least it may be (a few hundred MB: below it
# DuckDB fails on the first large join instead of spilling)
DUCKDB_MEMORY_ENV = "JUDGE_BIAS_DUCKDB_MEMORY"
DEFAULT_DUCKDB_MEMORY = "1.5GB"  # profiles.yml's default too
MIN_DUCKDB_MEMORY = 256 * 10**6


def duckdb_memory_limit() -> str:
    """DuckDB's memory_limit of a build: JUDGE_BIAS_DUCKDB_MEMORY (a size such as
    3GB) or 1.5GB; a value that is not a size, or is under 256MB, is a SettingError
    naming the variable (DuckDB's own parse error names neither)."""
    text = os.environ.get(DUCKDB_MEMORY_ENV, "").strip() or DEFAULT_DUCKDB_MEMORY
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]I?B)", text, flags=re.IGNORECASE)
    if not m or float(m.group(1)) * _UNITS[m.group(2).upper()] < MIN_DUCKDB_MEMORY:
        raise SettingError(
            f"{DUCKDB_MEMORY_ENV}={text!r}: DuckDB's memory limit must be a size of at "
            f"least 256MB, such as 1.5GB or 3000MB (unset: {DEFAULT_DUCKDB_MEMORY})"
        )
    return text


# the environment variable that sets DuckDB's threads for a build's dbt commands
# (macros/last_run.sql duckdb_threads; judge-bias build's second phase: 1 unless set)
DUCKDB_THREADS_ENV = "JUDGE_BIAS_DUCKDB_THREADS"


def duckdb_threads() -> str | None:
    """JUDGE_BIAS_DUCKDB_THREADS as given (a positive integer), None when unset; any
    other value is a SettingError naming the variable (the dbt hook refuses it too,
    in a compilation error)."""
    text = os.environ.get(DUCKDB_THREADS_ENV, "").strip()
    if not text:
        return None
    if not (text.isdecimal() and text.isascii() and int(text) > 0):
        raise SettingError(
            f"{DUCKDB_THREADS_ENV}={text!r}: DuckDB's threads must be a positive integer "
            "(unset: every core, and one in judge-bias build's second phase)"
        )
    return text


def _size(n_bytes: float) -> str:
    """A size for a note: 1.5 GB, 980 MB, 64 kB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes / 1e3:.0f} kB"


def _raise_to(needed_bytes: float) -> str:
    """The memory_budget to suggest: half as much again as needed, rounded up."""
    target = needed_bytes * 1.5
    if target >= 1e9:
        return f"{math.ceil(target / 1e9)}GB"
    return f"{math.ceil(target / 1e6)}MB"


def _count(value: object, default: int, name: str) -> int:
    if is_unset(value):
        return default
    number = int(float(value))  # type: ignore[arg-type]
    if number < 1:
        raise SettingError(f"{name} must be a whole number >= 1, not {value!r}")
    return number


@dataclass(frozen=True)
class Budget:
    """The memory a Python step may use, in bytes, and the time caps."""

    bytes: int = parse_size(DEFAULT_MEMORY_BUDGET)
    max_fits: int = DEFAULT_MAX_FITS
    max_ordinal_params: int = DEFAULT_MAX_ORDINAL_PARAMS

    @classmethod
    def from_config(cls, value: object, max_fits: object = None, max_ordinal: object = None):
        """From the dbt vars (memory_budget, max_fits, max_ordinal_params); empty
        values give the defaults above."""
        return cls(
            parse_size(DEFAULT_MEMORY_BUDGET if is_unset(value) else value),  # type: ignore[arg-type]
            _count(max_fits, DEFAULT_MAX_FITS, "max_fits"),
            _count(max_ordinal, DEFAULT_MAX_ORDINAL_PARAMS, "max_ordinal_params"),
        )

    @classmethod
    def from_dbt(cls, config_get: Callable[[str], object]) -> Budget:
        """From a dbt Python model's ``dbt.config.get``."""
        return cls.from_config(
            config_get("memory_budget"), config_get("max_fits"), config_get("max_ordinal_params")
        )

    def over(self, what: str, needed_bytes: float) -> str | None:
        """None when ``needed_bytes`` fits; else the note to store with the skipped fit."""
        if needed_bytes <= self.bytes:
            return None
        return (
            f"skipped: {what} would need about {_size(needed_bytes)}, over the memory "
            f"budget of {_size(self.bytes)}; raise it with --vars "
            f"'{{memory_budget: {_raise_to(needed_bytes)}}}' if the machine has it"
        )

    # --- OLS (judge_bias.bias.sufficient) ------------------------------------------------
    @property
    def max_ols_params(self) -> int:
        """The most parameters whose p x p matrices fit in the budget."""
        return math.isqrt(self.bytes // (FLOAT * OLS_SQUARE_MATRICES))

    def ols(self, n_stats_rows: int, n_params: int, extra_bytes: float = 0.0) -> str | None:
        """The note of an OLS fit over the parameter cap or the budget, else None.
        ``extra_bytes``: what the standard-error type adds (cluster scores, HC3)."""
        if n_params > self.max_ols_params:
            needed: float = FLOAT * OLS_SQUARE_MATRICES * n_params**2
            return (
                f"skipped: {n_params:,} parameters, over the {self.max_ols_params:,} whose "
                f"p x p matrices fit in the memory budget of {_size(self.bytes)}; raise it "
                f"with --vars '{{memory_budget: {_raise_to(needed)}}}' if the machine has it "
                "(the fit's time grows as parameters cubed)"
            )
        needed = (
            n_stats_rows * OLS_BYTES_PER_STATS_ROW
            + FLOAT * OLS_SQUARE_MATRICES * n_params**2
            + extra_bytes
        )
        return self.over(f"the OLS fit ({n_params:,} parameters)", needed)

    # --- analyses with one fit per slice ------------------------------------------
    def fits(self, analysis: str, n_fits: int, what: str) -> str | None:
        """The note of an analysis that would run more than max_fits fits, else None."""
        if n_fits <= self.max_fits:
            return None
        return (
            f"skipped: {analysis} would run {n_fits:,} fits (one per {what}), over the limit "
            f"of {self.max_fits:,} fits per analysis; raise it with --vars "
            f"'{{max_fits: {n_fits}}}' (each fit reads the statistics again)"
        )

    # --- ordered logit (judge_bias.bias.ordinal) ---------------------------------------
    def ordinal(self, n_distinct_rows: int, n_terms: int, n_levels: int) -> str | None:
        """The note of an ordered logit over the parameter cap or the budget, else None.
        Parameters: the terms and n_levels - 1 thresholds; memory: the distinct rows'
        design and per-level probabilities (statsmodels holds several copies) and the
        params x params Hessian."""
        params = n_terms + n_levels - 1
        if params > self.max_ordinal_params:
            return (
                f"skipped: {params:,} parameters ({n_terms} terms and {n_levels - 1:,} "
                f"thresholds between {n_levels:,} score levels), over the limit of "
                f"{self.max_ordinal_params:,} (the numerical Hessian takes params^2 "
                f"likelihood evaluations); raise it with --vars '{{max_ordinal_params: "
                f"{params}}}', or merge levels in rating_scales"
            )
        needed = FLOAT * (6 * n_distinct_rows * (n_terms + n_levels) + 4 * params**2)
        return self.over(f"the ordered logit ({params:,} parameters)", needed)

    # --- tables pulled into pandas, bootstraps -------------------------------------
    def rows(self, what: str, n_rows: int, bytes_per_row: float) -> str | None:
        """The note of a step that would pull ``n_rows`` rows into pandas (the step's
        own work is assumed to need about as much again)."""
        return self.over(what, 2 * n_rows * bytes_per_row)

    def batch(self, n_units: int, arrays: int = 4) -> int:
        """How many bootstrap replicates to draw at once so that ``arrays`` float
        arrays of replicates x n_units take at most a quarter of the budget."""
        return max(1, self.bytes // (4 * arrays * FLOAT * max(n_units, 1)))


def compact_frame(relation) -> pd.DataFrame:
    """A DuckDB relation as a DataFrame whose text columns are categoricals (through
    Arrow, dictionary-encoded): a few bytes per key instead of a Python string per
    value, about a fifth of ``relation.df()``'s peak on the bias statistics."""
    import pyarrow as pa

    table = relation.to_arrow_table()
    columns = {
        name: (
            col.dictionary_encode()
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
            else col
        )
        for name, col in zip(table.column_names, table.columns, strict=True)
    }
    del table
    return pa.table(columns).to_pandas(self_destruct=True, split_blocks=True)


def read_rows(
    relation,
    budget: Budget,
    what: str,
    bytes_per_row: float,
    read: Callable[[Any], pd.DataFrame] | None = None,
):
    """(DataFrame, None) of a relation whose rows fit the budget, else (None, note):
    the rows are counted in the database before any is pulled into pandas.
    ``read``: how the rows are pulled (default ``to_pandas``; ``bytes_per_row`` is
    what a row costs the way it is read)."""
    from judge_bias.warehouse.frames import count_rows, to_pandas

    n_rows = count_rows(relation)
    note = budget.rows(f"reading {n_rows:,} {what}", n_rows, bytes_per_row)
    return (None, note) if note else ((read or to_pandas)(relation), None)


def within_budget(
    relation,
    budget: Budget,
    what: str,
    bytes_per_row: float,
    compute: Callable[[pd.DataFrame], pd.DataFrame],
    keys: str,
    schema: dict[str, str],
    keys_relation=None,
    read: Callable[[Any], pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """``compute`` on the relation's rows when they fit the budget; else the mart's
    rows without statistics: one per distinct ``keys`` (a select list, computed in
    the database, on ``keys_relation`` when given), typed by ``schema``, with the
    note in ``notes``. ``read``: how the rows are pulled (``read_rows``)."""
    from judge_bias.warehouse.frames import distinct_keys

    frame, note = read_rows(relation, budget, what, bytes_per_row, read)
    if note is None:
        return compute(frame)
    keyed = relation if keys_relation is None else keys_relation
    skipped = distinct_keys(keyed, keys).assign(notes=note)
    return skipped.reindex(columns=list(schema)).astype(schema)
