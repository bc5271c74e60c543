"""The sample exam against a server that fails 30% of requests with every bad reply kaoshi knows of: the
run ends, nothing but the answers the server meant is stored as an answer, every fault is an error sample
or retried (and only transient ones are retried), no credential is stored, and resuming completes the
run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.api.evaluation import CachePolicy
from kaoshi.benchmarks import load_exam_result
from kaoshi.data.model import Exam, Question, QuestionType, format_gold
from kaoshi.store import SampleRecord
from tests.support.fault_server import FaultServer

KEY = "sk-fault-run-0123456789"
MAX_RETRIES = 2
MAX_RESUMES = 10
MAX_ROUNDS = 8


def meant_reply(index: int, question: Question) -> str:
    """What the server answers: right on even questions, wrong on odd ones (a wrong answer is still the
    model's answer, to be stored as given)."""
    if question.type is QuestionType.OPEN:
        return f"答：参考回答{question.id}"
    right = format_gold(question.answer)
    if index % 2 == 0:
        return f"答案：{right}"
    if question.type is QuestionType.TRUE_FALSE:
        return "答案：错误" if right == "正确" else "答案：正确"
    letters = [letter for letter, _ in question.options]
    if question.type is QuestionType.MULTI:
        return f"答案：{''.join(letters[:2]) if right != ''.join(letters[:2]) else letters[0]}"
    return f"答案：{next(letter for letter in letters if letter != right)}"


def exam_for(method: str) -> Exam:
    exam = load_exam_result("sample").exam
    if method == "generate":
        return exam
    # one next token cannot rank letter sets: multiple choice is refused on the API by log-likelihood
    kept = tuple(q for q in exam.questions if q.type is not QuestionType.MULTI)
    return Exam(exam.name, kept, exam.fewshot, exam.metadata)


def check_pass(server: FaultServer, samples: list[SampleRecord], exam: Exam, meant: dict[str, str]) -> None:
    """Each question asked in this pass is stored as its last attempt demands."""
    for sample in samples:
        stem = exam.question(sample.question_id).stem
        served = server.served.get(stem)
        if not served:
            continue  # stored by an earlier pass, not asked again
        *earlier, last = served
        assert all(s.outcome == "retried" for s in earlier), (sample.question_id, served)
        if sample.status == "error":
            assert sample.answer is None and sample.correct is None and sample.response is None
            assert last.outcome in ("retried", "final"), (sample.question_id, served, sample.error)
            if last.outcome == "retried":
                assert len(served) == MAX_RETRIES + 1 and "gave up after 3 attempts" in (sample.error or "")
            continue
        if last.outcome == "cut":  # the model's own failure: stored, graded wrong, not asked again
            assert sample.truncated and sample.response == "" and sample.correct is not True, sample
            continue
        assert last.outcome == "kept", (sample.question_id, served)
        reply = meant[stem]
        if sample.response is not None:  # generated (every answer, or an open one by log-likelihood)
            echoed = "（请求头 ***；参数 ）" if last.fault == "keyecho" and not last.loglik else ""
            assert sample.response == reply + echoed
        if exam.question(sample.question_id).type is not QuestionType.OPEN:
            assert format_gold(sample.answer) == reply.removeprefix("答案："), sample


@pytest.mark.parametrize("method", ["generate", "loglik"])
def test_runs_through_30_percent_faults_store_only_meant_answers_and_resume_to_completion(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    exam = exam_for(method)
    meant = {q.stem: meant_reply(i, q) for i, q in enumerate(exam.questions)}
    store = tmp_path / "s.sqlite"
    passes: list[tuple[int, int]] = []  # (questions asked, stored as errors) per pass
    retried = answers = 0
    server = FaultServer(answers=meant, rate=0.3, seed=28, hang_s=4.0, max_requests=5_000, max_seconds=240)
    with server:
        # a fresh run of the exam until every kind of fault has been served (a few runs: ~30% of ~60
        # requests fail per run), each resumed until complete
        for round_ in range(MAX_ROUNDS):
            for _ in range(MAX_RESUMES):
                server.served.clear()
                result = kaoshi.evaluate(
                    exam, "openai:test-model", method=method, shots=0, base_url=server.base_url,
                    max_retries=MAX_RETRIES, timeout_s=3.0, concurrency=8, store=store, run_name=f"r{round_}",
                    chat=True,  # log-likelihood: the next token's ranking, whose faults this server serves
                    cache=CachePolicy(enabled=False),  # each round a fresh run: asked, never the cache
                )  # fmt: skip
                samples = list(result.samples)
                check_pass(server, samples, exam, meant)
                retried += sum(len(attempts) - 1 for attempts in server.served.values())
                passes.append((len(server.served), result.errors))
                if result.errors == 0:
                    break
            assert result.errors == 0, passes  # resuming completed the run
            assert len(samples) == len(exam)
            answers += len(samples)
            if not server.unserved(loglik=method == "loglik"):
                break
    assert not server.unserved(loglik=method == "loglik")
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))
    assert KEY.encode() not in stored
    faults = server.faults_served
    assert sum(faults.values()) >= 0.2 * len(server.bodies)  # the server did fail about 30% of requests
    print(
        f"\n{method}: {round_ + 1} runs, {len(server.bodies)} requests, {sum(faults.values())} faults, "
        f"{retried} retried, passes (asked, errors stored) {passes}, {answers} answers stored; "
        f"faults by kind {dict(sorted(faults.items()))}"
    )
