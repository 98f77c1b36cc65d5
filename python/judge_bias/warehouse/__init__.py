"""Running the warehouse: the build, its validation, its record and its published snapshot.

- ``build``: ``judge-bias build`` (dbt build, atomic publish, exit codes, summaries).
- ``dbt_parse``: dbt's command line for the build, its parse reused by a new warehouse;
  the build's two phases in one dbt process.
- ``dbt_child``: dbt as a child process: its output, its failure in one line, the phases' handshake.
- ``dbt_vars``: ``judge-bias build --vars``, read as dbt reads them, for dbt and the pre-flight.
- ``plain_dbt``: ``judge-bias validate --publish``, the end of a build for a plain dbt build.
- ``expectations``: the Great Expectations suites (what they check on the input files
  and the marts, registered by name: ``suites()``), and the reason codes they check.
- ``validation``: the suites run (``validate``): each table read from the DuckDB file
  (read-only, the columns a suite needs, a seeded sample over MAX_VALIDATED_ROWS, the
  last load's scope) and validated; critical failures fail the run, warnings are
  reported (empty-by-design notes, failing examples).
- ``provenance``: the build and validation records and the warehouse status.
- ``snapshot``: the BI snapshot (warehouse/bi.duckdb) published only after validation.
- ``locks``: the DuckDB file lock, named when another process holds it.
"""

__all__ = [
    "build",
    "dbt_child",
    "dbt_parse",
    "dbt_vars",
    "expectations",
    "locks",
    "plain_dbt",
    "provenance",
    "snapshot",
    "validation",
]
