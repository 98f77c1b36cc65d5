"""Per-step profile of one `judge-bias build` (`judge-bias bench --scale-build`).

The build runs as a child process; a sampler thread reads the process tree's
resident memory and CPU time from /proc every SAMPLE_SECONDS. The steps' windows
come from the build record's stage times (the build's own clock) and from dbt's
run_results.json of each phase (each node's compile + execute window). dbt runs
nodes on 2 threads: an instant when k nodes run is shared k ways, and an instant
of a dbt phase when none runs is the phase's start-up and between-node cost; so
the steps partition the build's wall time, and CPU time (read from /proc: not
inflated by other processes on a shared machine) is shared the same way. A step's
peak memory is the largest sample of the whole tree (the CLI's process and dbt's)
in its windows: when nodes overlap, each sees the other's memory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from judge_bias.warehouse.dbt_child import stop_child

SAMPLE_SECONDS = 0.1
TICK = os.sysconf("SC_CLK_TCK")
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 1024**2


def _proc_usage(pid: int) -> tuple[float, float, list[int], float] | None:
    """(resident MB, CPU seconds of the process and of its reaped children, child
    pids, the process's peak resident MB so far) of one process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        with open(f"/proc/{pid}/status") as f:
            hwm = next((line for line in f if line.startswith("VmHWM:")), "VmHWM: 0 kB")
        children: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children += [int(c) for c in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = stat[stat.rfind(")") + 2 :].split()
    # fields 14-17 (utime stime cutime cstime) and 24 (rss) of proc(5)
    cpu = sum(int(v) for v in rest[11:15]) / TICK
    return int(rest[21]) * PAGE_MB, cpu, children, int(hwm.split()[1]) / 1024


def tree_usage(root: int) -> tuple[float, float, float]:
    """Resident MB and CPU seconds (finished descendants included) of ``root``'s tree,
    and the largest peak resident MB (VmHWM) of one of its living processes."""
    rss = cpu = largest = 0.0
    todo = [root]
    while todo:
        usage = _proc_usage(todo.pop())
        if usage is not None:
            rss, cpu, largest = rss + usage[0], cpu + usage[1], max(largest, usage[3])
            todo += usage[2]
    return rss, cpu, largest


class TreeSampler(threading.Thread):
    """Samples (Unix time, MB, CPU s) of a process tree until stopped; ``largest_mb``
    is the largest peak resident memory (VmHWM) any process of the tree reached.

    Not getrusage's ru_maxrss of the children: Linux starts a child's ru_maxrss at
    the size of the process that forked it (exec keeps the larger of the two), so the
    bench, which writes the data in pandas before it starts the build, reported its
    own size when larger than the build's (10M: 3.37 GB, against 2.90 GB by
    /usr/bin/time around `judge-bias build` alone; tests/test_bench_profile.py). VmHWM
    belongs to the process's own address space since its exec; a process's growth
    in its last interval before it ends is not seen."""

    def __init__(self, pid: int, interval: float = SAMPLE_SECONDS) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, float, float]] = []
        self.largest_mb = 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            rss, cpu, largest = tree_usage(self.pid)
            self.largest_mb = max(self.largest_mb, largest)
            # a process that has ended but is not yet reaped (its CPU not yet in its
            # parent's), or the root after it ended, reads as less: CPU never falls
            cpu = max(cpu, self.samples[-1][2]) if self.samples else cpu
            self.samples.append((time.time(), rss, cpu))
            self._halt.wait(self.interval)

    def stop(self) -> list[tuple[float, float, float]]:
        self._halt.set()
        self.join()
        return self.samples


@dataclass
class Step:
    name: str
    nodes: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    peak_mb: float = 0.0


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def node_windows(run_results: Path, manifest: dict, phase: int) -> list[tuple[str, float, float]]:
    """(step, start, end) of each node dbt ran in one phase: each loader and each
    Python model a step of its own; the rest grouped by kind."""
    out = []
    for r in json.loads(run_results.read_text())["results"]:
        stamps = [(_epoch(t["started_at"]), _epoch(t["completed_at"])) for t in r["timing"]]
        if not stamps:
            continue
        uid = r["unique_id"]
        node = manifest["nodes"].get(uid, {})
        kind, name = uid.split(".")[0], node.get("name", uid.split(".")[-1])
        if kind == "operation":
            step = "dbt hooks (on-run-start, on-run-end)"
        elif kind == "model" and name.startswith("base_inputs__"):
            step = f"loader {name.removeprefix('base_inputs__')}"
        elif phase == 1:
            step = "staging and checks (models, tests)"
        elif kind == "model" and node.get("language") == "python":
            step = f"python model {name}"
        elif kind == "model":
            step = "SQL models"
        elif kind == "test":
            step = "dbt tests"
        else:
            step = f"other dbt nodes ({kind})"
        out.append((step, min(a for a, _ in stamps), max(b for _, b in stamps)))
    return out


def stage_windows(
    stage_times: list[list], start: float, end: float
) -> list[tuple[str, float, float]]:
    """The build's stages as (step, start, end); ``start``/``end``: the process's."""
    names = {
        # with --incremental also the copy of the warehouse aside (guard_load)
        "checking inputs": "pre-flight (input folder check)",
        "input gates": "input gates (SQL check)",
        # the suites, with the BI snapshot's copy of the marts running beside them
        # (build.validate_and_publish): the copy's CPU is counted here while they run
        "validation": "Great Expectations validation",
        # the rest of the snapshot's copy once the suites passed, and its publish
        "publishing": "BI snapshot",
    }
    out = [("start-up (interpreter, imports)", start, stage_times[0][1])]
    phase = 0
    for (stage, a), (_, b) in zip(stage_times, stage_times[1:], strict=False):
        if stage == "dbt build":
            phase += 1
            out.append((f"dbt phase {phase}", a, b))
        else:
            out.append((names.get(stage, stage), a, b))
    out.append(("exit", stage_times[-1][1], end))
    return out


def attribute(
    stages: list[tuple[str, float, float]],
    nodes: dict[int, list[tuple[str, float, float]]],
    samples: list[tuple[float, float, float]],
) -> list[Step]:
    """Partition the stages' time among steps: in a dbt phase, among the nodes
    running (equal shares), the rest to the phase's start-up and between-node cost."""
    times = [s[0] for s in samples]
    steps: dict[str, Step] = {}

    def cpu_at(t: float) -> float:
        i = bisect_left(times, t)
        if i == 0:
            return samples[0][2]
        if i == len(times):
            return samples[-1][2]
        (t0, _, c0), (t1, _, c1) = samples[i - 1], samples[i]
        return c0 + (c1 - c0) * (t - t0) / max(t1 - t0, 1e-9)

    def rss_in(a: float, b: float) -> float:
        inside = [s[1] for s in samples[bisect_left(times, a) : bisect_right(times, b)]]
        i = min(bisect_left(times, a), len(samples) - 1)
        # a step shorter than the sampling interval: the sample after it, or the one
        # before it when the tree had ended by then (a build's exit takes milliseconds)
        after = samples[i][1] or samples[max(i - 1, 0)][1]
        return max(inside or [after]) or after

    def add(name: str, a: float, b: float, share: float) -> None:
        step = steps.setdefault(name, Step(name))
        step.wall += (b - a) * share
        step.cpu += (cpu_at(b) - cpu_at(a)) * share
        step.peak_mb = max(step.peak_mb, rss_in(a, b))

    phase = 0
    for name, a, b in stages:
        if not name.startswith("dbt phase"):
            add(name, a, b, 1.0)
            continue
        phase += 1
        windows = [(s, max(x, a), min(y, b)) for s, x, y in nodes.get(phase, []) if y > a and x < b]
        for s, _, _ in windows:
            steps.setdefault(s, Step(s)).nodes += 1
        cuts = sorted({a, b, *(x for _, x, _ in windows), *(y for _, _, y in windows)})
        for x, y in zip(cuts, cuts[1:], strict=False):
            mid = (x + y) / 2
            running = [s for s, p, q in windows if p <= mid < q]
            for s in running:
                add(s, x, y, 1 / len(running))
            if not running:
                where = "between nodes"
                if windows and y <= min(p for _, p, _ in windows):
                    where = "start-up, parse (to the first node)"
                elif windows and x >= max(q for _, _, q in windows):
                    where = "after the last node"
                add(f"dbt phase {phase}: {where}", x, y, 1.0)
    return list(steps.values())


@dataclass
class BuildProfile:
    steps: list[Step]
    wall: float  # the build process's wall time, measured here
    cpu: float  # its CPU time and its descendants' (getrusage)
    peak_mb: float  # the largest sample of the process tree
    largest_process_mb: float  # the largest single process's peak (VmHWM, sampled)
    # the slowest single dbt nodes: (name, seconds from compile start to execute end;
    # wall, shared with the node running beside it)
    slowest: list[tuple[str, float]] = field(default_factory=list)


def profile_build(
    data: Path, db: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> BuildProfile:
    """Run `judge-bias build --data data --db db [args]` and profile it (see the module)."""
    cmd = [str(Path(sys.executable).with_name("judge-bias")), "build", "--data", str(data)]
    cmd += ["--db", str(db), *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        output, _ = proc.communicate()
    except BaseException:  # the bench interrupted: the build (and its dbt) stop too
        sampler.stop()
        stop_child(proc)
        raise
    end = time.time()
    samples = sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"judge-bias build failed ({proc.returncode}):\n{output[-3000:]}")
    record = json.loads(db.with_name(f"{db.stem}.build.json").read_text())
    target = db.parent / f"{db.stem}.dbt" / "target"
    manifest = json.loads((target / "manifest.json").read_text())
    nodes = {
        1: node_windows(target / "run_results.gates.json", manifest, 1),
        2: node_windows(target / "run_results.json", manifest, 2),
    }
    steps = attribute(stage_windows(record["stage_times"], start, end), nodes, samples)
    spans = [span for phase in (1, 2) for span in _node_spans(target, phase)]
    slowest = sorted(((uid.split(".")[2], b - a) for uid, a, b in spans), key=lambda kv: -kv[1])
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    peak = max(s[1] for s in samples)
    return BuildProfile(steps, end - start, cpu, peak, sampler.largest_mb, slowest[:10])


def _node_spans(target: Path, phase: int) -> list[tuple[str, float, float]]:
    """(unique id, start, end) of each node of one phase's run_results."""
    name = "run_results.gates.json" if phase == 1 else "run_results.json"
    out = []
    for r in json.loads((target / name).read_text())["results"]:
        stamps = [(_epoch(t["started_at"]), _epoch(t["completed_at"])) for t in r["timing"]]
        if stamps:
            out.append((r["unique_id"], min(a for a, _ in stamps), max(b for _, b in stamps)))
    return out


def format_profile(profile: BuildProfile, top: int = 40) -> list[str]:
    """The profile as a Markdown table, steps by wall time (the ``top`` first; the
    rest summed in one row)."""
    steps = sorted(profile.steps, key=lambda s: -s.wall)
    shown, rest = steps[:top], steps[top:]
    if rest:
        shown.append(
            Step(
                f"{len(rest)} other steps",
                sum(s.nodes for s in rest),
                sum(s.wall for s in rest),
                sum(s.cpu for s in rest),
                max(s.peak_mb for s in rest),
            )
        )
    lines = [
        "| step | dbt nodes | wall s | CPU s | peak MB (tree) | share of build |",
        "|---|---|---|---|---|---|",
    ]
    for s in shown:
        lines.append(
            f"| {s.name} | {s.nodes or ''} | {s.wall:.1f} | {s.cpu:.1f} | {s.peak_mb:,.0f} | "
            f"{s.wall / profile.wall:.1%} |"
        )
    lines.append(
        f"| **whole build** | {sum(s.nodes for s in steps)} | {profile.wall:.1f} | "
        f"{profile.cpu:.1f} | {profile.peak_mb:,.0f} | (steps sum to "
        f"{sum(s.wall for s in steps):.1f} s, {sum(s.cpu for s in steps):.1f} CPU s) |"
    )
    return lines


def ratings_floor(ratings: Path) -> dict:
    """steps.ratings_floor in a fresh (spawned) process: its peak memory is its own."""
    import multiprocessing

    from judge_bias.bench import steps

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(steps.ratings_floor, (str(ratings), ""))


# issue 34's targets for a whole build: (ratings, wall seconds, GB of the largest process)
SCALE_TARGETS = ((10_000_000, 90.0, 3.0), (100_000_000, 900.0, 6.0))


def scale_target(n_ratings: int) -> tuple[int, float, float]:
    """The target of the size nearest ``n_ratings`` from above (the largest past 100M):
    a 100M run was told "target < 90 s at 10M" (session 20)."""
    for target in SCALE_TARGETS:
        if n_ratings <= target[0]:
            return target
    return SCALE_TARGETS[-1]


def run_profile_bench(n_ratings: int) -> int:
    """`judge-bias bench --scale-build --rows N`: one build of N simulated ratings (and
    one human label per completion) profiled step by step, then the floor (one DuckDB
    scan of the ratings computing the bias sufficient statistics) and the ratio."""
    import tempfile

    from judge_bias.bench.runs import write_agreement_bench_data

    glms = os.environ.get("JUDGE_BIAS_GLM_MODELS", "the default set")
    rows, seconds, gb = scale_target(n_ratings)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        write_agreement_bench_data(tmp_path / "data", n_ratings, n_ratings // 6)
        try:
            profile = profile_build(tmp_path / "data", tmp_path / "scale.duckdb")
        except RuntimeError as exc:
            print(exc)
            return 1
        floor = ratings_floor(tmp_path / "data" / "judge_ratings.parquet")
    print(f"judge-bias build on {n_ratings:,} ratings (GLMs: {glms}), per step:")
    print("\n".join(format_profile(profile)))
    print(
        "slowest single dbt nodes (wall, shared with the node beside them): "
        + ", ".join(f"{name} {secs:.1f} s" for name, secs in profile.slowest)
    )
    print(
        f"floor (one DuckDB scan of judge_ratings.parquet: count, sum, sum of squares per "
        f"judge x model x dimension, {floor['cells']} cells, {floor['rows']:,} rows): "
        f"{floor['seconds']:.2f} s wall, {floor['cpu']:.2f} s CPU, {floor['peak_mb']:.0f} MB"
    )
    print(
        f"build / floor: {profile.wall / floor['seconds']:.0f}x wall, "
        f"{profile.cpu / max(floor['cpu'], 1e-3):.0f}x CPU, "
        f"{profile.peak_mb / floor['peak_mb']:.1f}x memory; build {profile.wall:.0f} s "
        f"(target < {seconds:.0f} s at {rows // 1_000_000}M), peak "
        f"{profile.peak_mb / 1024:.2f} GB for the process tree, "
        f"{profile.largest_process_mb / 1024:.2f} GB its largest process "
        f"(target < {gb:.0f} GB at {rows // 1_000_000}M)"
    )
    return 0
