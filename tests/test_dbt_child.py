"""The parent's side of judge-bias build's dbt child (judge_bias.warehouse.dbt_child),
against a scripted child speaking the two phases' handshake: each phase's output
echoed up to dbt's failure summary, the end of the first phase, go with the
second command, stop (said, or the parent leaving), and a child that dies in
either phase or between them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from judge_bias.warehouse.dbt_child import GO, PHASE_DONE, BuildError, dbt_child

CHILD = r"""
import json, os, sys
mode, said, PHASE_DONE, GO = sys.argv[1:]
print("first phase output", flush=True)
if mode == "dies in the first":
    print("Runtime Error in model x: boom", flush=True)
    os._exit(3)
if mode == "ends without the marker":
    sys.exit(0)
print(PHASE_DONE, flush=True)
if mode == "dies waiting":
    os.kill(os.getpid(), 9)
answer = sys.stdin.readline()
open(said, "w").write(answer or "end of stdin")
if mode == "dies between":
    os.kill(os.getpid(), 9)
if not answer.startswith(GO):
    sys.exit(0)
print("second phase:", " ".join(json.loads(answer.removeprefix(GO))), flush=True)
if mode == "fails in the second":
    print("Completed with 1 error and 0 warnings:", flush=True)
    print("a long traceback kept off the terminal", flush=True)
    sys.exit(1)
"""


def child(tmp_path: Path, mode: str):
    cmd = [sys.executable, "-c", CHILD, mode, str(tmp_path / "said.txt"), PHASE_DONE, GO]
    return dbt_child(cmd, dict(os.environ), tmp_path, tmp_path / "target", False, False)


def said(tmp_path: Path) -> str:
    return (tmp_path / "said.txt").read_text()


def test_go_runs_the_second_phase_in_the_same_child(tmp_path, capfd):
    with child(tmp_path, "ok") as dbt:
        assert dbt.read(["build"]) is True  # the end of the first phase, the child waiting
        assert capfd.readouterr().out == "first phase output\n"
        pid = dbt.proc.pid
        dbt.second(["build"], ["build", "--exclude", "+x"])
        assert dbt.proc.pid == pid and dbt.proc.returncode == 0
    assert capfd.readouterr().out == "second phase: build --exclude +x\n"
    assert said(tmp_path) == 'go ["build", "--exclude", "+x"]\n'


def test_leaving_after_the_first_phase_stops_the_child(tmp_path):
    """A failed gate (or an exception) leaves the block: the child reads the end of
    its stdin and ends, and the block waits for it."""
    with child(tmp_path, "ok") as dbt:
        assert dbt.read(["build"])
    assert dbt.proc.returncode == 0
    assert said(tmp_path) == "end of stdin"


def test_a_child_dying_in_the_first_phase_is_a_one_line_failure(tmp_path):
    boom = r"^dbt build failed: Runtime Error in model x: boom$"
    with pytest.raises(BuildError, match=boom), child(tmp_path, "dies in the first") as dbt:
        dbt.read(["build"])


def test_a_child_ending_without_the_first_phase_end(tmp_path):
    with child(tmp_path, "ends without the marker") as dbt:
        assert dbt.read(["build"]) is False


def test_a_child_killed_between_the_phases(tmp_path):
    killed = r"^dbt build failed: exit code -9$"
    with pytest.raises(BuildError, match=killed), child(tmp_path, "dies between") as dbt:
        assert dbt.read(["build"])
        dbt.second(["build"], ["build"])


def test_a_child_dead_before_the_answer(tmp_path):
    """Writing go to a child that is gone (a broken pipe) is the child's failure."""
    killed = r"^dbt build failed: exit code -9$"
    with pytest.raises(BuildError, match=killed), child(tmp_path, "dies waiting") as dbt:
        assert dbt.read(["build"])
        dbt.proc.wait()
        dbt.second(["build"], ["build"])


def test_the_second_phase_echo_stops_at_the_failure_summary(tmp_path, capfd):
    with child(tmp_path, "fails in the second") as dbt:
        dbt.read(["build"])
        with pytest.raises(BuildError) as failed:
            dbt.second(["build"], ["build", "-s", "y"])
    out = capfd.readouterr().out
    assert out.endswith("second phase: build -s y\n")  # echo on again after the first
    assert "traceback" not in out
    assert str(failed.value) == "dbt build failed: a long traceback kept off the terminal"
