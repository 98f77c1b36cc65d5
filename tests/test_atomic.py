"""judge_bias.warehouse.atomic: a file written whole or not at all, by any thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from judge_bias.warehouse.atomic import copy_atomic, temporary_path, write_atomic


def test_two_threads_copying_to_one_file_never_share_a_temporary(tmp_path: Path) -> None:
    """dbt_parse keeps its parse from two threads at once: each thread's temporary name
    is its own, so every copy lands whole (the file read after any copy is one of the
    two sources, byte for byte) and none fails. Fails when the name is by process only
    (one thread renames or unlinks the other's temporary file: FileNotFoundError, or a
    copy of the other's bytes)."""
    sources = []
    for i in range(2):
        src = tmp_path / f"src{i}"
        src.write_bytes(bytes([i]) * 200_000)
        sources.append(src)
    dst = tmp_path / "dst"
    names: list[Path] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(src: Path) -> None:
        names.append(temporary_path(dst))
        start.wait()
        try:
            for _ in range(300):
                copy_atomic(src, dst)
                assert dst.read_bytes() in (sources[0].read_bytes(), sources[1].read_bytes())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(set(names)) == 2
    assert not list(tmp_path.glob(".dst.*.tmp"))


def test_a_temporary_left_by_a_killed_process_is_cleared_and_a_failed_write_leaves_none(
    tmp_path: Path,
) -> None:
    """A file of this process's and thread's temporary name left by a killed process
    (ids are reused) is removed before ``write`` runs, not appended to nor opened; a
    ``write`` that raises leaves no temporary file and ``dst`` as it was. Fails without
    the first unlink (the write sees the old bytes)."""
    dst = tmp_path / "dst"
    left = tmp_path / f".dst.{os.getpid()}.{threading.get_ident()}.tmp"
    left.write_bytes(b"old rows")
    seen: list[bool] = []

    def write(tmp: Path) -> None:
        seen.append(tmp.exists())
        with tmp.open("ab") as f:
            f.write(b"new")

    write_atomic(dst, write)
    assert seen == [False] and dst.read_bytes() == b"new" and not left.exists()

    def fail(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(dst, fail)
    assert dst.read_bytes() == b"new" and not left.exists()
