"""macros/run_means.sql (sql17) in int_self_vs_peer_items and int_agreement_prompt_sums:
only the keys whose hash repeats are grouped, the rest pass through. On ratings
where keys repeat over 1-4 runs (the demo, Play Favorites and the 1M folder repeat
none), with null scores, a null in a key column and integer scores, both models
equal the definition before sql17 (every row grouped by the key, runs averaged)
computed in pandas."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from judge_bias.agreement.self_vs_peer import _items
from tests.sql_models import MACROS, render

RUN_KEY = ["judge", "framing", "prompt_id", "model", "dimension"]


def repeated_ratings(seed: int = 17, integer: bool = False) -> pd.DataFrame:
    """fct_judge_ratings' columns the two models read: 4 judges rating the same 4
    models over 2 framings x 10 prompts x 2 dimensions, each key 0-4 runs; about
    15% null judge scores, 10% null human scores, and a null model on a few rows
    (fct_judge_ratings' checks forbid it: a key with a null must still group as
    GROUP BY groups it). integer: the scores are integers 0-4 (a BIGINT column:
    the pass-through rows keep it, the averaged ones are double)."""
    rng = np.random.default_rng(seed)
    names = ["m1", "m2", "m3", "m4"]
    keys = pd.MultiIndex.from_product(
        [names, ["positive", "inverted"], [f"p{i}" for i in range(10)], names, ["d1", "d2"]],
        names=RUN_KEY,
    ).to_frame(index=False)
    runs = rng.choice([0, 1, 1, 1, 2, 3, 4], len(keys))
    rows = keys.loc[keys.index.repeat(runs)].reset_index(drop=True)
    # each key's runs r0, r1, ... (fct_judge_ratings is unique on the key and run)
    rows["run_id"] = "r" + rows.groupby(RUN_KEY, dropna=False).cumcount().astype(str)
    n = len(rows)
    rows["model"] = rows["model"].where(rng.random(n) > 0.02, None)
    dtype = "Int64" if integer else "Float64"
    judge = rng.integers(0, 5, n) if integer else rng.random(n)
    human = rng.integers(0, 5, n) if integer else rng.random(n)
    rows["judge_score_norm"] = pd.array(judge, dtype=dtype)
    rows["human_score_norm"] = pd.array(human, dtype=dtype)
    rows.loc[rng.random(n) < 0.15, "judge_score_norm"] = pd.NA
    rows.loc[rng.random(n) < 0.10, "human_score_norm"] = pd.NA
    return rows


def old_prompt_sums(fct: pd.DataFrame) -> pd.DataFrame:
    """int_agreement_prompt_sums as before sql17, in pandas: the positive-frame
    ratings with both scores averaged per completion, then summed per prompt."""
    keep = fct[
        (fct["framing"] == "positive")
        & fct["judge_score_norm"].notna()
        & fct["human_score_norm"].notna()
    ]
    completions = (
        keep.astype({"judge_score_norm": float, "human_score_norm": float})
        .groupby(["judge", "prompt_id", "model", "dimension"], dropna=False)
        .agg(a=("judge_score_norm", "mean"), b=("human_score_norm", "mean"))
        .reset_index()
    )
    completions = completions.assign(
        aa=completions["a"] ** 2, bb=completions["b"] ** 2, ab=completions["a"] * completions["b"]
    )
    return (
        completions.groupby(["judge", "dimension", "prompt_id"], dropna=False)
        .agg(
            n=("a", "size"),
            sum_a=("a", "sum"),
            sum_b=("b", "sum"),
            sum_aa=("aa", "sum"),
            sum_bb=("bb", "sum"),
            sum_ab=("ab", "sum"),
        )
        .reset_index()
    )


def _sql(model: str, fct: pd.DataFrame, **overrides) -> pd.DataFrame:
    con = duckdb.connect()
    con.register("fct_judge_ratings", fct)
    return con.sql(render(model, **overrides)).df()


def _assert_frames_equal(got: pd.DataFrame, want: pd.DataFrame, key: list[str]) -> None:
    got = got.sort_values(key).reset_index(drop=True)
    want = want.sort_values(key).reset_index(drop=True)
    assert len(got) == len(want) > 0
    assert got[key].astype(object).equals(want[key].astype(object))
    for column in got.columns.difference(key):
        np.testing.assert_allclose(
            got[column].to_numpy(float), want[column].to_numpy(float), rtol=0, atol=1e-12
        )


PROMPT_SUMS_KEY = ["judge", "dimension", "prompt_id"]
ITEMS_KEY = ["judge", "framing", "prompt_id", "dimension"]


def assert_prompt_sums_as_before(
    fct: pd.DataFrame, rows: pd.DataFrame | None = None, **overrides
) -> None:
    """int_agreement_prompt_sums of ``fct`` equals the old grouping of ``rows``
    (default ``fct``; the incremental route reads a subset)."""
    got = _sql("int_agreement_prompt_sums", fct, **overrides)
    _assert_frames_equal(got, old_prompt_sums(fct if rows is None else rows), PROMPT_SUMS_KEY)


def assert_items_as_before(
    fct: pd.DataFrame, rows: pd.DataFrame | None = None, **overrides
) -> None:
    """int_self_vs_peer_items of ``fct`` equals the in-memory route (self_vs_peer._items:
    runs averaged by a pandas groupby of every row) on ``rows`` (default ``fct``)."""
    got = _sql("int_self_vs_peer_items", fct, **overrides)
    want = _items((fct if rows is None else rows).astype({"judge_score_norm": float}))
    _assert_frames_equal(got, want, ITEMS_KEY)


def test_ratings_reach_both_branches() -> None:
    """The data repeats some keys (the grouped branch) and not others (the
    pass-through), for each model's filter."""
    fct = repeated_ratings()
    scored = fct[fct["judge_score_norm"].notna()]
    paired = scored[(scored["framing"] == "positive") & scored["human_score_norm"].notna()]
    for rows, key in ((scored, RUN_KEY), (paired, RUN_KEY[:1] + RUN_KEY[2:])):
        runs = rows.groupby(key, dropna=False).size()
        assert (runs == 1).sum() > 100 and (runs > 1).sum() > 100
        assert rows["model"].isna().groupby([rows[k] for k in key], dropna=False).any().sum()


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("integer", [False, True])
def test_prompt_sums_equal_the_old_grouping(integer: bool, collide: bool, monkeypatch) -> None:
    """collide: every key hashes alike (row_key_hash a constant): every key is a
    candidate repeat and the grouping by the key itself still gives the same rows."""
    if collide:
        monkeypatch.setitem(MACROS["duckdb"], "row_key_hash", lambda columns: "0")
    fct = repeated_ratings(integer=integer)
    assert_prompt_sums_as_before(fct)


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("integer", [False, True])
def test_self_vs_peer_items_equal_the_old_grouping(
    integer: bool, collide: bool, monkeypatch
) -> None:
    """Against the in-memory route (self_vs_peer._items: runs averaged by a pandas
    groupby of every row); the rows with a null model give no S, R or G in either."""
    if collide:
        monkeypatch.setitem(MACROS["duckdb"], "row_key_hash", lambda columns: "0")
    fct = repeated_ratings(integer=integer)
    assert_items_as_before(fct)


def one_run(fct: pd.DataFrame) -> pd.DataFrame:
    """The first run of every key: one run among the rows, each key one row."""
    return fct[fct["run_id"] == "r0"].reset_index(drop=True)


def failing_hash(columns: list[str]) -> str:
    """A key hash that fails the query on the rows where it is computed (row by
    row: a constant error() would be folded when the query is planned): the one-run
    route must not hash the keys (its saving: 10M ratings, 3.2 -> 1.5 CPU s)."""
    return f"error(concat('the one-run route hashed the keys ', {columns[0]}))"


def test_one_run_passes_the_rows_through_unhashed(monkeypatch) -> None:
    """With one run among the rows the rows pass through, equal to the old grouping,
    and the keys are never hashed (with several runs the same hash fails the query:
    the route is chosen by the rows' runs, not always)."""
    monkeypatch.setitem(MACROS["duckdb"], "row_key_hash", failing_hash)
    fct = one_run(repeated_ratings())
    assert fct["run_id"].nunique() == 1 and len(fct) > 100
    assert_prompt_sums_as_before(fct)
    assert_items_as_before(fct)
    with pytest.raises(duckdb.Error, match="one-run route hashed"):
        _sql("int_agreement_prompt_sums", repeated_ratings())


def test_one_run_among_the_filtered_rows_only(monkeypatch) -> None:
    """The runs are counted among the rows the model reads (its where): a second run
    only on inverted-frame rows leaves int_agreement_prompt_sums (positive frame) on
    the one-run route (no hash), and its rows still equal the old grouping;
    int_self_vs_peer_items reads both frames, so it groups."""
    fct = one_run(repeated_ratings())
    extra = fct[fct["framing"] == "inverted"].assign(run_id="r1")
    fct = pd.concat([fct, extra], ignore_index=True)
    with monkeypatch.context() as patch:
        patch.setitem(MACROS["duckdb"], "row_key_hash", failing_hash)
        assert_prompt_sums_as_before(fct)
    assert_items_as_before(fct)


def test_a_null_run_beside_another_is_grouped() -> None:
    """A null run_id is a run (count(distinct run_id) alone skips it): ratings of
    run r0 and the same keys again with a null run_id are grouped by the key as
    GROUP BY groups them (the runs averaged), not passed through twice. Outside
    fct_judge_ratings' contract (staging coalesces run_id), cheap to keep."""
    fct = one_run(repeated_ratings())
    again = fct.sample(frac=0.5, random_state=3).assign(run_id=None)
    again["judge_score_norm"] = 1 - again["judge_score_norm"]
    fct = pd.concat([fct, again], ignore_index=True)
    assert_prompt_sums_as_before(fct)
    assert_items_as_before(fct)


def test_incremental_condition_keeps_the_touched_prompts() -> None:
    """The incremental route's where (load_prompt_condition, here the touched
    prompts) is and-ed to each model's filter: the old rows of those prompts."""
    fct = repeated_ratings()
    touched = ["p1", "p4", "p7"]
    incremental = {
        "is_incremental": lambda: True,
        "load_prompt_condition": lambda: f"(prompt_id in {tuple(touched)})",
    }
    rows = fct[fct["prompt_id"].isin(touched)]
    assert_prompt_sums_as_before(fct, rows, **incremental)
    assert_items_as_before(fct, rows, **incremental)


def ppi_ratings(null_runs: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """fct_judge_ratings' columns int_ppi_units reads (3 judges, 2 models of 2
    families, 12 prompts, 2 dimensions, both framings, run '1', some null scores)
    and int_human_scores_aggregated's NA counts; null_runs: a third of the positive
    keys rated again with a null run_id (another judge score, the same human one)."""
    rng = np.random.default_rng(20)
    keys = pd.MultiIndex.from_product(
        [["j1", "j2", "j3"], ["m1", "m2"], [f"p{i}" for i in range(12)], ["d1", "d2"],
         ["positive", "inverted"]],
        names=["judge", "model", "prompt_id", "dimension", "framing"],
    ).to_frame(index=False)  # fmt: skip
    n = len(keys)
    human = pd.Series(rng.integers(0, 5, 48) / 4.0).where(rng.random(48) > 0.3)
    completion = keys.groupby(["model", "prompt_id", "dimension"]).ngroup()
    fct = keys.assign(
        run_id="1",
        judge_score_norm=pd.Series(rng.random(n)).where(rng.random(n) > 0.1),
        human_score_norm=human.to_numpy()[completion],
        judge_family=keys["judge"].map({"j1": "fa", "j2": "fb", "j3": "fa"}),
        model_family=keys["model"].map({"m1": "fa", "m2": "fc"}),
    )
    if null_runs:
        again = fct[fct["framing"] == "positive"].sample(frac=1 / 3, random_state=4)
        again = again.assign(run_id=None, judge_score_norm=rng.random(len(again)))
        fct = pd.concat([fct, again], ignore_index=True)
    completions = fct[["prompt_id", "model", "dimension"]].drop_duplicates()
    na = completions.assign(n_na_labels=rng.integers(0, 2, len(completions)))
    return fct, na


def ppi_units_reference(fct: pd.DataFrame, na: pd.DataFrame) -> pd.DataFrame:
    """int_ppi_units' units in pandas: a judge's unit its runs' mean score (GROUP BY's
    grouping: a null run_id is a run), the panel's the mean of its judges' units;
    the status from the scores and the completions with NA labels."""
    completion = ["model", "prompt_id", "dimension"]
    positive = fct[fct["framing"] == "positive"]
    judges = (
        positive.groupby(["judge", *completion])
        .agg(yhat=("judge_score_norm", "mean"), y=("human_score_norm", "first"))
        .reset_index()
        .assign(is_panel=False)
    )
    panel = (
        judges.groupby(completion)
        .agg(yhat=("yhat", "mean"), y=("y", "first"))
        .reset_index()
        .assign(judge="panel", is_panel=True)
    )
    units = pd.concat([judges, panel], ignore_index=True)
    has_na = units.merge(na, how="left", on=["prompt_id", "model", "dimension"])["n_na_labels"] > 0
    units["status"] = np.select(
        [units["yhat"].isna(), units["y"].notna(), has_na.to_numpy()],
        ["judge_na", "labelled", "human_na"],
        "unlabelled",
    )
    return units


@pytest.mark.parametrize("null_runs", [False, True])
def test_ppi_units_count_a_null_run_as_run_means_does(null_runs: bool) -> None:
    """int_ppi_units' run count is run_means' (count_runs): ratings of run '1' and a
    null run_id on some of the same keys are two runs, averaged per unit (a bare
    count(distinct run_id) saw one run and passed both through: two units of a
    key). Outside fct_judge_ratings' contract (staging coalesces run_id); without
    the null run, the one-run route, equal to the same reference."""
    fct, na = ppi_ratings(null_runs)
    con = duckdb.connect()
    con.register("fct_judge_ratings", fct)
    con.register("int_human_scores_aggregated", na)
    got = con.sql(render("int_ppi_units")).df()
    want = ppi_units_reference(fct, na)
    key = ["judge", "model", "prompt_id", "dimension"]
    assert got["is_panel"].tolist() == (got["judge"] == "panel").tolist()
    got = got[[*key, "yhat", "y", "status"]]
    _assert_frames_equal(got.drop(columns="status"), want[[*key, "yhat", "y"]], key)
    statuses = [frame.sort_values(key)["status"].tolist() for frame in (got, want)]
    assert statuses[0] == statuses[1] and len(set(statuses[0])) == 4
