"""A SIGTERM to `judge-bias build` or `judge-bias bench` (``kill PID``, ``timeout``,
a CI runner cancelling a step: sent to that process alone) stops the processes it
started and removes its temporary folders. Before, the build's dbt child ran on
alone, holding the warehouse's lock, and the bench's build ran on in its folder."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import DEMO_DIR

pytestmark = pytest.mark.dbt

JUDGE_BIAS = str(Path(sys.executable).with_name("judge-bias"))


def processes_naming(text: str) -> list[int]:
    """The pids whose command line contains ``text`` (Linux /proc)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if text.encode() in (proc / "cmdline").read_bytes():
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def wait_for(condition, seconds: float) -> bool:
    end = time.time() + seconds
    while time.time() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def terminate_and_check(cmd: list[str], marker: str, child: str, env: dict) -> None:
    """Start cmd, wait until a process naming both marker and child runs, SIGTERM
    the first process alone, and check every process naming marker has ended."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        started = wait_for(
            lambda: any(
                child.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
                for pid in processes_naming(marker)
                if pid != proc.pid
            ),
            120,
        )
        assert started, "the child never started"
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        left = processes_naming(marker)
        assert wait_for(lambda: not processes_naming(marker), 30), f"still running: {left}"
        assert code == 130, (code, proc.stdout.read().decode()[-2000:] if proc.stdout else "")
    finally:
        for pid in [proc.pid, *processes_naming(marker)]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_sigterm_stops_the_builds_dbt_child(tmp_path: Path) -> None:
    db = tmp_path / "interrupted.duckdb"
    env = dict(os.environ, JUDGE_BIAS_GLM_MODELS="none")
    cmd = [JUDGE_BIAS, "build", "--data", str(DEMO_DIR), "--db", str(db)]
    terminate_and_check(cmd, str(tmp_path), "dbt_parse", env)


def test_sigterm_stops_the_benchs_build_and_removes_its_folder(tmp_path: Path) -> None:
    env = dict(os.environ, JUDGE_BIAS_GLM_MODELS="none", TMPDIR=str(tmp_path))
    cmd = [JUDGE_BIAS, "bench", "--scale-build", "--rows", "20000"]
    terminate_and_check(cmd, str(tmp_path), "dbt_parse", env)
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_parent_stops_a_silent_dbt_child(tmp_path: Path) -> None:
    """dbt_child stops its child when the parent unwinds, even a child that writes
    nothing for minutes (a long node at 100M ratings; a child that writes dies of the
    closed pipe anyway)."""
    from judge_bias.warehouse.dbt_child import dbt_child

    cmd = [sys.executable, "-c", "import time; time.sleep(120)"]
    start = time.time()
    env = dict(os.environ)
    with (
        pytest.raises(KeyboardInterrupt),
        dbt_child(cmd, env, tmp_path, tmp_path, True, False) as child,
    ):
        pid = child.proc.pid
        raise KeyboardInterrupt
    assert time.time() - start < 30
    assert (
        not Path(f"/proc/{pid}").exists()
        or b"sleep" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    )
