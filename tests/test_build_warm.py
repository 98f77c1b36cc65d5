"""judge-bias build imports the validation (Great Expectations, ~2.9 CPU s) in a
thread while dbt's child starts, not in the serial tail after dbt (issue 34)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path

from judge_bias.warehouse import build as build_mod


def test_warm_validation_imports_the_suites_in_another_thread() -> None:
    # a fresh interpreter: the test process may have imported them already
    code = textwrap.dedent(
        """
        import sys, threading
        from judge_bias.warehouse import build
        assert "great_expectations" not in sys.modules
        seen = []  # the thread that looked great_expectations up (review18b)

        class Spy:
            def find_spec(self, name, path=None, target=None):
                if name == "great_expectations":
                    seen.append(threading.current_thread().name)
                return None

        sys.meta_path.insert(0, Spy())
        thread = build.warm_validation()
        assert thread is not threading.current_thread() and thread.daemon
        thread.join(timeout=300)
        from judge_bias.warehouse import expectations
        assert "great_expectations" in sys.modules
        assert expectations.SUITES, "suites() not built"
        assert seen == ["gx-import"], seen
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


class _Child:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def read(self, args: list[str]) -> bool:
        self.events.append(f"read {args[0]}")
        return True

    def second(self, args: list[str], argv: list[str]) -> None:
        self.events.append(f"second {args[0]}")


class _Warming:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def join(self, timeout: float | None = None) -> None:
        self.events.append("joined")


def test_dbt_phases_warms_after_the_child_starts_and_joins_after_the_first_phase(
    monkeypatch, tmp_path: Path
) -> None:
    events: list[str] = []

    @contextlib.contextmanager
    def fake_dbt(*args, **kwargs):
        events.append("child started")
        yield _Child(events)

    def fake_warm() -> _Warming:
        events.append("warming")
        return _Warming(events)

    monkeypatch.setattr(build_mod, "_dbt", fake_dbt)
    monkeypatch.setattr(build_mod, "warm_validation", fake_warm)
    monkeypatch.setattr(build_mod.dbt_parse, "keep", lambda *a: None)
    db = tmp_path / "w.duckdb"
    with build_mod.dbt_phases(["build"], db, None, capture=True) as second:
        events.append("gates")
        second(["build"])
    assert events == [
        "child started",
        "warming",
        "read build",
        "joined",
        "gates",
        "second build",
    ]


def test_a_thread_that_cannot_start_leaves_the_import_to_the_tail(monkeypatch) -> None:
    """review18b: the thread limit reached is not a build failure: no thread, and the
    suites are imported where they were before (validate)."""

    def refuse(self) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(build_mod.threading.Thread, "start", refuse)
    assert build_mod.warm_validation() is None
