"""Faulty replies from an OpenAI-compatible server are per-sample errors saying why: never an answer,
never a crash. Transient ones are retried within the run; the rest are stored and asked again on resume."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.cli.main import main
from kaoshi.models import (
    CapabilityError,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelOptions,
    ModelOutput,
    resolve_model,
)
from kaoshi.models.retry import Backoff, is_retryable_status
from kaoshi.runner import execute_run
from kaoshi.runner.samples import logprob_error
from kaoshi.store import Store
from tests.support.fake_openai import FakeOpenAI
from tests.support.files import write_jsonl
from tests.support.runs import exam_spec

REASONING = len("首先分析题干……" * 50)
HTML_GAVE_UP = (
    "the response body is not JSON: an HTML page ('502 Bad Gateway'), not an API reply (check --base-url)"
)


def model_for(server: FakeOpenAI, **kw: object) -> Model:
    options = ModelOptions(base_url=server.base_url, **kw)  # type: ignore[arg-type]
    model = resolve_model("openai:test-model", options)
    model.backoff = Backoff(base_s=0.01, cap_s=0.05)  # type: ignore[attr-defined]  # keep the test fast
    return model


def generate_one(fault: list[str], chat: bool, **kw: object) -> tuple[ModelOutput, FakeOpenAI]:
    with FakeOpenAI(faults={"题": fault}) as server:
        model = model_for(server, **kw)
        messages = (("user", "题"),) if chat else None
        [output] = list(model.generate([GenerateRequest("q", "题", max_new_tokens=8, messages=messages)]))
    return output, server


# (fault script, chat?, the sample's error (None: answered), attempts the server saw)
GENERATE_CASES = [
    (["message:null"], True, "the reply's message is null, not an object", 1),
    (["nocontent"], True, "no message.content (finish_reason=stop)", 1),
    (["nocontent"], False, "no text (finish_reason=stop)", 1),
    (["content:int"], True, "the reply's message.content is a number, not text", 1),
    (["content:int"], False, "the reply's text is a number, not text", 1),
    (["content:blank"], True, "empty completion (finish_reason=stop)", 1),
    (["content:blank"], False, "empty completion (finish_reason=stop)", 1),
    (["refusal"], True, "the model refused: I can't help with that.", 1),
    (["empty"], True, "the response has no choices", 1),
    (["nochoices"], False, "the response has no choices", 1),
    (["choices:str"], True, "the response's choices is a string, not a list", 1),
    (["choice:str"], True, "the response's first choice is a string, not an object", 1),
    # an error object in a 200 reply whose code says the request itself is at fault: not retried
    (["error:400"], True, "the server replied with an error: scripted error object", 1),
    (["vllm:400"], True, "the server replied with an error: scripted vllm error", 1),
    (["html:404"], True, f"HTTP 404: {HTML_GAVE_UP.split(': ', 1)[1]}", 1),
    (["501"], True, "HTTP 501: scripted fault", 1),
    # transient: retried within the run, then answered
    (["html"], True, None, 2),
    (["html:502"], False, None, 2),
    (["error:503"], True, None, 2),
    # an error object in a 200 reply with no code or one that is no HTTP status: a server failure
    (["error"], True, None, 2),
    (["error:content_filter"], True, None, 2),
    (["vllm:500"], False, None, 2),
    (["deep"], True, None, 2),  # nested 100,000 levels: unreadable, like a cut-off body
    (["bignum"], True, None, 2),  # a 5,000-digit number: unreadable
    (["drop"], True, None, 2),
    (["521"], True, None, 2),
    (["badjson"], False, None, 2),
    # transient every time: given up, stored as an error
    (["html"] * 5, True, f"{HTML_GAVE_UP} (gave up after 2 attempts)", 2),
    (
        ["error:503"] * 5,
        True,
        "the server replied with an error: scripted error object (gave up after 2 attempts)",
        2,
    ),
]


@pytest.mark.parametrize("content", ["reasoning:stop", "think-only"])
def test_a_reply_that_reasoned_and_gave_no_answer_is_an_empty_answer(content: str) -> None:
    """It failed the question (graded wrong), as a cut-off one does: an error would leave it out of the
    accuracy and raise it."""
    if content == "think-only":
        with FakeOpenAI(answers={"题": "<think>答案应该是A</think>"}) as server:
            model = model_for(server)
            [output] = list(
                model.generate([GenerateRequest("q", "题", max_new_tokens=8, messages=(("user", "题"),))])
            )
        assert output.reasoning == "答案应该是A"
    else:
        output, _ = generate_one([content], True)
        assert output.reasoning is not None and len(output.reasoning) == REASONING
    assert (output.error, output.text, output.truncated) == (None, "", False)


@pytest.mark.parametrize(("fault", "chat", "error", "attempts"), GENERATE_CASES)
def test_generate_reply_shapes(fault: list[str], chat: bool, error: str | None, attempts: int) -> None:
    output, server = generate_one(fault, chat, max_retries=1)
    assert output.error == error
    assert output.text == (None if error else "答案：A")
    assert server.attempts["题"] == attempts


def test_an_unforeseen_reply_shape_is_an_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def unforeseen(choice: dict[str, object], max_chars: int) -> str:
        raise KeyError("delta")

    monkeypatch.setattr("kaoshi.models.openai_api.reply_parts", unforeseen)
    output, _ = generate_one([], chat=True)
    assert output.error == "the reply has an unexpected shape (KeyError: 'delta')"


@pytest.mark.parametrize(
    ("fault", "chat"), [("content:empty", True), ("content:empty", False), ("reasoning", True)]
)
def test_a_reply_cut_off_before_any_answer_is_an_empty_answer_cut_off_not_an_error(
    fault: str, chat: bool
) -> None:
    """A reasoning model still reasoning at the budget has failed the question, as official scorers count
    it: before, the sample was an error left out of the accuracy (72.7% reported for a model at 59.3%)."""
    output, _ = generate_one([fault], chat=chat)
    assert (output.error, output.text, output.truncated) == (None, "", True)
    assert output.reasoning == ("首先分析题干……" * 50 if fault == "reasoning" else None)


def test_a_reasoning_models_reasoning_is_kept_apart_from_its_answer() -> None:
    output, _ = generate_one(["reasoning:decoy"], chat=True)
    assert (output.error, output.text, output.truncated) == (None, "答案：A", False)
    assert output.reasoning == "选项C看似正确，答案是C？再想想，应选A。"


def test_a_paid_reply_without_an_answer_keeps_its_cost() -> None:
    output, _ = generate_one(["content:blank"], chat=True)
    assert output.error == "empty completion (finish_reason=stop)"
    assert output.tokens_in == 1 and output.tokens_out == len("答案：A") and output.latency_s is not None


def test_bad_usage_loses_the_counts_not_the_answer() -> None:
    output, _ = generate_one(["usage:str"], chat=True)
    assert output.error is None and output.text == "答案：A"
    assert output.tokens_in is None and output.tokens_out is None


# Chat messages: the next token's top log-probabilities. Plain prompts are scored from echoed prompt
# log-probabilities, whose faulty replies test_openai_loglik.py covers.
@pytest.mark.parametrize("chat", [True])
@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("logprob:nan", "the reply's log-probability of token 'A' is nan, not a number <= 0"),
        ("logprob:pos", "the reply's log-probability of token 'A' is 0.5, not a number <= 0"),
        ("logprob:str", "the reply's log-probability of token 'A' is 'high', not a number <= 0"),
        ("logprobs:none", "the response has no top log-probabilities (does the endpoint support logprobs?)"),
        ("empty", "the response has no choices"),
        ("message:null", None),  # log-likelihood reads only the log-probabilities
        ("usage:str", None),
    ],
)
def test_loglik_reply_shapes(fault: str, error: str | None, chat: bool) -> None:
    with FakeOpenAI(faults={"题": [fault]}) as server:
        model = model_for(server)
        messages = (("user", "题"),) if chat else None
        [output] = list(model.loglikelihood([LoglikRequest("q", "题", ("A", "B", "C", "D"), messages)]))
    assert output.error == error
    assert output.logprobs == (None if error else {"A": -0.2, "B": -1.9, "C": -2.5, "D": -4.0})
    assert server.attempts["题"] == 1


def test_a_missing_logprob_is_an_error() -> None:
    for chat, shown in ((True, "missing"), (False, "None")):
        with FakeOpenAI(faults={"题": ["logprob:missing"]}) as server:
            messages = (("user", "题"),) if chat else None
            request = LoglikRequest("q", "题", ("A", "B"), messages)
            [output] = list(model_for(server).loglikelihood([request]))
        assert output.error == f"the reply's log-probability of token 'A' is {shown}, not a number <= 0"


def test_letter_sets_are_refused_before_anything_is_sent() -> None:
    with FakeOpenAI() as server:
        model = model_for(server)
        sets = LoglikRequest("m", "题", ("A", "B", "AB"), (("user", "题"),))
        single = LoglikRequest("s", "题", ("A", "B", "C", "D"), (("user", "题"),))
        with pytest.raises(CapabilityError, match=r"cannot tell 'A' from 'AB' .*use --method generate"):
            model.loglikelihood([single, sets])
        assert server.bodies == []
        judged = list(model.loglikelihood([LoglikRequest("j", "题", ("正确", "错误"), (("user", "题"),))]))
    assert judged[0].error is None and len(server.bodies) == 1


def test_retryable_statuses() -> None:
    assert all(is_retryable_status(s) for s in (408, 409, 429, 500, 502, 503, 504, 520, 521, 524, 529))
    assert not any(is_retryable_status(s) for s in (200, 400, 401, 403, 404, 422, 501, 505))


# -- every backend: log-probabilities are checked where an output becomes a scored answer ---------------


@pytest.mark.parametrize(
    ("scores", "error"),
    [
        ({"A": -0.1, "B": -2.0}, None),
        ({"A": 0.0, "B": -0.0, "C": -1e300}, None),
        ({}, None),
        (None, None),
        ({"A": -0.1, "B": math.nan}, "the log-probability of candidate 'B' is nan, not a finite number <= 0"),
        ({"正确": 0.3}, "the log-probability of candidate '正确' is 0.3, not a finite number <= 0"),
        ({"A": math.inf}, "the log-probability of candidate 'A' is inf, not a finite number <= 0"),
        ({"A": -math.inf}, "the log-probability of candidate 'A' is -inf, not a finite number <= 0"),
        ({"A": "x"}, "the log-probability of candidate 'A' is 'x', not a finite number <= 0"),
        ({"A": True}, "the log-probability of candidate 'A' is True, not a finite number <= 0"),
        ({"A": None}, "the log-probability of candidate 'A' is None, not a finite number <= 0"),
    ],
)
def test_logprob_error(scores: dict[str, object] | None, error: str | None) -> None:
    assert logprob_error(scores) == error


class NanModel(Model):
    """A local backend whose log-probabilities went NaN for the first option (e.g. an fp16 overflow)."""

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            scores = {c: -1.0 for c in request.continuations}
            scores[request.continuations[0]] = math.nan
            yield ModelOutput(request.id, logprobs=scores)


def test_nan_logprobs_from_any_backend_are_errors_not_answers(store_path: Path) -> None:
    exam = load_exam_result("sample").exam.limited(3)
    spec = exam_spec(exam, model="nan", method="loglik", benchmark="sample", max_new_tokens=8)
    with Store(store_path) as store:
        outcome = execute_run(
            name="nan",
            exam=exam,
            spec=spec,
            model=NanModel("nan", ModelOptions()),
            template=get_template("default"),
            store=store,
        )
        samples = store.samples("nan")
    assert outcome.errors == 3
    for sample in samples:
        assert sample.status == "error" and sample.correct is None and sample.answer is None
        assert sample.error is not None and sample.error.startswith("the log-probability of candidate ")
        assert "is nan, not a finite number <= 0" in sample.error and sample.logprobs is None


# -- end to end: a run with faulty replies completes, and a resume asks only the failed questions -------

EXAM_ROWS = [
    ("q1", "single", "第一题灭火", "B"),
    ("q2", "single", "第二题绝缘", "C"),
    ("q3", "single", "第三题接地", "A"),
    ("q4", "single", "第四题通风", "D"),
    ("q5", "single", "第五题防爆", "B"),
    ("q6", "multi", "第六题防护", "AB"),
    ("q7", "multi", "第七题检修", "ACD"),
    ("q8", "judge", "第八题登高", "正确"),
    ("q9", "judge", "第九题动火", "错误"),
    ("q10", "single", "第十题巡检", "C"),
    ("q11", "single", "第十一题验电", "D"),
    ("q12", "single", "第十二题挂牌", "A"),
]
# stem -> fault script on the first run; q10 .. q12 are healthy
FIRST_RUN_FAULTS = {
    "第一题灭火": ["message:null"],
    "第二题绝缘": ["content:blank"],
    "第三题接地": ["usage:str"],  # the answer is kept
    "第四题通风": ["nochoices"],
    "第五题防爆": ["error:400"],
    "第六题防护": ["html"],  # a proxy's page once: retried within the run, answered
    "第七题检修": ["html:502"] * 5,  # every attempt: given up, stored as an error
    "第八题登高": ["reasoning"],
    "第九题动火": ["content:int"],
}
EXPECTED_ERRORS = {
    "q1": "the reply's message is null, not an object",
    "q2": "empty completion (finish_reason=stop)",
    "q4": "the response has no choices",
    "q5": "the server replied with an error: scripted error object",
    "q7": "HTTP 502 (gave up after 2 attempts)",
    "q9": "the reply's message.content is a number, not text",
}


def write_exam(path: Path) -> Path:
    rows: list[object] = [{"exam": {"name": "faults"}}]
    for qid, qtype, stem, answer in EXAM_ROWS:
        row: dict[str, object] = {"id": qid, "type": qtype, "question": f"{stem}（）。", "answer": answer}
        if qtype != "judge":
            row["options"] = {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}
        rows.append(row)
    return write_jsonl(path, rows)


def right_answers() -> dict[str, str]:
    return {stem: f"答案：{answer}" for _, _, stem, answer in EXAM_ROWS}


def kaoshi_run(server: FakeOpenAI, exam: Path, store: Path, *extra: str) -> int:
    args = ["run", "--benchmark", "kaoshi", "--data", str(exam), "--model", "openai:test-model"]
    args += ["--base-url", server.base_url, "--max-retries", "1", "--run-name", "f", "--store", str(store)]
    return main([*args, *extra])


def test_faulty_replies_are_stored_as_errors_and_resumed(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = write_exam(tmp_path / "exam.jsonl")
    with FakeOpenAI(faults=dict(FIRST_RUN_FAULTS), answers=right_answers()) as server:
        assert kaoshi_run(server, exam, store_path) == 0
        err = capsys.readouterr().err
        assert "12 new, 0 already stored, 6 error(s)" in err
        assert "warning: 1 of 6 answers were cut off at the token budget (graded wrong)" in err
        with Store(store_path) as store:
            first = {s.question_id: s for s in store.samples("f")}
        assert {qid: s.error for qid, s in first.items() if s.status == "error"} == EXPECTED_ERRORS
        assert all(first[qid].correct is None and first[qid].answer is None for qid in EXPECTED_ERRORS)
        assert first["q2"].tokens_in is not None  # the empty completion's cost is kept
        assert first["q3"].correct is True and first["q3"].tokens_in is None  # bad usage: answer kept
        assert first["q6"].correct is True and server.attempts["第六题防护"] == 2  # retried within the run
        assert server.attempts["第七题检修"] == 2
        assert all(first[qid].correct is True for qid in ("q10", "q11", "q12"))
        # reasoning cut off at the budget: an answer, wrong and cut off, its reasoning kept apart
        cut = first["q8"]
        assert (cut.status, cut.correct, cut.truncated, cut.response) == ("unparsed", False, True, "")
        assert cut.reasoning == "首先分析题干……" * 50

        # the same server (the base URL is part of the run's spec), healthy now
        server.faults.clear()
        server.bodies.clear()
        assert kaoshi_run(server, exam, store_path) == 0
    assert "6 new, 6 already stored, 0 error(s)" in capsys.readouterr().err
    asked = sorted(body["messages"][-1]["content"] for body in server.bodies)
    stems = {qid: stem for qid, _, stem, _ in EXAM_ROWS}
    assert len(asked) == len(EXPECTED_ERRORS)  # each failed question once, no finished one again
    assert all(any(stems[qid] in prompt for prompt in asked) for qid in EXPECTED_ERRORS)
    with Store(store_path) as store:
        resumed = store.samples("f")
    assert len(resumed) == 12
    assert all(s.status == "ok" and s.correct is True for s in resumed if s.question_id != "q8")


def test_faulty_log_probabilities_are_stored_as_errors_and_resumed(tmp_path: Path, store_path: Path) -> None:
    exam = write_jsonl(
        tmp_path / "exam.jsonl",
        [
            {"id": f"q{i}", "type": "single", "question": f"第{i}题（）。", "answer": "A",
             "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}}
            for i in range(1, 6)
        ],
    )  # fmt: skip
    faults = {"第1题": ["logprob:nan"], "第2题": ["logprob:pos"], "第3题": ["logprobs:none"]}
    with FakeOpenAI(faults=faults) as server:
        assert kaoshi_run(server, exam, store_path, "--method", "loglik", "--chat") == 0
        with Store(store_path) as store:
            errors = {s.question_id: s.error for s in store.samples("f") if s.status == "error"}
        assert errors == {
            "q1": "the reply's log-probability of token 'A' is nan, not a number <= 0",
            "q2": "the reply's log-probability of token 'A' is 0.5, not a number <= 0",
            "q3": "the response has no top log-probabilities (does the endpoint support logprobs?)",
        }
        server.faults.clear()
        server.bodies.clear()
        assert kaoshi_run(server, exam, store_path, "--method", "loglik", "--chat") == 0
    assert len(server.bodies) == 3
    with Store(store_path) as store:
        assert all(s.correct is True for s in store.samples("f"))


def test_letter_sets_over_the_api_are_refused_in_one_line(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = write_exam(tmp_path / "exam.jsonl")
    with FakeOpenAI() as server:
        code = kaoshi_run(server, exam, store_path, "--method", "loglik", "--chat")
    err = capsys.readouterr().err
    assert code == 2 and server.bodies == []
    assert (
        err.strip().splitlines()[-1].startswith("error: the openai backend ranks answers by the next token")
    )
    assert "use --method generate" in err and "Traceback" not in err
