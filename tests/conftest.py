"""Shared fixtures: built warehouses on the demo data and on broken inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from judge_bias.build import DEFAULT_DATA, PROJECT_DIR, BuildResult, build

DEMO_DIR = PROJECT_DIR / DEFAULT_DATA
SHARED_DATA = PROJECT_DIR.parent / "shared" / "data"


def query(db: Path, sql: str) -> pd.DataFrame:
    """Run one query on a built warehouse, read-only."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The warehouse built on the embedded demo data (dbt build + dbt tests + GE)."""
    return build(DEMO_DIR, tmp_path_factory.mktemp("demo") / "demo.duckdb")


@pytest.fixture()
def demo_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo input directory."""
    target = tmp_path / "data"
    shutil.copytree(DEMO_DIR, target)
    return target
