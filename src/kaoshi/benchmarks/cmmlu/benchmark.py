"""CMMLU (haonan-li/CMMLU): four-option questions in 67 subjects, four categories plus China-specific (15
subjects that also count in their own category); its leaderboard averages subject accuracies.

The hub copy `haonan-li/cmmlu` is a loading-script repo (cmmlu.py and a zip): `datasets>=4` runs no
scripts, so without --data the load says to download the data and pass --data PATH."""

from __future__ import annotations

from pathlib import Path

from kaoshi.benchmarks.base import Benchmark, PublishedCheck, Specificity
from kaoshi.benchmarks.cmmlu.loader import CMMLU_SPLITS, is_cmmlu_file, load_cmmlu
from kaoshi.benchmarks.cmmlu.prompts import CMMLU_ANSWER_ONLY, CMMLU_COT
from kaoshi.benchmarks.cmmlu.subjects import CMMLU_COLUMNS, CMMLU_SUBJECTS, cmmlu_membership
from kaoshi.benchmarks.common.statistics import CATEGORY_AVERAGES
from kaoshi.benchmarks.local_copy import local_copy_load
from kaoshi.data.split_folders import split_folder_files
from kaoshi.results.subject_layout import SubjectLayout

CMMLU_HUB_ID = "haonan-li/cmmlu"
CMMLU_SOURCE = "github.com/haonan-li/CMMLU, its data/ folder"


def is_cmmlu_data(path: Path) -> Specificity | None:
    """A CSV file with CMMLU's header, or a folder (or its data/) whose dev/ or test/ holds CMMLU subject
    files: by their names (CMMLU's own), else by the first one's header."""
    if path.is_file():
        if not is_cmmlu_file(path):
            return None
        return Specificity.OWN_NAMES if path.stem in CMMLU_SUBJECTS else Specificity.FORMAT
    folders = list(split_folder_files(path, CMMLU_SPLITS, ".csv"))
    if any(f.stem in CMMLU_SUBJECTS for files in folders for f in files):
        return Specificity.OWN_NAMES
    return Specificity.FORMAT if any(files and is_cmmlu_file(files[0]) for files in folders) else None


CMMLU = Benchmark(
    name="cmmlu",
    description="CMMLU: four-option questions in 67 subjects, four categories and China-specific (dev, test)",
    load=local_copy_load(load_cmmlu, CMMLU_HUB_ID, CMMLU_SOURCE),
    default_prompt="cmmlu",
    detect=is_cmmlu_data,
    hub_id=CMMLU_HUB_ID,
    categories={subject: info.category for subject, info in CMMLU_SUBJECTS.items()},
    metrics=(CATEGORY_AVERAGES,),
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
    published=PublishedCheck(
        repository="haonan-li/CMMLU",
        commit="d6e7b716d8ac694f38969a6c0407437d1fded799",
        official_count="11,582 test + 335 dev",
        loaded="11,582 + 335, no warning",
        prompt_parity=(
            "identical on 11,582 rows: answer-only and CoT, 0/5-shot, completion and chat; the "
            "longest exemplars dropped first"
        ),
        score_parity="— (next-token argmax; the chat reader's last resort is a random letter)",
    ),
    templates=(CMMLU_ANSWER_ONLY, CMMLU_COT),
)
