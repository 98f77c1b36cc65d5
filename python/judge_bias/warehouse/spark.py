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
builds and, with --export, hands each built table over to the second (DuckDB)
stage as Parquet files (export_tables: Spark's own files, listed in
DIR/<i>/tables.json); --export-views writes the views out too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

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


def stop_session(spark: Any) -> None:
    """Stop the session and end its JVM. ``SparkSession.stop`` leaves the JVM that
    pyspark launched running until this process exits (1-2 GB); a long-lived
    process (a test worker) that starts another Spark process after it would hold
    both. The JVM exits when its stdin closes (PythonGatewayServer); the next
    session in this process launches a new one."""
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc is not None:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except Exception:  # noqa: BLE001  (a JVM that ignores EOF is killed)
            proc.kill()
            proc.wait()


def build_spark(
    data_dirs: list[Path],
    spark_dir: Path,
    select: tuple[str, ...] | None = None,
    export: Path | None = None,
    export_views: bool = False,
) -> int:
    """Load each data folder and build ``select`` on it on Spark (the first into
    schema judge_bias, the next into judge_bias_2, ...), in one Spark session;
    ``select`` None is every model the route can build (spark_buildable). With
    ``export``, the hand-over of folder i (1, 2, ...) in export/<i>/
    (export_tables; views too with ``export_views``). 0 when every dbt build
    succeeded."""
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
                # dbt_project.yml sets indirect_selection: cautious (a test runs
                # only when every model it reads is selected)
                "build", "--target", "spark", "--select", *select,
                "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
                "--target-path", str(spark_dir / "dbt_target"),
            ]  # fmt: skip
            if not dbtRunner().invoke(args).success:
                return 1
            if export is not None:
                tables = [*(f"base_inputs__{k}" for k in counts), *select]
                export_tables(spark, schema, tables, export / str(number), export_views)
        return 0
    finally:
        stop_session(spark)


def write_parquet(frame: Any, path: Path) -> None:
    """One table as a Parquet folder: Spark's own partitions (one file each, written
    in parallel), or one file when the table is small or empty (an empty table still
    gets a file, so its columns are known to the reader)."""
    if frame.rdd.getNumPartitions() > 1 and frame.limit(SMALL_TABLE + 1).count() <= SMALL_TABLE:
        frame = frame.coalesce(1)
    frame.write.mode("overwrite").parquet(str(path))


def export_tables(
    spark: Any, schema: str, names: list[str], out: Path, views: bool = False
) -> dict[str, list[str]]:
    """The hand-over to the DuckDB stage: for each table of ``names`` in ``schema``,
    the Parquet files that hold it, in out/tables.json ({table: [file, ...]}), and
    every name, one per line, in out/tables.txt. A table Spark stored as Parquet
    (a dbt table or a loader's) is handed over as its own files, no copy: Spark
    wrote them once already. Anything else is written to out/<table>/ (write_parquet).
    A view is left out (the DuckDB stage creates it again over the tables, for
    nothing: reading it would re-run its query on Spark here) unless ``views``,
    then it is written out too (the tests compare views engine against engine)."""
    files: dict[str, list[str]] = {}
    for name in names:
        table = f"{schema}.{name}"
        info = {
            r.col_name: r.data_type for r in spark.sql(f"describe table extended {table}").collect()
        }
        if info.get("Type") == "VIEW" and not views:
            continue
        own = spark.table(table).inputFiles() if info.get("Provider") == "parquet" else []
        if own and all(f.startswith("file:") for f in own):
            files[name] = sorted(unquote(urlparse(f).path) for f in own)
        else:
            write_parquet(spark.table(table), out / name)
            files[name] = sorted(str(f) for f in (out / name).glob("*.parquet"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.json").write_text(json.dumps(files, indent=1) + "\n")
    (out / "tables.txt").write_text("\n".join(names) + "\n")
    return files


def exported_files(out: Path) -> dict[str, list[str]]:
    """What export_tables handed over in ``out``: {table: [Parquet file, ...]}."""
    files: dict[str, list[str]] = json.loads((out / "tables.json").read_text())
    return files


def parquet_sql(files: list[str]) -> str:
    """A DuckDB `read_parquet([...])` call over these files."""
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    return f"read_parquet([{quoted}])"


def attach_export(db: Path, export: Path) -> list[str]:
    """The second stage's inputs: a view in ``db``'s main schema over each table
    handed over in ``export`` (export_tables), replacing any table or view of that
    name. Views, not copies: DuckDB reads a row-level table only when a model of
    the second stage does, and the BI snapshot copies the marts it publishes.
    Returns the table names."""
    import duckdb

    files = exported_files(export)
    con = duckdb.connect(str(db))
    try:
        kinds = dict(
            con.execute(
                "select table_name, table_type from information_schema.tables "
                "where table_schema = 'main'"
            ).fetchall()
        )
        for table, parts in sorted(files.items()):
            if kinds.get(table) == "BASE TABLE":
                con.execute(f'drop table main."{table}"')
            con.execute(
                f'create or replace view main."{table}" as select * from {parquet_sql(parts)}'
            )
    finally:
        con.close()
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judge_bias.warehouse.spark")
    parser.add_argument("--data", type=Path, action="append", help="repeatable; default demo")
    parser.add_argument("--spark-dir", type=Path, default=PROJECT_DIR / "target" / "spark")
    parser.add_argument("--export", type=Path, default=None)
    parser.add_argument(
        "--export-views", action="store_true", help="write the views out too (for comparisons)"
    )
    parser.add_argument(
        "--list", action="store_true", help="print the models the route builds; build nothing"
    )
    args = parser.parse_args(argv)
    if args.list:
        target = args.spark_dir.resolve() / "dbt_target"
        print("\n".join(spark_buildable(parse_spark_manifest(target))))
        return 0
    data = [d.resolve() for d in args.data or [PROJECT_DIR / "data" / "demo"]]
    return build_spark(data, args.spark_dir, None, args.export, args.export_views)


if __name__ == "__main__":
    sys.exit(main())
