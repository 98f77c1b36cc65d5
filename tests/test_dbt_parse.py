"""dbt's parse shared between warehouses (judge_bias.warehouse.dbt_parse): a new
warehouse of the same catalog name starts from the last parse instead of parsing
the whole project, yet a changed model file, another catalog name or other vars
are parsed again by dbt's own checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from judge_bias.warehouse import build as build_mod
from judge_bias.warehouse import dbt_parse

pytestmark = pytest.mark.dbt

PROJECT = build_mod.PROJECT_DIR
MODEL = Path("models") / "marts" / "quality" / "input_row_counts.sql"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the project whose models can be edited (the rest linked), with its
    own parse cache."""
    copy = tmp_path / "project"
    copy.mkdir()
    for entry in PROJECT.iterdir():
        if entry.name in ("models", "target", "logs", "warehouse", ".git"):
            continue
        (copy / entry.name).symlink_to(entry)
    for path in (PROJECT / "models").rglob("*"):
        if path.is_file():
            dest = copy / path.relative_to(PROJECT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    monkeypatch.setattr(build_mod, "PROJECT_DIR", copy)
    monkeypatch.setattr(build_mod, "PARSE_CACHE", tmp_path / "parse_cache")
    return copy


def parse(db: Path) -> str:
    """``dbt parse`` as a build runs dbt; returns the log of that command."""
    build_mod.run_dbt(["parse"], db, build_mod.PROJECT_DIR / "data" / "demo", capture=True)
    return (build_mod.target_dir(db).parent / "logs" / "dbt.log").read_text(encoding="utf-8")


def full_parse(log: str) -> bool:
    # dbt 1.11's events: UnableToPartialParse before a full parse, PartialParsingEnabled
    # (or "skipping parsing") when the saved parse is used
    assert ("Unable to do partial parsing" in log) != ("Partial parsing enabled" in log), log
    return "Unable to do partial parsing" in log


def manifest_node(db: Path, name: str) -> dict:
    manifest = json.loads((build_mod.target_dir(db) / "manifest.json").read_text())
    return manifest["nodes"][f"model.judge_bias.{name}"]


def test_a_new_warehouse_reuses_the_parse_and_sees_a_changed_model(project, tmp_path):
    first = tmp_path / "one" / "w.duckdb"
    assert full_parse(parse(first))  # nothing kept yet
    # another folder, the same catalog name: dbt's partial parse, nothing re-parsed
    second = tmp_path / "two" / "w.duckdb"
    log = parse(second)
    assert not full_parse(log)
    assert "0 files deleted, 0 files added, 0 files changed" in log
    # the manifest is this warehouse's: its catalog (the stem), every node
    node = manifest_node(second, "input_row_counts")
    assert node["database"] == "w"
    # a model changed between builds is parsed again (dbt's file hashes still checked)
    model = project / MODEL
    model.write_text(model.read_text() + "\n-- edited between two builds\n")
    third = tmp_path / "three" / "w.duckdb"
    log = parse(third)
    assert not full_parse(log)
    assert "1 files changed" in log
    assert "edited between two builds" in manifest_node(third, "input_row_counts")["raw_code"]
    assert "edited between two builds" not in manifest_node(second, "input_row_counts")["raw_code"]


def test_another_catalog_name_parses_the_project_again(project, tmp_path):
    parse(tmp_path / "one" / "w.duckdb")
    # the catalog name is in every node: a parse made for "w" never serves "v"
    other = tmp_path / "two" / "v.duckdb"
    assert full_parse(parse(other))
    assert manifest_node(other, "input_row_counts")["database"] == "v"


def test_the_data_folder_and_glm_models_are_read_when_the_models_run(monkeypatch, tmp_path):
    """They are no longer rendered by dbt_project.yml (the parse would depend on
    them): the loaders and the GLM settings read the environment when they run."""
    from judge_bias.glm.runner import GlmConfig
    from judge_bias.inputs.relations import data_dir_of

    monkeypatch.setenv("JUDGE_BIAS_DATA_DIR", str(tmp_path))
    assert data_dir_of("") == str(tmp_path)
    assert data_dir_of(None) == str(tmp_path)
    assert data_dir_of("given") == "given"  # the data_dir var wins
    monkeypatch.delenv("JUDGE_BIAS_DATA_DIR")
    assert data_dir_of("") == "data/demo"
    monkeypatch.setenv("JUDGE_BIAS_GLM_MODELS", "none")
    assert GlmConfig.from_vars({"glm_models": ""}.get).models == ()
    assert GlmConfig.from_vars({"glm_models": "pairwise"}.get).models == ("pairwise",)
    monkeypatch.delenv("JUDGE_BIAS_GLM_MODELS")
    assert GlmConfig.from_vars({"glm_models": ""}.get).models == GlmConfig().models
    text = (PROJECT / "dbt_project.yml").read_text()
    assert "env_var(" not in text  # nothing of the environment in the parse


def test_seed_and_keep(tmp_path):
    cache, target = tmp_path / "cache", tmp_path / "a.dbt" / "target"
    db = tmp_path / "a.duckdb"
    assert dbt_parse.seed(cache, target, db) is None  # nothing kept
    made = tmp_path / "made" / "target"
    made.mkdir(parents=True)
    (made / dbt_parse.PARTIAL_PARSE).write_bytes(b"parse")
    dbt_parse.keep(cache, made, tmp_path / "made" / "a.duckdb")
    assert dbt_parse.seed(cache, target, db) == str(tmp_path / "made" / "a.duckdb")
    assert (target / dbt_parse.PARTIAL_PARSE).read_bytes() == b"parse"
    # still the seed: not kept again under this warehouse's path
    dbt_parse.keep(cache, target, db)
    assert json.loads((cache / "a.json").read_text())["path"] == str(tmp_path / "made" / "a.duckdb")
    # dbt rewrote it (a file changed): kept as this warehouse's
    later = (target / dbt_parse.SEEDED).stat().st_mtime + 5
    (target / dbt_parse.PARTIAL_PARSE).write_bytes(b"parse 2")
    os.utime(target / dbt_parse.PARTIAL_PARSE, (later, later))
    dbt_parse.keep(cache, target, db)
    assert json.loads((cache / "a.json").read_text())["path"] == str(db)
    assert dbt_parse.catalog_name(Path("/x/my.db.duckdb")) == "my"


def test_a_build_writes_the_manifest_once_at_the_end(project, tmp_path):
    db = tmp_path / "one" / "w.duckdb"
    build_mod.run_dbt(["build", "--select", "model_aliases"], db, None, capture=True)
    log = (build_mod.target_dir(db).parent / "logs" / "dbt.log").read_text(encoding="utf-8")
    # dbt wrote it after the parse and again at the end; the end's write is the one kept
    assert log.count("Wrote artifact WritableManifest") == 1
    assert log.index("Wrote artifact WritableManifest") > log.index("OK loaded seed")
    manifest = json.loads((build_mod.target_dir(db) / "manifest.json").read_text())
    assert manifest["nodes"]["seed.judge_bias.model_aliases"]["database"] == "w"


def test_the_first_phase_writes_the_models_instead_of_the_manifest(project, tmp_path):
    """judge-bias build's first phase: no manifest.json (the second phase's replaces
    it; ~1 CPU s), the models' schema and alias instead, as the manifest has them
    (build.drop_unbuilt_models reads them after a failed gate)."""
    db = tmp_path / "one" / "w.duckdb"
    target = build_mod.target_dir(db)
    models = target / build_mod.GATE_MODELS
    select = ["build", "--select", "model_aliases"]
    build_mod.run_dbt(select, db, None, capture=True, models_file=models)
    assert not (target / "manifest.json").exists()
    written = json.loads(models.read_text())
    build_mod.run_dbt(select, db, None, capture=True)  # writes the manifest
    manifest = json.loads((target / "manifest.json").read_text())
    expected = {
        uid: [node["schema"], node.get("alias") or node["name"]]
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "model"
    }
    assert written == expected and "model.judge_bias.input_row_counts" in written


def test_both_phases_run_in_one_dbt_process_holding_nothing_between(tmp_path, dbt_children):
    """judge-bias build's two dbt commands (build.dbt_phases): one child process,
    one parse; between them the child has let go of the warehouse (this process
    writes it, as the gate check and a rejected load's rollback do), and the
    second command opens it again."""
    started = dbt_children
    db = tmp_path / "one" / "w.duckdb"
    target = build_mod.target_dir(db)
    models = target / build_mod.GATE_MODELS
    select = ["build", "--select", "model_aliases"]
    with build_mod.dbt_phases(select, db, None, capture=True, models_file=models) as second:
        assert not (target / "manifest.json").exists() and models.exists()
        first_run = json.loads((target / "run_results.json").read_text())
        con = duckdb.connect(str(db))  # read-write: fails while another process holds it
        con.execute("create table between_phases as select count(*) as n from model_aliases")
        con.close()
        second([*select, "--full-refresh"])
    assert len(started) == 1
    second_run = json.loads((target / "run_results.json").read_text())
    assert second_run["metadata"]["invocation_id"] != first_run["metadata"]["invocation_id"]
    assert second_run["args"]["full_refresh"] is True
    status = {r["unique_id"]: r["status"] for r in second_run["results"]}
    assert status["seed.judge_bias.model_aliases"] == "success"
    assert set(status.values()) <= {"success", "pass"}
    log = (target.parent / "logs" / "dbt.log").read_text(encoding="utf-8")
    assert log.count("Running with dbt=") == 2  # two commands, one parse
    assert log.count("Unable to do partial parsing") + log.count("Partial parsing enabled:") == 1
    assert json.loads((target / "manifest.json").read_text())["nodes"]  # the second's
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select n from between_phases").fetchone()[0] > 0
    con.close()


# a child ending as judge-bias build's dbt child ends (dbt_parse._exit_without_teardown):
# an atexit function writes a file, the output is left in Python's buffer (a pipe is
# block-buffered), and the warehouse's release succeeds or fails as the argument says
_EXIT_CHILD = """
import atexit, sys
from pathlib import Path
from judge_bias.warehouse import dbt_parse

def release():
    if sys.argv[2] == "held":
        raise RuntimeError("dbt still holds the warehouse")

dbt_parse._release_warehouse = release
atexit.register(lambda: Path(sys.argv[1]).write_text("atexit ran"))
print("the child's last line")
dbt_parse._exit_without_teardown(3)
print("not reached")
"""


@pytest.mark.parametrize("warehouse", ["closed", "held"])
def test_the_child_ends_with_its_code_its_output_and_its_atexit_functions(tmp_path, warehouse):
    import subprocess
    import sys

    marker = tmp_path / "atexit.txt"
    result = subprocess.run(
        [sys.executable, "-c", _EXIT_CHILD, str(marker), warehouse],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
            "PYTHONPATH": str(PROJECT / "python"),
        },
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout == "the child's last line\n"
    assert marker.read_text() == "atexit ran"
