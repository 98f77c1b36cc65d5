"""Progress lines of the GLM fits on stderr, which dbt's Python models share
with the terminal of ``judge-bias build`` (dbt's own log goes to stdout; the
build echoes both): which model, dimension and chain, its draws and the
elapsed time, so no fit is silent for minutes."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# seconds between the progress lines of a running chain (docs/glm.md, "GLM cost")
PROGRESS_EVERY = 30.0


def progress(message: str) -> None:
    """One progress line on stderr, which dbt's Python models share with the
    terminal of ``judge-bias build`` (its stdout is dbt's log), timed as
    dbt's lines are."""
    print(f"{time.strftime('%H:%M:%S')}  glm: {message}", file=sys.stderr, flush=True)


class Heartbeat:
    """Progress of the chains run inside ``with Heartbeat(on) as beat``:
    ``beat.run(name, what, fn)`` prints name's start and end (with its
    seconds), and while it runs a line every PROGRESS_EVERY seconds. The
    draws done are not counted while a chain runs: the chain is one compiled
    loop, and a host callback in it would keep it out of jax's persistent
    compilation cache (every build would compile it again)."""

    def __init__(self, on: bool = True) -> None:
        self.on = on
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while not self.stop.wait(PROGRESS_EVERY):
            with self.lock:
                now = time.perf_counter()
                lines = [f"{name}: still sampling, {now - t:.0f} s elapsed"
                         for name, t in self.running.items()]  # fmt: skip
            for line in lines:
                progress(line)

    def run(self, name: str, what: str, fn: Callable[[], T]) -> T:
        if not (self.on and name):
            return fn()
        progress(f"{name}: started ({what})")
        with self.lock:
            self.running[name] = time.perf_counter()
        try:
            return fn()
        finally:
            with self.lock:
                seconds = time.perf_counter() - self.running.pop(name)
            progress(f"{name}: done ({what}) in {seconds:.1f} s")

    def __enter__(self) -> Heartbeat:
        if self.on:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.on:
            self.thread.join()
