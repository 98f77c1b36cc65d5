"""dbt-project-evaluator's rules, checked on the manifest (the package cannot be
installed offline): primary-key tests, documented marts, fan-out, view chains."""

from __future__ import annotations

import json
from functools import cache

import pytest

from judge_bias.build import BuildResult
from tests.conftest import query

pytestmark = pytest.mark.dbt
MAX_CHILDREN = 3
MAX_VIEW_CHAIN = 5


@pytest.fixture(scope="module")
def manifest(demo_build: BuildResult) -> dict:
    path = demo_build.db_path.parent / f"{demo_build.db_path.stem}.dbt" / "target"
    return json.loads((path / "manifest.json").read_text())


def _models(manifest: dict) -> dict[str, dict]:
    return {k: v for k, v in manifest["nodes"].items() if v["resource_type"] == "model"}


def test_every_model_has_a_primary_key_test(manifest: dict) -> None:
    keyed: set[str] = set()
    for node in manifest["nodes"].values():
        meta = node.get("test_metadata") or {}
        if node["resource_type"] == "test" and meta.get("name") in {
            "unique",
            "unique_combination_of_columns",
        }:
            keyed.update(node["depends_on"]["nodes"])
    # a model may instead name its key and why it holds without a test (views whose
    # test would re-run them over every rating)
    exempt = {k for k, m in _models(manifest).items() if m["meta"].get("primary_key_reason")}
    missing = sorted(
        m["name"] for k, m in _models(manifest).items() if k not in keyed and k not in exempt
    )
    assert not missing


def test_every_mart_and_mart_column_is_documented(manifest: dict, demo_build) -> None:
    marts = [m for m in _models(manifest).values() if m["path"].startswith("marts/")]
    assert {m["name"] for m in marts} >= {"fct_judge_ratings", "agg_judge_model_scores"}
    for mart in marts:
        assert mart["description"].strip(), mart["name"]
        built = query(demo_build.db_path, f'describe "{mart["name"]}"')["column_name"]
        documented = {c for c, v in mart["columns"].items() if v["description"].strip()}
        assert set(built) <= documented, (mart["name"], set(built) - documented)


def test_fan_out_and_view_chains(manifest: dict) -> None:
    models = _models(manifest)
    children = {k: [c for c in manifest["child_map"].get(k, []) if c in models] for k in models}
    for key, kids in children.items():
        if len(kids) > MAX_CHILDREN:
            reason = models[key]["meta"].get("fan_out_reason")
            assert reason, f"{models[key]['name']} has {len(kids)} children and no fan_out_reason"

    @cache
    def view_chain(key: str) -> int:
        if models[key]["config"]["materialized"] != "view":
            return 0
        parents = [p for p in models[key]["depends_on"]["nodes"] if p in models]
        return 1 + max((view_chain(p) for p in parents), default=0)

    assert max(view_chain(k) for k in models) <= MAX_VIEW_CHAIN
