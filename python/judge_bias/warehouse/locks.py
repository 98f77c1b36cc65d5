"""A DuckDB file held by another process, told in one line: the file, the
holder (DuckDB's lock error names its program and PID) and what to do; and a
write-ahead log DuckDB refuses to replay onto the file, found, set aside (the
build) or named (the readers)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

LOCK_ERROR = re.compile(
    r'Could not set lock on file "(?P<file>.*)": Conflicting lock is held in '
    r"(?P<program>.*?) \(PID (?P<pid>\d+)\)"
)


def _command_line(pid: int, width: int = 80) -> str | None:
    """The holder's command line (Linux), shortened."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    text = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    return text if len(text) <= width else text[: width - 3] + "..."


def lock_message(error: str, open_instead: Path | None = None) -> str | None:
    """One line for a DuckDB lock error (None when ``error`` is not one).
    ``open_instead``: for readers, the file to read instead (the BI snapshot)."""
    m = LOCK_ERROR.search(error)
    if m is None:
        return None
    pid = int(m["pid"])
    holder = _command_line(pid) or m["program"]
    text = f"{m['file']} is locked by another process: PID {pid} ({holder})"
    if open_instead is not None:
        return f"{text}; wait for it to finish, or open {open_instead} instead"
    return (
        f"{text}; close that connection or wait for it to finish, then build again "
        "(BI tools should open the BI snapshot, which builds never lock)"
    )


# DuckDB's refusals of a write-ahead log it cannot replay onto the file: another
# database's log, or this file's from a later checkpoint (a byte copy put back beside
# the log of a killed build that had checkpointed). Both name the log.
STALE_WAL = re.compile(
    r'Failure while replaying WAL file "(?P<file>.*?)": (?P<why>WAL does not match database '
    r"file|This WAL was created for this database file, but the WAL checkpoint iteration "
    r"does not match the database file)"
)


def stale_wal(error: str, db: Path) -> tuple[Path, str] | None:
    """The log DuckDB refuses to replay onto ``db`` and why (None when ``error`` is
    not such a refusal). The log is ``db``'s own (``<db>.wal``, or
    ``<db>.wal.checkpoint`` in a recovery) or a ValueError says it is not."""
    m = STALE_WAL.search(error)
    if m is None:
        return None
    log = Path(m["file"])
    ours = {db.with_name(db.name + suffix).resolve() for suffix in (".wal", ".wal.checkpoint")}
    if log.resolve() not in ours:
        raise ValueError(f"DuckDB cannot replay {log} onto {db}, which is not its log")
    return log, m["why"][0].lower() + m["why"][1:]


def set_aside_stale_wal(log: Path) -> Path:
    """``log`` (a log ``stale_wal`` found) renamed to ``<log>.stale-<UTC time>``: kept,
    never deleted; ``-<pid>`` added when a log was set aside in the same second."""
    aside = log.with_name(f"{log.name}.stale-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    if aside.exists():
        aside = aside.with_name(f"{aside.name}-{os.getpid()}")
    os.replace(log, aside)
    return aside


def stale_wal_message(error: str, db: Path) -> str | None:
    """One line for readers (``validate``, ``report``): the log DuckDB refuses and what
    to do (a reader moves nothing). None when ``error`` is not such a refusal."""
    try:
        found = stale_wal(error, db)
    except ValueError as exc:
        return str(exc)
    if found is None:
        return None
    log, why = found
    return (
        f"{log} cannot be replayed onto {db} (DuckDB: {why}; a log left by a killed "
        "build): run `judge-bias build`, which moves it aside, or move it aside yourself"
    )
