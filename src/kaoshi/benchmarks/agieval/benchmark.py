"""AGIEval, its Chinese tasks: GAOKAO subjects, LogiQA and JEC-QA, single- and multi-answer choice and cloze;
its leaderboard shows each task and the mean over tasks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.agieval.loader import load_agieval, task_of
from kaoshi.benchmarks.agieval.prompts import AGIEVAL as AGIEVAL_PROMPT
from kaoshi.benchmarks.agieval.rows import AGIEVAL_TASKS
from kaoshi.benchmarks.base import Benchmark, LoadRequest, PublishedCheck, Specificity
from kaoshi.benchmarks.common.sniff import first_jsonl_record
from kaoshi.benchmarks.common.statistics import CATEGORY_AVERAGES
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.layout import ACCURACY, LeaderboardLayout

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

AVERAGE = "Average"
# Fields only AGIEval's rows have together (kaoshi's schema has no passage or label).
_AGIEVAL_KEYS = {"passage", "question", "options", "label"}


def load(request: LoadRequest) -> LoadResult:
    """The AGIEval repository, its data/v1 folder or one task file; there is no hub copy."""
    if request.data is None:
        raise DataError(
            "benchmark 'agieval' needs --data PATH: the AGIEval repository, its data/v1 folder or one task "
            "file such as gaokao-physics.jsonl"
        )
    return load_agieval(request.data, request.split, request.subjects)


def holds_agieval(path: Path) -> Specificity | None:
    """A folder with Chinese task files (itself or its data/v1) or a .jsonl file named after a task (its
    own names), or a .jsonl file whose first row has AGIEval's fields."""
    if path.is_dir():
        folder = path / "data" / "v1" if (path / "data" / "v1").is_dir() else path
        found = any((folder / f"{task}.jsonl").is_file() for task in AGIEVAL_TASKS)
        return Specificity.OWN_NAMES if found else None
    if path.suffix != ".jsonl":
        return None
    if task_of(path) in AGIEVAL_TASKS:
        return Specificity.OWN_NAMES
    first = first_jsonl_record(path)
    return Specificity.FORMAT if isinstance(first, dict) and set(first) >= _AGIEVAL_KEYS else None


class AgievalLayout(LeaderboardLayout):
    """A column per task (AGIEval's order), their mean, and accuracy over questions."""

    note = "Average is the mean of the task accuracies; (n/N): it covers n of AGIEval's N Chinese tasks"

    @property
    def headline(self) -> str:
        return AVERAGE

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        present = {task for s in summaries for task in s.groups.get("subject", {})}
        return [*(task for task in AGIEVAL_TASKS if task in present), AVERAGE, ACCURACY]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        tasks = summary.groups.get("subject", {})
        values: dict[str, float | None] = {task: tally.accuracy for task, tally in tasks.items()}
        values[AVERAGE] = summary.macro.get("subject")
        values[ACCURACY] = summary.overall.accuracy
        return values

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        graded = {task for task, t in summary.groups.get("subject", {}).items() if t.accuracy is not None}
        return {AVERAGE: (len(graded & set(AGIEVAL_TASKS)), len(AGIEVAL_TASKS))}


AGIEVAL = Benchmark(
    name="agieval",
    description="AGIEval (Chinese tasks): GAOKAO, LogiQA and JEC-QA questions; multi-answer and cloze",
    load=load,
    default_prompt="agieval",
    detect=holds_agieval,
    categories={task: source for task, (source, _) in AGIEVAL_TASKS.items()},
    metrics=(CATEGORY_AVERAGES,),
    leaderboard=AgievalLayout(),
    formats=(
        "the AGIEval repository, its data/v1 folder or one <task>.jsonl; data/few_shot_prompts.csv gives "
        "demos (--shots N); English tasks are skipped"
    ),
    splits=("test",),
    size=(
        "4,723 in 12 tasks: gaokao-chinese 246, -english 306, -geography 199, -history 235, -biology 210, "
        "-chemistry 207, -physics 200 (35 multi-answer), -mathqa 351, -mathcloze 118 (cloze), logiqa-zh 651, "
        "jec-qa-kd 1,000, jec-qa-ca 1,000"
    ),
    licence="per source: GAOKAO MIT, LogiQA CC BY-NC-SA 4.0, JEC-QA academic use only",
    published=PublishedCheck(
        repository="ruixiangcui/AGIEval",
        commit="5c77d073fda993f1652eaae3cf5d04cc5fd21d40",
        official_count="4,723 in 12 Chinese task files",
        loaded="4,723; 13 kinds of quirk warned (option prefixes 'A．' 'A.' 'A ', options out of order, ...)",
        prompt_parity=(
            "identical: zero-shot 4,723 completion + 4,723 chat; few-shot 21,209 completion (every "
            "demo count) + 4,723 chat"
        ),
        score_parity=(
            "equal on 9 reply styles; differs where the official reader misreads (first letter, "
            "'从A到D' read as A) and on 1 cloze reply; an empty-label row ungraded, not wrong"
        ),
    ),
    templates=(AGIEVAL_PROMPT,),
)
