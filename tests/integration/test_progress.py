"""Progress callbacks: answers are counted as they arrive (run, judge, vote, rescore), with the right totals;
the command line's bar is silent off a terminal."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.runner.grouping import INSTANT_S
from kaoshi.store import GradeRecord, SampleRecord
from tests.support.files import write_jsonl
from tests.support.runs import SAMPLE_OPEN, mock_script

EXAM = load_exam_result("sample").exam
QUESTIONS = {q.id: q for q in EXAM.questions}
OBJECTIVE = [q.id for q in EXAM.questions if q.type.value != "open"]


class Recorder:
    """The callbacks' calls, in order, beside what the backend logs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.plans: list[tuple[int, int]] = []

    def plan(self, total: int, done: int) -> None:
        self.plans.append((total, done))

    def sample(self, sample: SampleRecord) -> None:
        self.events.append(("counted", sample.question_id))

    def grade(self, grade: GradeRecord) -> None:
        self.events.append((grade.status.value, grade.question_id))

    def counted(self) -> list[str]:
        return [item for event, item in self.events if event == "counted"]


class OneByOneModel(Model):
    """Takes the whole exam as one chunk and yields its answers one at a time, each after some work (the
    answers of a backend that answers at once are committed, and counted, together: runner.grouping),
    logging each as it goes; the questions in `failing` get an error (asked again when the run resumes)."""

    default_batch_size = 64

    def __init__(self, events: list[tuple[str, str]], failing: frozenset[str] = frozenset()) -> None:
        super().__init__("one-by-one", ModelOptions())
        self.events, self.failing = events, failing

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            time.sleep(2 * INSTANT_S)
            self.events.append(("answered", request.id))
            if request.id in self.failing:
                yield ModelOutput(request.id, error="overloaded")
            else:
                yield ModelOutput(
                    request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}"
                )


def test_each_answer_is_counted_as_the_backend_yields_it(store_path: Path) -> None:
    seen = Recorder()
    model = OneByOneModel(seen.events)
    assert model.chunk_size("generate") >= len(EXAM)  # one chunk: the runner must not wait for all of it
    kaoshi.evaluate(EXAM, model, store=store_path, run_name="r", on_sample=seen.sample, on_plan=seen.plan)
    assert seen.plans == [(len(EXAM), 0)]
    # every answer counted before the backend gives the next one
    assert seen.events == [(kind, q.id) for q in EXAM.questions for kind in ("answered", "counted")]


def test_a_resumed_run_plans_with_what_is_stored_and_counts_only_new_answers(store_path: Path) -> None:
    failing = frozenset(SAMPLE_OPEN)
    first, again = Recorder(), Recorder()
    kaoshi.evaluate(
        EXAM, OneByOneModel(first.events, failing), store=store_path, run_name="r",
        on_sample=first.sample, on_plan=first.plan,
    )  # fmt: skip
    assert first.plans == [(44, 0)] and len(first.counted()) == 44  # errors are answers too
    kaoshi.evaluate(
        EXAM, OneByOneModel(again.events), store=store_path, run_name="r",
        on_sample=again.sample, on_plan=again.plan,
    )  # fmt: skip
    assert again.plans == [(44, 40)]
    assert again.events == [(kind, q) for q in SAMPLE_OPEN for kind in ("answered", "counted")]


def _judge(replies: list[str], failing: str | None = None):  # type: ignore[no-untyped-def]
    def judge(prompt: str) -> str:
        replies.append(prompt)
        if failing is not None and failing in prompt:
            raise RuntimeError("judge overloaded")
        return "评分：7"

    return judge


def test_judging_counts_each_grade_once_with_the_open_answers_as_total(two_runs: Path) -> None:
    seen, asked = Recorder(), []
    failing = SAMPLE_OPEN[next(iter(SAMPLE_OPEN))].stem  # one answer's judge call fails
    outcome = kaoshi.judge(
        "strong", _judge(asked, failing), store=two_runs, on_grade=seen.grade, on_plan=seen.plan
    )
    assert seen.plans == [(4, 0)] and len(asked) == 4
    assert sorted(q for _, q in seen.events) == sorted(SAMPLE_OPEN)
    assert [event for event, _ in seen.events].count("error") == outcome.errors == 1
    # judging again asks the errored answer only: the bar starts at 3 of 4
    again = Recorder()
    kaoshi.judge("strong", _judge(asked), store=two_runs, on_grade=again.grade, on_plan=again.plan)
    assert again.plans == [(4, 3)] and [event for event, _ in again.events] == ["ok"]


def test_a_debate_plans_each_round_and_counts_each_judge_call(two_runs: Path) -> None:
    seen, asked = Recorder(), []
    kaoshi.judge(
        "strong", _judge(asked), store=two_runs, mode="debate", on_grade=seen.grade, on_plan=seen.plan
    )
    assert seen.plans == [(4, 0), (4, 0)] and len(asked) == 8
    assert [event for event, _ in seen.events] == ["partial"] * 4 + ["ok"] * 4
    assert (
        sorted(q for _, q in seen.events[:4]) == sorted(q for _, q in seen.events[4:]) == sorted(SAMPLE_OPEN)
    )


def test_a_vote_counts_each_voted_question(two_runs: Path) -> None:
    seen = Recorder()
    result = kaoshi.vote(
        ["weak", "strong"], store=two_runs, run_name="v", on_plan=seen.plan, on_sample=seen.sample
    )
    assert seen.plans == [(40, 0)] and result.outcome.questions == 40
    assert seen.counted() == OBJECTIVE


def test_a_rescore_counts_each_sample_and_each_extractor_reply_as_it_arrives(
    two_runs: Path, tmp_path: Path
) -> None:
    seen = Recorder()
    kaoshi.rescore(
        "weak", "w2", store=two_runs, multi_policy="partial", on_plan=seen.plan, on_sample=seen.sample
    )
    assert seen.plans == [(44, 0)] and sorted(seen.counted()) == sorted(QUESTIONS)
    # Three unreadable answers (the other questions errored), read again by a new LLM extractor.
    unsure = OBJECTIVE[:3]
    script = write_jsonl(tmp_path / "unsure.jsonl", [{"id": q, "response": "我想一想"} for q in unsure])
    kaoshi.evaluate(EXAM, f"mock:{script}", store=two_runs, run_name="unsure")
    extracted = Recorder()

    def extractor(prompt: str) -> str:
        extracted.events.append(("asked", next(q for q in unsure if QUESTIONS[q].stem in prompt)))
        return "A"

    kaoshi.rescore(
        "unsure", "u2", store=two_runs, llm_extractor=extractor,
        on_plan=extracted.plan, on_sample=extracted.sample,
    )  # fmt: skip
    assert extracted.plans == [(44, 0)] and sorted(extracted.counted()) == sorted(QUESTIONS)
    # the samples the rules settle first, then each asked one as its reply comes
    assert extracted.events[-6:] == [(kind, q) for q in unsure for kind in ("asked", "counted")]


def test_the_bar_is_silent_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, store_path: Path, tmp_path: Path
) -> None:
    for variable in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(variable, raising=False)
    script = mock_script(tmp_path / "m.jsonl", set(OBJECTIVE))
    commands = [
        ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", "a", "--no-report"],
        ["run", "--benchmark", "sample", "--model", "constant:A", "--run-name", "b", "--no-report"],
        ["vote", "a", "b", "--run-name", "v"],
        ["rescore", "a", "--run-name", "a2", "--multi-policy", "partial"],
        ["judge", "a", "--judge", "constant:评分：7"],
    ]
    for command in commands:
        assert main([*command, "--store", str(store_path)]) == 0
        err = capsys.readouterr().err
        for drawn in ("━", "\x1b[", "elapsed", "ETA", "evaluating", "voting", "rescoring", "judging"):
            assert drawn not in err, (command, err)
    # the control: where stderr counts as a terminal, the same command draws its bar
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                "constant:B",
                "--no-report",
                "--store",
                str(store_path),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "evaluating" in err and "44/44" in err and "elapsed" in err
