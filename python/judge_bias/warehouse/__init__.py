"""Running the warehouse: the build, its validation, its record and its published snapshot.

- ``build``: ``judge-bias build`` (dbt build, atomic publish, exit codes, summaries).
- ``incremental``: ``judge-bias build --incremental``: a folder appended as one load, the
  warehouse copied aside and put back when the load fails (its rejected rows kept).
- ``atomic``: files written whole or not at all (a temporary file renamed into place).
- ``dbt_parse``: dbt's command line for the build, its parse reused by a new warehouse;
  the build's two phases in one dbt process.
- ``dbt_child``: dbt as a child process: its output, its failure in one line, the phases' handshake.
- ``dbt_vars``: ``judge-bias build --vars``, read as dbt reads them, for dbt and the pre-flight.
- ``plain_dbt``: ``judge-bias validate --publish``, the end of a build for a plain dbt build.
- ``spark``: the Spark route's first stage (load the inputs with Spark, then dbt on Spark).
- ``frames``: what a dbt Python model's ``dbt.ref()`` returns, as pandas, on either engine.
- ``checks``: the dbt project's data checks, one ``model_checks`` node per model and
  severity, listed from a manifest and read back per rule.
- ``floats``: the tolerance with which the checks compare computed doubles.
- ``gx``: Great Expectations, imported so that pyspark cannot end the process.
- ``expectations``: the Great Expectations suites (what they check on the input files
  and the marts, registered by name: ``suites()``), and the reason codes they check.
- ``validation``: the suites run (``validate``): each table read from the DuckDB file
  (read-only, the columns a suite needs, a seeded sample over MAX_VALIDATED_ROWS, the
  last load's scope) and validated; critical failures fail the run, warnings are
  reported (empty-by-design notes, failing examples).
- ``glm_fit_status``: the GLM fits that failed or warn (glm_fits), named for the build's
  summary and the report.
- ``provenance``: the build and validation records and the warehouse status.
- ``snapshot``: the BI snapshot (warehouse/bi.duckdb) published only after validation.
- ``locks``: the DuckDB file lock, named when another process holds it; a write-ahead
  log DuckDB cannot replay onto the file, set aside by the build.
"""

__all__ = [
    "atomic",
    "build",
    "checks",
    "dbt_child",
    "dbt_parse",
    "dbt_vars",
    "expectations",
    "floats",
    "frames",
    "glm_fit_status",
    "gx",
    "incremental",
    "locks",
    "plain_dbt",
    "provenance",
    "snapshot",
    "spark",
    "validation",
]
