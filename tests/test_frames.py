"""warehouse.frames: what dbt.ref() returns (a DuckDB relation here, a Spark
DataFrame on Databricks) as pandas, counted and made distinct by its own engine."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from judge_bias.warehouse.frames import count_rows, distinct_keys, rows_where_in, to_pandas

FRAME = pd.DataFrame({"judge": ["a", "b", "a"], "n": [1, 2, 3]})


class FakeCondition:
    def __init__(self, column: str, values: list) -> None:
        self.column, self.values = column, values


class FakeColumn:
    """A Spark Column's isin (the condition it makes is read by the fake's filter)."""

    def __init__(self, column: str) -> None:
        self.column = column

    def isin(self, values: list) -> FakeCondition:
        return FakeCondition(self.column, list(values))


class FakeSparkDataFrame:
    """The part of pyspark.sql.DataFrame the helper may use; it has no .df()."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.calls: list[str] = []

    def toPandas(self) -> pd.DataFrame:  # noqa: N802 (Spark's name)
        self.calls.append("toPandas")
        return self.frame.copy()

    def count(self) -> int:
        self.calls.append("count")
        return len(self.frame)

    def selectExpr(self, *exprs: str) -> FakeSparkDataFrame:  # noqa: N802
        self.calls.append(f"selectExpr{exprs}")
        con = duckdb.connect()
        con.register("t", self.frame)
        return FakeSparkDataFrame(con.sql(f"select {', '.join(exprs)} from t").df())

    def __getitem__(self, column: str) -> FakeColumn:
        return FakeColumn(column)

    def filter(self, condition: FakeCondition) -> FakeSparkDataFrame:
        self.calls.append("filter")
        kept = self.frame[self.frame[condition.column].isin(condition.values)]
        return FakeSparkDataFrame(kept.reset_index(drop=True))

    def distinct(self) -> FakeSparkDataFrame:
        self.calls.append("distinct")
        return FakeSparkDataFrame(self.frame.drop_duplicates().reset_index(drop=True))


class FakeDuckDBRelation:
    """A DuckDB relation's .df() and .aggregate(); no toPandas."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.relation = duckdb.connect().from_df(frame)

    def df(self) -> pd.DataFrame:
        return self.relation.df()

    def aggregate(self, expr: str):
        return self.relation.aggregate(expr)


def test_spark_dataframe_goes_through_to_pandas_and_count() -> None:
    fake = FakeSparkDataFrame(FRAME)
    pd.testing.assert_frame_equal(to_pandas(fake), FRAME)
    assert count_rows(fake) == 3
    keys = distinct_keys(fake, "judge, 'all' as opponent").sort_values("judge")
    assert keys.to_dict("list") == {"judge": ["a", "b"], "opponent": ["all", "all"]}
    assert fake.calls[:2] == ["toPandas", "count"]
    assert fake.calls[2] == "selectExpr('judge', \"'all' as opponent\")"


@pytest.mark.parametrize("make", [FakeDuckDBRelation, lambda f: duckdb.connect().from_df(f)])
def test_duckdb_relation_goes_through_df_and_aggregate(make) -> None:
    relation = make(FRAME)
    pd.testing.assert_frame_equal(to_pandas(relation), FRAME)
    assert count_rows(relation) == 3
    if not isinstance(relation, FakeDuckDBRelation):
        keys = distinct_keys(relation, "judge, 'all' as opponent").sort_values("judge")
        assert keys.to_dict("list") == {"judge": ["a", "b"], "opponent": ["all", "all"]}


def test_pandas_passes_through_and_anything_else_is_refused() -> None:
    assert to_pandas(FRAME) is FRAME and count_rows(FRAME) == 3
    with pytest.raises(TypeError, match="Spark DataFrame"):
        to_pandas([1, 2])
    with pytest.raises(TypeError, match="count the rows of a list"):
        count_rows([1, 2])


def test_rows_where_in_filters_in_the_engine_with_quoted_values() -> None:
    frame = pd.DataFrame({"unit": ["a", "b's", "c", "b's"], "n": [1, 2, 3, 4]})
    want = frame[frame["unit"].isin(["b's", "c"])].reset_index(drop=True)
    relation = duckdb.connect().from_df(frame)
    for source in (frame, relation):
        got = rows_where_in(source, "unit", ["b's", "c"]).sort_values("n").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)
        assert rows_where_in(source, "unit", []).empty
    fake = FakeSparkDataFrame(frame)
    got = rows_where_in(fake, "unit", ["b's", "c"]).sort_values("n").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    assert fake.calls == ["filter"]  # filtered by Spark, then only those rows pulled
