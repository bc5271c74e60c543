"""CFLUE, the knowledge part: questions from Chinese finance qualification exams (data/knowledge/).

Each question's subject is its exam (名称) and its domain its task (单项选择题 / 多项选择题 / 判断题); the
leaderboard gives accuracy per task and over all questions. The default prompt is `cflue`, CFLUE's own
zero-shot prompt as its repository's code sends it (official_prompt.py); `cflue-kaoshi` asks for
the same `答案：` / `解析：` lines in kaoshi's words, with exemplars (prompts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, LoadRequest, PublishedCheck
from kaoshi.benchmarks.cflue.loader import CFLUE_TASKS, holds_cflue, load_cflue
from kaoshi.benchmarks.cflue.official_prompt import CFLUE as CFLUE_PROMPT
from kaoshi.benchmarks.cflue.prompts import CFLUE_KAOSHI
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.layout import ACCURACY, LeaderboardLayout

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

CFLUE_SPLIT = "test"


def load(request: LoadRequest) -> LoadResult:
    """knowledge.json from `request.data`; one split, 'test'. CFLUE is read from `--data` only."""
    if request.split not in (None, CFLUE_SPLIT):
        raise DataError(f"CFLUE's knowledge part has a single split ('test'), got {request.split!r}")
    if request.data is None:
        raise DataError(
            "cflue reads a local copy: give --data PATH (the CFLUE repository, its data/ folder, or "
            "data/knowledge/knowledge.json)"
        )
    return load_cflue(request.data)


class CflueLayout(LeaderboardLayout):
    """Accuracy per task (单项选择题, 多项选择题, 判断题), then over all questions."""

    note = "a column per CFLUE task; accuracy is over all questions (判断题 answered A 对 / B 错)"

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        present = {name for s in summaries for name in s.groups.get("domain", {})}
        return [*(task for task in CFLUE_TASKS if task in present), ACCURACY]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        tasks = summary.groups.get("domain", {})
        values: dict[str, float | None] = {
            task: tasks[task].accuracy for task in CFLUE_TASKS if task in tasks
        }
        values[ACCURACY] = summary.overall.accuracy
        return values


CFLUE = Benchmark(
    name="cflue",
    description="CFLUE knowledge: finance qualification exam questions (single, multiple choice, 判断题)",
    load=load,
    default_prompt="cflue",
    detect=holds_cflue,
    leaderboard=CflueLayout(),
    formats="the CFLUE repository, its data/ folder, or data/knowledge/knowledge.json (a JSON array)",
    splits=(CFLUE_SPLIT,),
    size="3,864 knowledge questions: 2,345 单项选择题 + 1,171 多项选择题 + 348 判断题 (aliyun/cflue ff28c38)",
    licence="CC BY-NC-SA 4.0",
    published=PublishedCheck(
        repository="aliyun/cflue",
        commit="ff28c38f9618b51b6747f275b09d24c14fe58509",
        official_count="3,864 knowledge questions",
        loaded="3,864, no warning",
        prompt_parity="identical on 3,864 rows (exec_knowledge_eval's own prompts)",
        score_parity=(
            "equal on 12 of 24 reply styles; differs where its reader misreads ('答案为X', 'Answer: X', "
            "bold, ...) and on a cut-off think block (kaoshi reads none)"
        ),
    ),
    templates=(CFLUE_PROMPT, CFLUE_KAOSHI),
)
