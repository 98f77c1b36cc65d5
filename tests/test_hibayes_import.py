"""The HiBayes import built end to end: HiBayes' own example files (q1, q2, q5 in
../shared/data/hibayes_examples, UKGovernmentBEIS/hibayes examples/skewed_score/*/data/data.csv)
and two small files in the layouts of its other examples (q3: several human graders,
``Human X``...; an ``item`` column as in its item-effect question). Every rating is
accepted (the graders that are judges are in models.csv), the counts equal a plain
csv parse of the files, and ``--models`` is taken."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA, query
from tests.importing import assert_reconciled, import_and_build

EXAMPLES = SHARED_DATA / "hibayes_examples"
SHARED_FILES = [EXAMPLES / f"q{q}_data.csv" for q in (1, 2, 5)]

# examples/skewed_score/q3/data/data.csv: score,grader,LLM with graders Human X, Human Y,
# Human Z, Autograder A, B, C (rows shortened)
Q3 = """score,grader,LLM
7,Human X,LLM A
5,Human X,LLM B
8,Human Y,LLM A
6,Human Y,LLM B
9,Human Z,LLM A
5,Autograder A,LLM A
3,Autograder A,LLM B
4,Autograder B,LLM A
2,Autograder C,LLM B
"""
# the item-effect layout (hibayes_examples/README.md, question 4): an item column
ITEMS = """score,grader,LLM,item
6,Human,gpt-4o,q17
4,Human,gpt-4o,q18
7,claude-3-5-sonnet,gpt-4o,q17
5,claude-3-5-sonnet,gpt-4o,q18
3,gpt-4o,claude-3-5-sonnet,q17
"""
MODELS = "alias,model,family\nAutograder A,gpt-4o-mini,GPT\n"


def plain_counts(paths: list[Path]) -> dict[str, int]:
    """Rows per contract file by a plain csv parse: ratings by a grader whose name
    starts with Human are human annotations, the others judge ratings; rows with
    LLM_1 are pairwise judgments."""
    counts = {"judge_ratings": 0, "human_annotations": 0, "pairwise_judgments": 0}
    judges: set[str] = set()
    for path in paths:
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if "LLM_1" in row:
                    counts["pairwise_judgments"] += 1
                    judges.add(row["grader"])
                elif row["grader"].lower().startswith("human"):
                    counts["human_annotations"] += 1
                else:
                    counts["judge_ratings"] += 1
                    judges.add(row["grader"])
    counts["judges"] = len(judges)
    return counts


@pytest.fixture(scope="module")
def hibayes(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hibayes_files")
    (root / "q3_data.csv").write_text(Q3, encoding="utf-8")
    (root / "items.csv").write_text(ITEMS, encoding="utf-8")
    (root / "models.csv").write_text(MODELS, encoding="utf-8")
    shared = [p for p in SHARED_FILES if p.exists()]
    paths = [*shared, root / "q3_data.csv", root / "items.csv"]
    out, result = import_and_build(
        "hibayes", paths, tmp_path_factory, "--models", str(root / "models.csv")
    )
    return paths, out, result


def test_plain_counts_by_hand(tmp_path: Path) -> None:
    (tmp_path / "q3.csv").write_text(Q3, encoding="utf-8")
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    got = plain_counts([tmp_path / "q3.csv", tmp_path / "items.csv"])
    assert got == {"judge_ratings": 7, "human_annotations": 7, "pairwise_judgments": 0,
                   "judges": 5}  # fmt: skip


def test_every_rating_is_accepted(hibayes) -> None:
    paths, out, result = hibayes
    expected = plain_counts(paths)
    counts = assert_reconciled(out, result)
    for kind in ("judge_ratings", "human_annotations"):
        assert counts[kind] == (expected[kind], 0), kind
    if expected["pairwise_judgments"]:
        assert counts["pairwise_judgments"] == (expected["pairwise_judgments"], 0)
    assert counts["models"][1] == 0
    fct = query(result.db_path, "select judge, count(*) as n from fct_judge_ratings group by 1")
    assert fct["n"].sum() == expected["judge_ratings"]  # every rating reaches the mart
    q1_judge = {"Autograder"} if paths[0] in SHARED_FILES else set()
    assert set(fct["judge"]) == q1_judge | {
        "gpt-4o-mini",  # Autograder A, by --models
        "Autograder B",
        "Autograder C",
        "claude-3-5-sonnet",
        "gpt-4o",
    }


def test_models_file_names_every_judge_and_takes_the_users_rows(hibayes) -> None:
    paths, out, _ = hibayes
    with (out / "models.csv").open(newline="", encoding="utf-8") as fh:
        models = {r["alias"]: (r["model"], r["family"]) for r in csv.DictReader(fh)}
    assert models["Autograder A"] == ("gpt-4o-mini", "GPT")  # --models
    assert models["claude-3-5-sonnet"] == ("claude-3-5-sonnet", "Claude")
    assert models["gpt-4o"] == ("gpt-4o", "GPT")
    assert models["Autograder C"] == ("Autograder C", "Autograder C")
    assert not any(a.startswith("Human ") for a in models)  # annotators are not models


def test_files_of_one_stem_stay_apart(tmp_path: Path) -> None:
    """HiBayes' repository names every question's file data/data.csv: imported
    together, each file keeps its own dimension (its path below the shared folder),
    so one question's humans are never paired with another question's graders."""
    from judge_bias.inputs.importers.hibayes import import_hibayes

    q1 = "score,grader,LLM\n7,Human,LLM A\n6,Autograder,LLM A\n"
    paths = []
    for question, text in (("q1", q1), ("q3", Q3)):
        path = tmp_path / "skewed_score" / question / "data" / "data.csv"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    import_hibayes(paths, tmp_path / "out")
    expected: dict[str, int] = {}
    for question, text in (("q1", q1), ("q3", Q3)):
        rows = list(csv.DictReader(text.splitlines()))
        expected[f"{question}/data/data"] = sum(not r["grader"].startswith("Human") for r in rows)
    with (tmp_path / "out" / "judge_ratings.csv").open(encoding="utf-8") as f:
        got = Counter(r["dimension"] for r in csv.DictReader(f))
    assert got == expected
    with (tmp_path / "out" / "rating_scales.csv").open(encoding="utf-8") as f:
        assert {r["dimension"] for r in csv.DictReader(f)} == set(expected)


def test_stems_collide_among_rating_files_only_and_keep_their_suffix(tmp_path: Path) -> None:
    """data.csv beside data.txt (both rating files) are equal without the suffix:
    each keeps its name with it; a pairwise file of the same stem is no rating
    dimension, so it does not rename the rating file; beside a third rating file of
    the stem in another folder, only the colliding two keep their suffix."""
    from judge_bias.inputs.importers.hibayes import dimension_names, import_hibayes

    folder = tmp_path / "q1"
    folder.mkdir()
    for name in ("data.csv", "data.txt"):
        (folder / name).write_text("score,grader,LLM\n7,Autograder,LLM A\n", encoding="utf-8")
    names = dimension_names([folder / "data.csv", folder / "data.txt"])
    assert names == {folder / "data.csv": "data.csv", folder / "data.txt": "data.txt"}
    # beside a third of the stem elsewhere, the two still differ (not both 'q1/data')
    (tmp_path / "q2").mkdir()
    other = tmp_path / "q2" / "data.csv"
    other.write_text("score,grader,LLM\n7,Autograder,LLM A\n", encoding="utf-8")
    names = dimension_names([folder / "data.csv", folder / "data.txt", other])
    assert names == {
        folder / "data.csv": "q1/data.csv",
        folder / "data.txt": "q1/data.txt",
        other: "q2/data",
    }
    pairs = tmp_path / "pairs" / "data.csv"
    pairs.parent.mkdir()
    pairs.write_text(
        "LLM_1,LLM_2,grader,first_is_chosen,length_diff\nLLM A,LLM B,Autograder,1,3\n",
        encoding="utf-8",
    )
    import_hibayes([folder / "data.csv", pairs], tmp_path / "out")
    with (tmp_path / "out" / "judge_ratings.csv").open(encoding="utf-8") as f:
        assert {r["dimension"] for r in csv.DictReader(f)} == {"data"}


def test_the_same_file_twice_is_refused(tmp_path: Path) -> None:
    from judge_bias.errors import InputError
    from judge_bias.inputs.importers.hibayes import import_hibayes

    path = tmp_path / "data.csv"
    path.write_text("score,grader,LLM\n7,Autograder,LLM A\n", encoding="utf-8")
    with pytest.raises(InputError, match="given twice"):
        import_hibayes([path, tmp_path / "." / "data.csv"], tmp_path / "out")
