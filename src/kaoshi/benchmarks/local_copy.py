"""The load of a benchmark read from a local copy only, because its hub copy is a loading script (CMMLU's,
M3KE's), which `datasets>=4` does not run."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from kaoshi.benchmarks.base import LoadRequest
from kaoshi.data.collect import LoadResult
from kaoshi.data.hub import loading_script_only


class SplitFolderReader(Protocol):
    """A reader of a copy in split folders (`load_cmmlu`, `load_m3ke`)."""

    def __call__(
        self, path: Path, split: str | None = None, *, subjects: Iterable[str] | None = None
    ) -> LoadResult: ...


def local_copy_load(read: SplitFolderReader, hub_id: str, source: str) -> Callable[[LoadRequest], LoadResult]:
    """The load of a benchmark whose hub copy is only a loading script (CMMLU, M3KE): `read` the --data
    copy; without one, the line saying to download it from `source`."""

    def load(request: LoadRequest) -> LoadResult:
        if request.data is None:
            raise loading_script_only(hub_id, source)
        return read(request.data, request.split, subjects=request.subjects)

    return load
