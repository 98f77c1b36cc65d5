"""Inputs: the input contract and everything that reads or writes input files.

- ``contract``: the eight input kinds, their columns and keys (``KINDS``), the one vocabulary.
- ``csv_records``: the RFC 4180 reader (record numbers, bad records kept with their text).
- ``encoding``: what a file that is not UTF-8 CSV looks like (UTF-16, gzip, zip, binary).
- ``loading``: the dbt loaders' entry point (``load_input``) and ``check_inputs`` warnings.
- ``relations``: the relation route (``load_kind``): input kinds read from the dbt source
  ``judge_bias_inputs`` (tables, views, attached databases, globs) as the files are read.
- ``summary``: the per-file read/accepted/rejected summary printed after a build.
- ``writer``: the one CSV writer of contract files (importers and the simulator).
- ``gold``: human labels kept in a separate spreadsheet, joined by id after an import
  (``judge-bias import ... --gold``).
- ``loads``: incremental inputs: each build's data folder one load appended to the
  warehouse (docs/incremental.md).
- ``spark_loading``: the Spark route's loaders of the input files (docs/spark.md).
- ``importers``: ``judge-bias import <format>`` for the public evaluation-log formats.
"""

__all__ = [
    "contract",
    "csv_records",
    "encoding",
    "gold",
    "importers",
    "loading",
    "loads",
    "relations",
    "spark_loading",
    "summary",
    "writer",
]
