"""A made-up benchmark written the way a user adds one: this one module, kaoshi left untouched.

Its format: a `.toy` file of tab-separated rows `id  subject  question  option|option|...  answer-letter`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from kaoshi.benchmarks import Benchmark, Exporter, LoadRequest, register_benchmark
from kaoshi.data import DataError, Exam, LoadResult, Question, QuestionType, format_gold
from kaoshi.data.collect import QuestionCollector
from kaoshi.data.errors import FieldError
from kaoshi.report import RunSummary
from kaoshi.results.layout import LeaderboardLayout
from kaoshi.store.records import RunRecord, SampleRecord

NAME = "toy"
CATEGORIES = {"arithmetic": "Math", "geography": "World"}


def toy_question(line: str) -> Question:
    cells = line.split("\t")
    if len(cells) != 5:
        raise FieldError(None, f"expected 5 tab-separated cells, got {len(cells)}")
    row_id, subject, stem, options, answer = cells
    letters = "ABCDEFGH"[: len(options.split("|"))]
    if answer not in letters:
        raise FieldError("answer", f"{answer!r} is not one of {letters}")
    return Question(
        id=row_id,
        type=QuestionType.SINGLE,
        stem=stem,
        options=tuple(zip(letters, options.split("|"), strict=True)),
        answer=frozenset(answer),
        subject=subject,
        category=CATEGORIES.get(subject),
        split="test",
    )


def load_toy(request: LoadRequest) -> LoadResult:
    if request.data is None:
        raise DataError("the toy benchmark needs --data PATH to a .toy file")
    collector = QuestionCollector(str(request.data))
    for number, line in enumerate(request.data.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            collector.add(number, partial(toy_question, line))
    wanted = set(request.subjects or CATEGORIES)
    questions = tuple(q for q in collector.questions if q.subject in wanted)
    # No "benchmark" in the metadata: load_exam files the exam under the name it was loaded as.
    exam = Exam("toy exam", questions, metadata={"path": str(request.data)})
    return LoadResult(exam, tuple(collector.errors))


class ToyLayout(LeaderboardLayout):
    """A column per subject, then their mean, which ranks the runs."""

    headline = "subject mean"
    note = "toy: one column per subject"

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        subjects = sorted({name for s in summaries for name in s.groups.get("subject", {})})
        return [*subjects, self.headline]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        values = {name: t.accuracy for name, t in summary.groups.get("subject", {}).items()}
        return {**values, self.headline: summary.macro.get("subject")}

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        return {self.headline: (len(summary.groups.get("subject", {})), len(CATEGORIES))}


def write_answers(run: RunRecord, samples: Iterable[SampleRecord], path: Path) -> tuple[str, ...]:
    lines = [f"{s.question_id}\t{format_gold(s.answer)}" for s in samples]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return (f"wrote {path}: {len(lines)} answers",)


TOY = Benchmark(
    name=NAME,
    description="a toy benchmark: two subjects of easy questions",
    load=load_toy,
    default_prompt="qualbench-zero",
    detect=lambda path: path.suffix == ".toy",
    categories=CATEGORIES,
    leaderboard=ToyLayout(),
    exporters=(Exporter("toy-answers", "id and answer per line", write_answers),),
)


def register() -> Benchmark:
    return register_benchmark(TOY)
