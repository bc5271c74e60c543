"""M3KE (tjunlp-lab/M3KE): four-option questions in 71 tasks (subject x education level) and four
clusters. Only dev (5 per task) has answers; test's are withheld, so a test run is answered, not graded,
and its answers are exported as JSON. M3KE published no prompt text, so its default is kaoshi's own.

The hub copy `TJUNLP/M3KE` is a loading-script repo (M3KE.py): `datasets>=4` runs no scripts, so without
--data the load says to download the data and pass --data PATH."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, Exporter, PublishedCheck, Specificity
from kaoshi.benchmarks.common.statistics import CATEGORY_AVERAGES
from kaoshi.benchmarks.local_copy import local_copy_load
from kaoshi.benchmarks.m3ke.loader import M3KE_SPLITS, is_m3ke_file, load_m3ke
from kaoshi.benchmarks.m3ke.tasks import M3KE_CLUSTERS, M3KE_TASKS, MAPPING_FILE
from kaoshi.data.split_folders import split_folder_files
from kaoshi.results.subject_layout import SubjectLayout

if TYPE_CHECKING:
    from kaoshi.store.records import RunRecord, SampleRecord

M3KE_HUB_ID = "TJUNLP/M3KE"
M3KE_SOURCE = "github.com/tjunlp-lab/M3KE, its data/ folder and subject_cluster.mapping.json"


def is_m3ke_data(path: Path) -> Specificity | None:
    """An M3KE task file (`{Subject}-{Cluster}-{Level}.jsonl`, named with M3KE's own clusters), a folder
    whose dev/ or test/ (its own or its data/'s) holds such files, or a folder holding M3KE's mapping."""
    if path.is_file():
        return Specificity.OWN_NAMES if is_m3ke_file(path) else None
    folders = split_folder_files(path, M3KE_SPLITS, ".jsonl")
    if any(is_m3ke_file(f) for files in folders for f in files):
        return Specificity.OWN_NAMES
    return Specificity.FORMAT if (path / MAPPING_FILE).is_file() else None


def write_answers(run: RunRecord, samples: Iterable[SampleRecord], path: Path) -> tuple[str, ...]:
    """The answers of a run on M3KE's test split as JSON, {task: {id: letter}}."""
    # Late import: the exporter reads the store (sqlite3), which loading M3KE never needs.
    from kaoshi.benchmarks.common.answer_files import AnswerFile, export_answer_file

    return export_answer_file(AnswerFile("m3ke", "M3KE", "answer file"), run, samples, path)


M3KE = Benchmark(
    name="m3ke",
    description="M3KE: four-option questions in 71 tasks, four clusters (dev scored; test labels withheld)",
    load=local_copy_load(load_m3ke, M3KE_HUB_ID, M3KE_SOURCE),
    default_prompt="default",
    detect=is_m3ke_data,
    hub_id=M3KE_HUB_ID,
    categories=M3KE_TASKS,
    metrics=(CATEGORY_AVERAGES,),
    leaderboard=SubjectLayout(
        {task: (cluster,) for task, cluster in M3KE_TASKS.items()},
        M3KE_CLUSTERS,
        note=(
            "clusters are means of task accuracies, Average is over all tasks; (n/N): the average covers n "
            "of M3KE's N tasks; a test run has no labels to grade (kaoshi export m3ke-answers)"
        ),
    ),
    exporters=(
        Exporter("m3ke-answers", "the answers of an M3KE test run, {task: {id: letter}}", write_answers),
    ),
    formats="the repo root, its data/ folder (dev/ test/ <Subject>-<Cluster>-<Level>.jsonl), or a task file",
    splits=M3KE_SPLITS,
    size="20,477: 355 dev + 20,122 test (test answers withheld)",
    licence="Apache-2.0 (the hub card)",
    published=PublishedCheck(
        repository="tjunlp-lab/M3KE",
        commit="b370aae92167610791c34d16ef1b5a3e41805e62",
        official_count="355 dev + 20,122 test",
        loaded="355 + 20,122; 3 empty options warned",
        prompt_parity="— (no official code)",
        score_parity="— (no official code)",
    ),
)
