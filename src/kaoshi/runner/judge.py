"""Grading a run's open answers with LLM judges; every judge call is stored, so judging resumes.

Grades live beside the run's samples (one per question and grader); `report` folds the chosen grader's
points into the subject totals. The evaluated model is never called again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kaoshi.models.base import GenerateRequest, Model, ModelOutput
from kaoshi.prompts.judge import (
    JUDGE_PROMPT_VERSION,
    POINTS_MODE,
    debate_prompt,
    judge_prompt,
    judge_prompt_version,
    points_judge_prompt,
)
from kaoshi.qtypes import kind_of
from kaoshi.runner.batching import BatchPolicy, batched_generate
from kaoshi.scoring.judge_parse import parse_judge_score
from kaoshi.store.records import GradeRecord, GradeStatus, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store

DEBATE_SUFFIX = "::debate"
# A GAOKAO grader states points, not a 0-10 score: any number up to this is read, then capped at the item's
# points (an essay is worth 60 at most; a judge's "15分" for a 12-point item is read as 12, not dropped).
POINTS_READ_LIMIT = 1000.0


@dataclass(frozen=True)
class JudgeSetup:
    mode: str  # careful / general / debate / gaokao
    judge: str  # model spec of the (first) judge
    second_judge: str | None = None  # debate only; defaults to the first judge
    max_new_tokens: int = 512

    @property
    def prompt_version(self) -> int:
        """The version of this mode's judge prompts (kaoshi.prompts.judge), stored with each grade."""
        return judge_prompt_version(self.mode)

    @property
    def grader(self) -> str:
        """The name grades are stored under, e.g. `careful:openai:gpt-4o` or `debate:a+b`. A prompt version
        after the first is part of it (`careful@v2:openai:gpt-4o`): grades made with two versions of a
        prompt are two graders, and the names of the first version's graders stay as they were."""
        mode = self.mode
        if self.prompt_version != JUDGE_PROMPT_VERSION:
            mode = f"{mode}@v{self.prompt_version}"
        if self.mode == "debate":
            return f"{mode}:{self.judge}+{self.second_judge or self.judge}"
        return f"{mode}:{self.judge}"


@dataclass(frozen=True)
class JudgeOutcome:
    grader: str
    graded: int
    unparsed: int
    errors: int
    already: int
    seconds: float

    @property
    def asked(self) -> int:
        """Judge calls' grades this time (0: nothing was left to grade, no judge was loaded)."""
        return self.graded + self.unparsed + self.errors


def judgeable(samples: Iterable[SampleRecord]) -> list[SampleRecord]:
    """Judged (subjective) questions with a reference answer and a stored response."""
    return [
        s
        for s in samples
        if not kind_of(s.qtype).objective
        and isinstance(s.gold, str)
        and s.gold
        and s.status != SampleStatus.ERROR
        and s.response
    ]


def _todo(
    store: Store, run: str, grader: str
) -> tuple[list[SampleRecord], list[SampleRecord], dict[str, GradeRecord]]:
    """(open answers still to grade, all open answers, the grader's stored grades); errors and
    unfinished debates are still to grade."""
    stored = store.grades(run, grader)
    samples = judgeable(store.iter_samples(run))
    done = {q for q, g in stored.items() if g.status in (GradeStatus.OK, GradeStatus.UNPARSED)}
    return [s for s in samples if s.question_id not in done], samples, stored


def pending(store: Store, run: str, setup: JudgeSetup) -> tuple[int, int]:
    """(open answers still to grade by this setup, open answers in all)."""
    todo, samples, _ = _todo(store, run, setup.grader)
    return len(todo), len(samples)


def _request(
    sample: SampleRecord, prompt: str, suffix: str, chat: bool, max_new_tokens: int
) -> GenerateRequest:
    messages = (("user", prompt),) if chat else None
    return GenerateRequest(
        sample.question_id + suffix, prompt, max_new_tokens=max_new_tokens, messages=messages
    )


def _round(judge: str, prompt: str, output: ModelOutput, item_points: float | None = None) -> dict[str, Any]:
    """One judge call's record. item_points: the judge gives points out of these (gaokao), else 0-10."""
    # The prompt goes along so that a judge repeating its scale, rubric or template is not read as scoring.
    limit = POINTS_READ_LIMIT if item_points is not None else 10.0
    parsed = parse_judge_score(output.text or "", prompt, limit) if output.error is None else None
    record: dict[str, Any] = {
        "judge": judge,
        "prompt": prompt,
        "reply": output.text,
        "error": output.error,
        "score": parsed.score if parsed else None,
        "status": GradeStatus.ERROR.value if parsed is None else parsed.status,
    }
    # what the call cost, where its server said (the ledger's judge role: kaoshi.api.ledger.read_judge_usage)
    for name, count in (("tokens_in", output.tokens_in), ("tokens_out", output.tokens_out),
                        ("tokens_cached", output.cached_tokens)):  # fmt: skip
        if count is not None:
            record[name] = count
    if output.batch_id is not None:  # priced at the batch share
        record["batch_id"] = output.batch_id
    if item_points is not None and record["score"] is not None:
        awarded = float(record["score"])
        given = min(awarded, item_points)
        # Stored on kaoshi's 0-10 scale like every grade; the points as the judge gave them beside it.
        record.update(points_awarded=awarded, capped=awarded > item_points, score=10 * given / item_points)
    return record


def _grade(sample: SampleRecord, setup: JudgeSetup, rounds: list[dict[str, Any]]) -> GradeRecord:
    """The grade the last round gives (its status, "ok" / "unparsed" / "error", is the grade's)."""
    final = rounds[-1]
    status = GradeStatus(final["status"])
    score = final["score"] if status is GradeStatus.OK else None
    points = None if score is None else sample.points * score / 10
    if score is not None and "points_awarded" in final:
        points = min(float(final["points_awarded"]), sample.points)  # exact, not through the 0-10 scale
    return GradeRecord(
        sample.question_id, setup.grader, status, score, points, tuple(rounds), setup.prompt_version
    )


def _first_prompt(mode: str, sample: SampleRecord) -> str:
    if mode == POINTS_MODE:
        analysis = str(sample.question.get("explanation", ""))
        return points_judge_prompt(
            _stem(sample), analysis, str(sample.gold), sample.points, sample.response or ""
        )
    return judge_prompt(mode, _stem(sample), str(sample.gold), sample.response or "")


def judge_run(
    store: Store,
    run: str,
    setup: JudgeSetup,
    first: Model,
    second: Model | None = None,
    on_grade: Callable[[GradeRecord], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    batch: BatchPolicy | None = None,
) -> JudgeOutcome:
    """Grade the run's open answers not yet graded by this setup (errors and unfinished debates again).

    on_plan(total, done): before each round of judge calls (a debate has two), the open answers the round
    covers and how many of them have its grade stored already. on_grade: each grade as it is stored, one
    per judge call (a debate's first round gives a PARTIAL grade). batch: send the judge calls through the
    judges' batch endpoint (kaoshi.runner.batching), a batch round per debate round."""
    started = time.perf_counter()
    store.get_run(run)
    grader = setup.grader
    todo, samples, stored = _todo(store, run, grader)
    by_id = {s.question_id: s for s in todo}
    already = len(samples) - len(todo)
    grades: list[GradeRecord] = []

    def keep(grade: GradeRecord) -> None:
        store.add_grade(run, grade)
        if grade.status is not GradeStatus.PARTIAL:
            grades.append(grade)
        if on_grade is not None:
            on_grade(grade)

    # Round one: skipped for debates whose first round is already stored.
    first_rounds: dict[str, dict[str, Any]] = {
        q: dict(g.rounds[0]) for q, g in stored.items() if g.status is GradeStatus.PARTIAL and q in by_id
    }
    if on_plan is not None:
        on_plan(len(samples), already + len(first_rounds))
    prompts = {s.question_id: _first_prompt(setup.mode, s) for s in todo if s.question_id not in first_rounds}
    requests = [
        _request(by_id[q], text, "", first.default_chat, setup.max_new_tokens) for q, text in prompts.items()
    ]
    for output in _generate(store, run, f"judge:{grader}", first, requests, batch):
        sample = by_id[output.id]
        scale = sample.points if setup.mode == POINTS_MODE else None
        round_one = _round(setup.judge, prompts[output.id], output, scale)
        if setup.mode != "debate" or round_one["status"] == GradeStatus.ERROR:
            keep(_grade(sample, setup, [round_one]))
        else:
            first_rounds[output.id] = round_one
            version = setup.prompt_version
            keep(GradeRecord(output.id, grader, GradeStatus.PARTIAL, None, None, (round_one,), version))
    if setup.mode == "debate" and first_rounds:
        if on_plan is not None:
            on_plan(already + len(first_rounds), already)
        judge_two = second or first
        name_two = setup.second_judge or setup.judge
        second_prompts = {
            q: debate_prompt(
                _stem(by_id[q]),
                str(by_id[q].gold),
                by_id[q].response or "",
                r["reply"] or "",
                "无法读出" if r["score"] is None else f"{r['score']:g}",
            )
            for q, r in first_rounds.items()
        }
        requests = [
            _request(by_id[q], text, DEBATE_SUFFIX, judge_two.default_chat, setup.max_new_tokens)
            for q, text in second_prompts.items()
        ]
        for output in _generate(store, run, f"judge2:{grader}", judge_two, requests, batch):
            question_id = output.id.removesuffix(DEBATE_SUFFIX)
            round_two = _round(name_two, second_prompts[question_id], output)
            rounds = [first_rounds[question_id], round_two]
            keep(_grade(by_id[question_id], setup, rounds))
    return JudgeOutcome(
        grader,
        graded=sum(g.status is GradeStatus.OK for g in grades),
        unparsed=sum(g.status is GradeStatus.UNPARSED for g in grades),
        errors=sum(g.status is GradeStatus.ERROR for g in grades),
        already=already,
        seconds=time.perf_counter() - started,
    )


def _generate(
    store: Store,
    run: str,
    role: str,
    model: Model,
    requests: list[GenerateRequest],
    batch: BatchPolicy | None,
) -> Iterator[ModelOutput]:
    """The judge's replies: in real time, or through its batch endpoint (kept with the run under `role`)."""
    if batch is None:
        return model.generate(requests)
    return batched_generate(store, run, role, model, requests, batch)


def _stem(sample: SampleRecord) -> str:
    return str(sample.question.get("stem", ""))
