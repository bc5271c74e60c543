"""CMMLU (haonan-li/CMMLU): four-option questions in 67 subjects, four categories plus China-specific (15
subjects that also count in their own category); its leaderboard averages subject accuracies.

The hub copy `haonan-li/cmmlu` is a loading-script repo (cmmlu.py and a zip): `datasets>=4` runs no
scripts, so without --data the load says to download the data and pass --data PATH."""

from __future__ import annotations

from pathlib import Path

from kaoshi.benchmarks.base import Benchmark, LoadRequest
from kaoshi.benchmarks.subject_layout import SubjectLayout
from kaoshi.data.cmmlu import CMMLU_SPLITS, is_cmmlu_file, load_cmmlu
from kaoshi.data.cmmlu_subjects import CMMLU_COLUMNS, CMMLU_SUBJECTS, cmmlu_membership
from kaoshi.data.collect import LoadResult
from kaoshi.data.hub import loading_script_only

CMMLU_HUB_ID = "haonan-li/cmmlu"
CMMLU_SOURCE = "github.com/haonan-li/CMMLU, its data/ folder"


def load(request: LoadRequest) -> LoadResult:
    """A CMMLU copy (the repo root, data/, or one subject file); the test split by default."""
    if request.data is None:
        raise loading_script_only(CMMLU_HUB_ID, CMMLU_SOURCE)
    return load_cmmlu(request.data, request.split, subjects=request.subjects)


def is_cmmlu_data(path: Path) -> bool:
    """A CSV file with CMMLU's header, or a folder (or its data/) whose dev/ or test/ holds CMMLU subject
    files (named after a CMMLU subject, or with CMMLU's header)."""
    if path.is_file():
        return is_cmmlu_file(path)
    for folder in (path, path / "data"):
        for split in CMMLU_SPLITS:
            if not (folder / split).is_dir():
                continue
            files = sorted((folder / split).glob("*.csv"))
            if any(f.stem in CMMLU_SUBJECTS for f in files) or (files and is_cmmlu_file(files[0])):
                return True
    return False


CMMLU = Benchmark(
    name="cmmlu",
    description="CMMLU: four-option questions in 67 subjects, four categories and China-specific (dev, test)",
    load=load,
    default_prompt="cmmlu",
    detect=is_cmmlu_data,
    hub_id=CMMLU_HUB_ID,
    categories={subject: info.category for subject, info in CMMLU_SUBJECTS.items()},
    leaderboard=SubjectLayout(
        cmmlu_membership(),
        CMMLU_COLUMNS,
        note=(
            "categories are means of subject accuracies; a China-specific subject also counts in its own "
            "category; Average is over all subjects; (n/N): the average covers n of the N subjects CMMLU "
            "averages over"
        ),
    ),
    formats="the repo root, its data/ folder (dev/ test/ <subject>.csv), or one subject's CSV file",
    splits=CMMLU_SPLITS,
    size="11,917: 335 dev + 11,582 test",
    licence="CC BY-NC-SA 4.0",
)
