"""What the store's files hold, told in a few microseconds: the key of every result the viewer keeps, so that
any change to the store's content makes them miss, however it was made.

A run's signature (kaoshi.view.queries) follows kaoshi's own writes, which add rows; it misses a store
replaced by another with the same runs (`os.replace`, a copy over the file) and rows rewritten in place (an
UPDATE). The files show all of these:

- the main file: its identity (device, inode: a replaced file is another), size, modification and change
  times, and its 100-byte header, whose change counter SQLite bumps on each commit outside WAL mode;
- in WAL mode commits land in the -wal first, and the -wal alone may not show one (after a checkpoint a
  writer starts the -wal again from its start, within the size it had, and a file's times tick in
  milliseconds): the -shm's wal-index header, which the writer rewrites on every commit (its change
  counter and last frame; sqlite.org/walformat.html), does.

Readers (the viewer's own read-only connections) make the -shm and an empty -wal and touch the -shm's
times, not its header: an empty -wal holds nothing, so it and the -shm count only when the -wal has frames.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The database header (sqlite.org/fileformat.html), the -wal's header, and the -shm's first copy of the
# wal-index header (after the two copies come the read marks, which readers rewrite).
DB_HEADER = 100
WAL_HEADER = 32
WAL_INDEX_HEADER = 48

FileState = tuple[object, ...]


@dataclass(frozen=True)
class StoreState:
    """The state of a store's files: equal states, the same content."""

    file: FileState  # the main file
    log: FileState | None  # the -wal and the -shm's wal-index header; None while the -wal holds nothing


def _read(path: str, size: int) -> FileState:
    """The file's identity, size and times (fstat of the same open: they describe the bytes read) and its
    first `size` bytes; what stopped it being read (none there, a folder) otherwise."""
    try:
        with open(path, "rb") as opened:
            stat = os.fstat(opened.fileno())
            head = opened.read(size)
    except OSError as exc:  # reading the store will say what is wrong
        return (type(exc).__name__, exc.errno)
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, head)


def _holds_frames(wal: str) -> bool:
    try:
        return os.stat(wal).st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True  # there, but unreadable: part of the state


def store_state(path: Path) -> StoreState:
    """The state of the store at `path`; read it before reading the store, so that what is read is at least
    as new as the state it is kept under."""
    file = _read(str(path), DB_HEADER)
    wal = f"{path}-wal"
    if not _holds_frames(wal):
        return StoreState(file, None)
    # the -shm's times change as readers open it: only its header counts
    return StoreState(file, (*_read(wal, WAL_HEADER), _read(f"{path}-shm", WAL_INDEX_HEADER)[-1]))
