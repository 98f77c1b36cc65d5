"""The Spark route's first stage: load the inputs with Spark, then `dbt build --target spark`.

One process, one local Spark session (docs/spark.md): the session is created
here with the settings of the `spark` target in profiles.yml (SESSION_CONFIG,
kept equal to it by tests/test_spark.py), the input files are written into the
base_inputs__<kind> tables by judge_bias.inputs.spark_loading, then dbt runs
in the same process, where dbt-spark's session method picks up this session
(`SparkSession.builder.getOrCreate()`). Running the loader and dbt in one JVM
is what lets them share the embedded (single-JVM) Derby metastore. The session
is stopped at the end.

What it builds is computed from the dbt manifest (spark_buildable): every SQL
model and seed with no Python model upstream, so a new SQL model joins the
route by itself. `python -m judge_bias.warehouse.spark --list` prints them.

`python -m judge_bias.warehouse.spark --data DIR [--data DIR2] [--export DIR]`
builds and, with --export, writes each built table as Parquet (DIR/<i>/<table>/,
their names in DIR/<i>/tables.txt): the hand-over format of the second (DuckDB)
stage the issue plans.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from judge_bias.inputs.spark_loading import load_inputs

PROJECT_DIR = Path(__file__).resolve().parents[3]
# the spark target's schema in profiles.yml, JUDGE_BIAS_SPARK_SCHEMA overrides it
SCHEMA = "judge_bias"
# at most this many rows: written as one Parquet file
SMALL_TABLE = 100_000
# The node types the first stage builds; everything else (Python models and what
# reads them) is for the DuckDB stage or a Databricks cluster (docs/spark.md).
BUILDABLE_TYPES = ("model", "seed")


def spark_buildable(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The models and seeds the Spark route builds, by name (sorted), from a dbt
    manifest (manifest.json as a dict) parsed for the spark target: every enabled
    SQL model or seed whose ancestors are all SQL models, seeds or sources (on
    Spark the loaders' tables are the source spark_inputs). A Python model and
    everything downstream of one are left out; disabled nodes are not in
    manifest["nodes"] (the loaders are disabled on Spark)."""
    nodes = manifest["nodes"]
    sources = manifest.get("sources", {})
    known: dict[str, bool] = {}

    def buildable(unique_id: str) -> bool:
        if unique_id in known:
            return known[unique_id]
        node = nodes.get(unique_id)
        if node is None:
            ok = unique_id in sources
        else:
            kind = node["resource_type"]
            ok = kind in BUILDABLE_TYPES and (kind == "seed" or node.get("language") == "sql")
            known[unique_id] = ok  # (a DAG: no cycle reaches this node again)
            ok = ok and all(buildable(p) for p in node.get("depends_on", {}).get("nodes", []))
        known[unique_id] = ok
        return ok

    return tuple(
        sorted(
            node["name"]
            for unique_id, node in nodes.items()
            if node["resource_type"] in BUILDABLE_TYPES and buildable(unique_id)
        )
    )


def parse_spark_manifest(target_path: Path) -> dict[str, Any]:
    """`dbt parse --target spark` (no Spark session needed) and its manifest.json."""
    from dbt.cli.main import dbtRunner

    args = [
        "parse", "--target", "spark",
        "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
        "--target-path", str(target_path),
    ]  # fmt: skip
    result = dbtRunner().invoke(args)
    if not result.success:
        raise RuntimeError(f"dbt parse --target spark failed: {result.exception}")
    return json.loads((target_path / "manifest.json").read_text(encoding="utf-8"))


def session_config(spark_dir: Path) -> dict[str, str]:
    """The `spark` target's server_side_parameters with JUDGE_BIAS_SPARK_DIR = spark_dir."""
    return {
        "spark.master": os.environ.get("JUDGE_BIAS_SPARK_MASTER", "local[*]"),
        "spark.driver.memory": os.environ.get("JUDGE_BIAS_SPARK_MEMORY", "2g"),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": f"{spark_dir}/warehouse",
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={spark_dir}/metastore_db;create=true"
        ),
        # derby.log there too, not in the working directory
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={spark_dir}",
    }


def start_session(spark_dir: Path) -> Any:
    """A local Spark session with the `spark` target's settings (Java needed)."""
    if shutil.which("java") is None:
        raise RuntimeError("the Spark route needs Java 17: `java` is not on PATH (make spark)")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("judge-bias").enableHiveSupport()
    for key, value in session_config(spark_dir).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def build_spark(
    data_dirs: list[Path],
    spark_dir: Path,
    select: tuple[str, ...] | None = None,
    export: Path | None = None,
) -> int:
    """Load each data folder and build ``select`` on it on Spark (the first into
    schema judge_bias, the next into judge_bias_2, ...), in one Spark session;
    ``select`` None is every model the route can build (spark_buildable). With
    ``export``, write every table built as Parquet to export/<i>/<table>/
    (i = 1, 2, ...) and their names, one per line, to export/<i>/tables.txt.
    0 when every dbt build succeeded."""
    from dbt.cli.main import dbtRunner

    spark_dir = spark_dir.resolve()
    spark_dir.mkdir(parents=True, exist_ok=True)
    os.environ["JUDGE_BIAS_SPARK_DIR"] = str(spark_dir)
    if select is None:
        select = spark_buildable(parse_spark_manifest(spark_dir / "dbt_target"))
    spark = start_session(spark_dir)
    try:
        for number, data_dir in enumerate(data_dirs, start=1):
            schema = SCHEMA if number == 1 else f"{SCHEMA}_{number}"
            os.environ["JUDGE_BIAS_SPARK_SCHEMA"] = schema
            counts = load_inputs(spark, data_dir, schema)
            print(f"{data_dir}: loaded " + ", ".join(f"{k} {n}" for k, n in counts.items()))
            args = [
                "build", "--target", "spark", "--select", *select,
                "--indirect-selection", "cautious",
                "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
                "--target-path", str(spark_dir / "dbt_target"),
            ]  # fmt: skip
            if not dbtRunner().invoke(args).success:
                return 1
            if export is not None:
                tables = [*(f"base_inputs__{k}" for k in counts), *select]
                for table in tables:
                    write_parquet(spark.table(f"{schema}.{table}"), export / str(number) / table)
                (export / str(number) / "tables.txt").write_text("\n".join(tables) + "\n")
        return 0
    finally:
        spark.stop()


def write_parquet(frame: Any, path: Path) -> None:
    """One table as a Parquet folder: Spark's own partitions (one file each, written
    in parallel), or one file when the table is small or empty (an empty table still
    gets a file, so its columns are known to the reader)."""
    if frame.rdd.getNumPartitions() > 1 and frame.limit(SMALL_TABLE + 1).count() <= SMALL_TABLE:
        frame = frame.coalesce(1)
    frame.write.mode("overwrite").parquet(str(path))


def attach_export(db: Path, export: Path) -> list[str]:
    """The second stage's inputs: a view in ``db``'s main schema over each Parquet
    table in ``export`` (what the Spark stage built), replacing any table or view of
    that name. Views, not copies: DuckDB reads a row-level table only when a model
    of the second stage does, and the BI snapshot copies the marts it publishes.
    Returns the table names."""
    import duckdb

    tables = sorted(p.name for p in export.iterdir() if p.is_dir())
    con = duckdb.connect(str(db))
    try:
        kinds = dict(
            con.execute(
                "select table_name, table_type from information_schema.tables "
                "where table_schema = 'main'"
            ).fetchall()
        )
        for table in tables:
            if kinds.get(table) == "BASE TABLE":
                con.execute(f'drop table main."{table}"')
            files = str((export / table).resolve() / "*.parquet").replace("'", "''")
            con.execute(
                f"create or replace view main.\"{table}\" as select * from read_parquet('{files}')"
            )
    finally:
        con.close()
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judge_bias.warehouse.spark")
    parser.add_argument("--data", type=Path, action="append", help="repeatable; default demo")
    parser.add_argument("--spark-dir", type=Path, default=PROJECT_DIR / "target" / "spark")
    parser.add_argument("--export", type=Path, default=None)
    parser.add_argument(
        "--list", action="store_true", help="print the models the route builds; build nothing"
    )
    args = parser.parse_args(argv)
    if args.list:
        target = args.spark_dir.resolve() / "dbt_target"
        print("\n".join(spark_buildable(parse_spark_manifest(target))))
        return 0
    data = [d.resolve() for d in args.data or [PROJECT_DIR / "data" / "demo"]]
    return build_spark(data, args.spark_dir, None, args.export)


if __name__ == "__main__":
    sys.exit(main())
