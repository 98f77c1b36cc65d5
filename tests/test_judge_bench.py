"""The JUDGE-BENCH import on newsroom.json (../shared/data/judge_bench): every
individual human score becomes a human annotation, the scales come from the
file's metadata, and Krippendorff's alpha per dimension in the warehouse equals
an independent computation from the JSON (the coincidence-matrix formula,
written here without the krippendorff package the warehouse uses)."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest

from judge_bias.inputs.importers.judge_bench import import_judge_bench, scale_rows
from tests.conftest import SHARED_DATA, query
from tests.importing import assert_reconciled, import_and_build

NEWSROOM = SHARED_DATA / "judge_bench" / "newsroom.json"
needs_newsroom = pytest.mark.skipif(not NEWSROOM.exists(), reason="newsroom.json is absent")


def alpha(units: list[list[float]], metric: str) -> float:
    """Krippendorff's alpha from its definition: 1 - D_o / D_e, with D_o the mean
    pairwise distance within units (each pairable value weighted 1 / (m_u - 1)) and
    D_e the mean distance between all pairable values."""

    def d(a: float, b: float) -> float:
        return (a - b) ** 2 if metric == "interval" else float(a != b)

    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    observed = (
        sum(sum(d(a, b) for a, b in itertools.permutations(u, 2)) / (len(u) - 1) for u in units) / n
    )
    expected = sum(d(a, b) for a, b in itertools.permutations(values, 2)) / (n * (n - 1))
    return 1 - observed / expected


@pytest.fixture(scope="module")
def newsroom(imported_build):
    return imported_build("judge-bench", [NEWSROOM])


def test_scales_from_metadata() -> None:
    assert [r["label"] for r in scale_rows({"metric": "f", "worst": 5, "best": 1})] == [
        1,
        2,
        3,
        4,
        5,
    ]
    labels = scale_rows({"metric": "c", "labels": ["no", "yes"]})
    assert [(r["label"], r["score"]) for r in labels] == [("no", 0), ("yes", 1)]
    with pytest.raises(ValueError, match="scale"):
        scale_rows({"metric": "x"})


def test_scores_off_the_scale_are_written_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {
        "dataset": "x",
        "annotations": [{"metric": "m", "category": "graded", "worst": 1, "best": 5}],
        "instances": [
            {"id": 1, "instance": "t", "annotations": {"m": {
                "individual_human_scores": [3.5, None, 6, "a", 2]}}}
        ],
    }  # fmt: skip
    (tmp_path / "x.json").write_text(json.dumps(data), encoding="utf-8")
    counts = import_judge_bench([tmp_path / "x.json"], tmp_path / "out")
    assert counts["human_annotations"] == 5  # every score written, as given
    # 3.5 lies on the 1-5 scale; null, 6 and "a" are rejected by the build
    assert "x.json: 3 human score(s) null or off the scale" in capsys.readouterr().err


def test_alpha_on_hand_computed_cases() -> None:
    assert alpha([[1, 1], [2, 2]], "nominal") == 1.0
    # two units in total disagreement: D_o = 4/4, D_e = 8/12, alpha = 1 - 1.5
    assert alpha([[1, 2], [2, 1]], "nominal") == pytest.approx(-0.5)
    # interval: units [1, 3] and [2, 2]: D_o = (2*4/1 + 0) / 4 = 2;
    # values 1,3,2,2: squared differences over ordered pairs sum to 16, D_e = 16/12
    assert alpha([[1, 3], [2, 2]], "interval") == pytest.approx(1 - 2 / (16 / 12))


@needs_newsroom
def test_builds_green_with_every_score(newsroom) -> None:
    out, result = newsroom
    data = json.loads(NEWSROOM.read_text(encoding="utf-8"))
    n_scores = sum(
        len(a["individual_human_scores"])
        for inst in data["instances"]
        for a in inst["annotations"].values()
    )
    counts = assert_reconciled(out, result)
    assert counts["human_annotations"] == (n_scores, 0) == (5040, 0)
    assert counts["rating_scales"] == (4 * 5, 0)


@needs_newsroom
def test_alpha_and_means_equal_a_recomputation(newsroom) -> None:
    _, result = newsroom
    data = json.loads(NEWSROOM.read_text(encoding="utf-8"))
    got = query(result.db_path, "select * from agreement_annotators").set_index("dimension")
    means = query(
        result.db_path,
        "select prompt_id, dimension, human_score_mean from int_human_scores_aggregated",
    ).set_index(["prompt_id", "dimension"])["human_score_mean"]
    for metric in (m["metric"] for m in data["annotations"]):
        units = [i["annotations"][metric]["individual_human_scores"] for i in data["instances"]]
        for level in ("interval", "nominal"):
            assert got.loc[metric, f"alpha_{level}"] == pytest.approx(
                alpha(units, level), abs=1e-12
            ), (metric, level)
        for inst in data["instances"]:  # JUDGE-BENCH's mean_human, rounded to 2 places
            mean = means.loc[(f"newsroom-{inst['id']}", metric)]
            assert mean == pytest.approx(
                inst["annotations"][metric]["mean_human"], abs=0.005 + 1e-9
            )


# Small files in the schema of JUDGE-BENCH's own data files (dmg-illc/JUDGE-BENCH,
# data/README.md and data/example.json), one per kind of metric its data/ folder
# publishes; values shortened, structure as in the source file named per entry.
CITED_DICES = (
    "Dices (Aroyo, Lora, et al., Advances in Neural Information Processing Systems 36, 2024)"
)
SAFETY = {"metric": "safety", "category": "categorical", "prompt": "Is it safe? {{ response }}"}


def _instance(id_: object, instance: object, **scores: list) -> dict:
    return {
        "id": id_,
        "instance": instance,
        "annotations": {m: {"individual_human_scores": s} for m, s in scores.items()},
    }


JUDGE_BENCH_FILES: dict[str, dict] = {
    # data/dices/dices_350_expert.json: categorical, labels_list No/Yes, one expert
    "dices/dices_350_expert.json": {
        "dataset": CITED_DICES, "expert_annotator": "true",
        "annotations": [{**SAFETY, "labels_list": ["No", "Yes"]}],
        "instances": [
            _instance(173, {"user_prompt": "USER: hi", "response": "hey"}, safety=["No"]),
            _instance(193, {"user_prompt": "USER: men", "response": "strong"}, safety=["Yes"]),
        ],
    },
    # data/dices/dices_990.json: the same dataset name, labels No/Yes/Unsure, crowd
    "dices/dices_990.json": {
        "dataset": CITED_DICES, "expert_annotator": "false",
        "annotations": [{**SAFETY, "labels_list": ["No", "Yes", "Unsure"]}],
        "instances": [
            _instance(173, {"user_prompt": "A: x", "response": "ok"},
                      safety=["No", "Yes", "Unsure", "Yes", "No"]),
            _instance(32, {"user_prompt": "A: y", "response": "Sorry"},
                      safety=["No", "No", "No", "Yes", "Unsure"]),
            _instance(51, {"user_prompt": "A: z", "response": "ok"},
                      safety=["No", "No", "No", "No", "No"]),
        ],
    },
    # data/medical-safety/data.json: two categorical metrics, string ids; the
    # prompt lists "Recommendations" but labels_list does not: such a score is
    # rejected by the build as a label off the scale
    "medical-safety/data.json": {
        "dataset": "medical-safety",
        "annotations": [
            {"metric": "query risk level", "category": "categorical",
             "labels_list": ["Not medical", "Non-serious", "Serious", "Critical"]},
            {"metric": "response type", "category": "categorical",
             "labels_list": ["Non-medical", "Irrelevant or nonsensical", "No answer",
                             "General information", "Treatment or diagnosis"]},
        ],
        "instances": [
            _instance("medical-safety-0-response-dialogpt", {"query": "q0", "response": "r0"},
                      **{"query risk level": ["Serious"], "response type": ["Non-medical"]}),
            _instance("medical-safety-0-response-reddit", {"query": "q0", "response": "r1"},
                      **{"query risk level": ["Serious"], "response type": ["Recommendations"]}),
        ],
    },
    # data/toxic_chat/toxic_chat_test.json (convert_toxic_chat.py): categorical with
    # labels_list "0"/"1" and string best/worst; no individual scores, majority only
    "toxic_chat/toxic_chat_test.json": {
        "dataset": "ToxicChat (Lin et al., arxiv2023)",
        "annotations": [
            {"metric": m, "category": "categorical", "labels_list": ["0", "1"],
             "best": "0", "worst": "1"} for m in ("toxicity", "jailbreaking")
        ],
        "instances": [
            {"id": "c1a2", "instance": "text one", "annotations": {
                "toxicity": {"majority_human": "0", "individual_human_scores": []},
                "jailbreaking": {"majority_human": "0", "individual_human_scores": []}}},
            {"id": "c3b4", "instance": "text two", "annotations": {
                "toxicity": {"majority_human": "1", "individual_human_scores": []},
                "jailbreaking": {"majority_human": "0", "individual_human_scores": []}}},
        ],
    },
    # data/wmt-23/convert.py: continuous 0.0-100.0, one score per segment
    "wmt-23/wmt-23_en_de.json": {
        "dataset": "WMT-23 (Kocmi et al., Proceedings of the Eighth Conference on "
                   "Machine Translation 2023)",
        "annotations": [{"metric": "quality", "category": "continuous",
                         "worst": 0.0, "best": 100.0}],
        "instances": [
            _instance(0, {"source": "Hallo", "reference": "Hello", "translation": "Hi"},
                      quality=[87.5]),
            _instance(1, {"source": "Welt", "reference": "World", "translation": "Word"},
                      quality=[33.0]),
        ],
    },
    # data/roscoe/convert_stepwise.py: categorical yes/no per reasoning step
    "roscoe/roscoe-drop-stepwise.json": {
        "dataset": "roscoe-drop-stepwise (Golovneva et al., ICLR 2023)",
        "annotations": [{"metric": "Grammar", "category": "categorical",
                         "labels_list": ["yes", "no"]}],
        "instances": [_instance(1, "step one", Grammar=["no"]),
                      _instance(2, "step two", Grammar=["yes"])],
    },
}  # fmt: skip


def plain_counts(files: dict[str, dict]) -> tuple[int, int]:
    """(human scores, scores off their metric's scale) by a plain walk over the JSON:
    an instance metric without individual scores counts its one aggregate."""
    n = off = 0
    for data in files.values():
        metrics = {m["metric"]: m for m in data["annotations"]}
        for inst in data["instances"]:
            for name, ann in inst["annotations"].items():
                scores = ann["individual_human_scores"] or [ann["majority_human"]]
                n += len(scores)
                m = metrics[name]
                if m["category"] == "categorical":
                    off += sum(str(s) not in m["labels_list"] for s in scores)
                else:
                    off += sum(not m["worst"] <= s <= m["best"] for s in scores)
    return n, off


def write_files(root: Path, files: dict[str, dict]) -> list[Path]:
    paths = []
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory):
    paths = write_files(tmp_path_factory.mktemp("judge_bench_files"), JUDGE_BENCH_FILES)
    return import_and_build("judge-bench", paths, tmp_path_factory)


def test_plain_counts_by_hand() -> None:
    # dices 2 + 15, medical 4 (one off the list), toxic 4 majorities, wmt 2, roscoe 2
    assert plain_counts(JUDGE_BENCH_FILES) == (2 + 15 + 4 + 4 + 2 + 2, 1)


def test_categorical_metrics_get_a_nominal_scale() -> None:
    rows = scale_rows({"metric": "safety", "category": "categorical",
                       "labels_list": ["No", "Yes", "Unsure"]})  # fmt: skip
    assert [(r["label"], r["score"], r["scale_level"]) for r in rows] == [
        ("No", 0, "nominal"), ("Yes", 1, "nominal"), ("Unsure", 2, "nominal")
    ]  # fmt: skip
    # ToxicChat gives labels_list and string best/worst: the labels win
    toxic = scale_rows(JUDGE_BENCH_FILES["toxic_chat/toxic_chat_test.json"]["annotations"][0])
    assert [(r["label"], r["scale_level"]) for r in toxic] == [("0", "nominal"), ("1", "nominal")]
    wmt = scale_rows({"metric": "q", "category": "continuous", "worst": 0.0, "best": 1.0})
    assert [(r["score"], r["scale_level"]) for r in wmt] == [(0, "interval"), (1, "interval")]
    half = scale_rows({"metric": "q", "category": "continuous", "worst": 0.5, "best": 2.5})
    assert [r["score"] for r in half] == [0.5, 2.5]


def test_every_format_builds_with_each_score_accepted_or_rejected(formats) -> None:
    out, result = formats
    n_scores, n_off = plain_counts(JUDGE_BENCH_FILES)
    counts = assert_reconciled(out, result)
    assert counts["human_annotations"] == (n_scores, n_off)
    assert counts["rating_scales"][1] == 0 and counts["prompts"] == (13, 0)
    rejected = query(
        result.db_path,
        "select reason_code, reason, raw_values from rejected_rows "
        "where source = 'human_annotations'",
    )
    assert len(rejected) == 1 and "Recommendations" in rejected["reason"].iloc[0]


def test_names_are_short_and_ids_do_not_collide(formats) -> None:
    out, _ = formats
    with (out / "prompts.csv").open(newline="", encoding="utf-8") as fh:
        prompts = {r["prompt_id"]: r for r in csv.DictReader(fh)}
    # both Dices files hold an instance 173: each file's ids carry its stem
    assert {"Dices-dices_350_expert-173", "Dices-dices_990-173"} <= set(prompts)
    assert prompts["ToxicChat-c1a2"]["dataset"] == "ToxicChat"
    assert "WMT-23-0" in prompts and "roscoe-drop-stepwise-1" in prompts
    assert "medical-safety-medical-safety-0-response-dialogpt" in prompts
    assert prompts["Dices-dices_990-32"]["prompt_text"] == "user_prompt: A: y\n\nresponse: Sorry"
    with (out / "models.csv").open(newline="", encoding="utf-8") as fh:
        models = [r["alias"] for r in csv.DictReader(fh)]
    assert "Dices-system" in models and not any("(" in m for m in models)
    with (out / "human_annotations.csv").open(newline="", encoding="utf-8") as fh:
        toxic = [r for r in csv.DictReader(fh) if r["prompt_id"].startswith("ToxicChat")]
    assert {r["annotator_id"] for r in toxic} == {"majority_human"} and len(toxic) == 4


def test_nominal_alpha_equals_a_recomputation(formats) -> None:
    _, result = formats
    units: dict[str, list[str]] = {}
    for name in ("dices/dices_350_expert.json", "dices/dices_990.json"):
        for inst in JUDGE_BENCH_FILES[name]["instances"]:
            units[f"{name}-{inst['id']}"] = inst["annotations"]["safety"]["individual_human_scores"]
    codes = {"No": 0, "Yes": 1, "Unsure": 2}
    expected = alpha([[codes[s] for s in u] for u in units.values()], "nominal")
    got = query(result.db_path, "select * from agreement_annotators").set_index("dimension")
    assert got.loc["safety", "alpha_nominal"] == pytest.approx(expected, abs=1e-12)


def test_one_dices_file_keeps_plain_ids(tmp_path: Path) -> None:
    [path] = write_files(tmp_path, {"d.json": JUDGE_BENCH_FILES["dices/dices_350_expert.json"]})
    import_judge_bench([path], tmp_path / "out")
    with (tmp_path / "out" / "prompts.csv").open(newline="", encoding="utf-8") as fh:
        assert [r["prompt_id"] for r in csv.DictReader(fh)] == ["Dices-173", "Dices-193"]
