"""Files written whole or not at all: written to a temporary file beside the target,
then renamed into place (``os.replace``), so readers in other processes see the old
file or the new one, and a write cut short (a full disk, a kill) leaves no half file
that a later build would take for a whole one. One home for the guard's copies
(incremental), the kept dbt parse (dbt_parse) and the rejected rows of a
rolled-back load."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path


def temporary_path(dst: Path) -> Path:
    """The temporary file name beside ``dst`` for this process and thread: two threads
    writing the same ``dst`` never share one (dbt_parse's parse cache)."""
    return dst.with_name(f".{dst.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def write_atomic(dst: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` then ``tmp`` renamed to ``dst``. A file of the same name left by a
    killed process (process and thread ids are reused, in containers at once) is
    removed first: ``write`` never finds an old file there (DuckDB would open it and
    its rows would come back). The temporary file is removed when ``write`` fails."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(dst)
    tmp.unlink(missing_ok=True)
    try:
        write(tmp)
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)


def copy_atomic(src: Path, dst: Path) -> None:
    """``src`` copied to ``dst`` whole or not at all (write_atomic)."""
    write_atomic(dst, lambda tmp: shutil.copyfile(src, tmp))
