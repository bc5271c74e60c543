"""Full-sequence log-likelihood over an OpenAI-compatible completions endpoint (`--method loglik`, plain
prompts) against the fake server's toy model, whose every log-probability a test can compute."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from kaoshi.benchmarks import get_template
from kaoshi.cli.main import main
from kaoshi.data.model import format_gold
from kaoshi.models import CapabilityError, LoglikRequest, Model, ModelOptions, resolve_model
from kaoshi.models.gating import GatedRequests
from kaoshi.models.openai_echo import ECHO_SUFFIX
from kaoshi.models.retry import Backoff
from kaoshi.models.tokens import FOLLOWING_TEXT
from kaoshi.store import Store
from kaoshi.store.records import SampleRecord
from tests.support.fake_openai import ECHO_REFUSAL, FakeOpenAI, toy_logprob
from tests.support.files import make_ceval, write_jsonl

SINGLE = LoglikRequest("s", "第一题（）。\nA. 甲\nB. 乙\n答案：", ("A", "B", "C", "D"))
MULTI = LoglikRequest("m", "第二题（）。\n答案：", ("A", "B", "AB", "ABC"), answer_end="\n\n")
JUDGE = LoglikRequest("j", "第三题：", ("正确", "错误"))
JUDGE_2 = LoglikRequest("j2", "第四题：", ("正确", "错误"))


def model_for(server: FakeOpenAI, **kw: object) -> Model:
    options = ModelOptions(base_url=server.base_url, **kw)  # type: ignore[arg-type]
    model = resolve_model("openai:test-model", options)
    model.backoff = Backoff(base_s=0.01, cap_s=0.05)  # type: ignore[attr-defined]  # keep the test fast
    return model


def toy_score(context: str, scored: str) -> float:
    """What the toy model (one token a character) gives `scored` after `context`, as the local backends
    score it: a scored text ending in whitespace is read before more text."""
    full = context + scored + (FOLLOWING_TEXT if scored[-1:].isspace() else "")
    return sum(toy_logprob(full[:i], full[i]) for i in range(len(context), len(context) + len(scored)))


def expected(request: LoglikRequest) -> dict[str, float]:
    end = request.scored_end("")
    return {c: toy_score(request.context, c + end) for c in request.continuations}


def approx(scores: dict[str, float]) -> object:
    return pytest.approx(scores, abs=1e-9)


def test_a_questions_candidates_go_in_one_request_with_echo() -> None:
    with FakeOpenAI() as server:
        model = model_for(server, prompts_per_request=4)  # one question's candidates a request
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    for request in (SINGLE, MULTI, JUDGE):
        output = outputs[request.id]
        assert output.error is None and output.text is None
        assert output.logprobs == approx(expected(request))
    assert len(server.bodies) == 3
    for body in server.bodies:
        assert isinstance(body["prompt"], list)
        # logprobs 0: the prompt tokens' own values, no alternatives (all the scoring reads)
        assert (body["echo"], body["logprobs"], body["max_tokens"], body["temperature"]) == (True, 0, 1, 0)
    multi = next(b for b in server.bodies if "第二题" in b["prompt"][0])
    # the context byte for byte, then the scored text and what follows it
    assert multi["prompt"][2] == MULTI.context + "AB\n\n" + FOLLOWING_TEXT + ECHO_SUFFIX
    assert outputs["m"].tokens_in == sum(len(p) for p in multi["prompt"]) and outputs["m"].tokens_out == 4


@pytest.mark.parametrize(
    ("most", "packs"),
    [(32, [["s", "m", "j"]]), (10, [["s", "m", "j"]]), (9, [["s", "m"], ["j"]]), (5, [["s"], ["m"], ["j"]])],
)
def test_the_next_questions_prompts_go_in_the_same_request_while_they_fit(
    most: int, packs: list[list[str]]
) -> None:
    with FakeOpenAI() as server:
        model = model_for(server, prompts_per_request=most, concurrency=1)
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    for request in (SINGLE, MULTI, JUDGE):
        assert outputs[request.id].error is None
        assert outputs[request.id].logprobs == approx(expected(request))
    by_context = {r.context: r.id for r in (SINGLE, MULTI, JUDGE)}
    sent = [
        sorted(
            {by_context[c] for p in body["prompt"] for c in by_context if p.startswith(c)}, key="smj".index
        )
        for body in server.bodies
    ]
    assert sent == packs
    # what each request cost is shared out by prompt length, adding up to what the server counted
    assert sum(o.tokens_in or 0 for o in outputs.values()) == sum(
        len(p) for b in server.bodies for p in b["prompt"]
    )
    assert sum(o.tokens_out or 0 for o in outputs.values()) == 10
    if len(packs) == 1:
        sent = [len(JUDGE.context) + len(c) + len(ECHO_SUFFIX) for c in JUDGE.continuations]
        assert outputs["j"].tokens_in == sum(sent)


def test_a_question_with_more_candidates_than_a_request_takes_goes_alone() -> None:
    with FakeOpenAI() as server:
        model = model_for(server, prompts_per_request=3, concurrency=1)
        outputs = {o.id: o for o in model.loglikelihood([JUDGE, SINGLE, JUDGE_2])}
    assert [len(b["prompt"]) for b in server.bodies] == [2, 4, 2]
    assert all(o.error is None for o in outputs.values())


def test_a_reply_unreadable_for_one_question_of_a_request_is_that_questions_error() -> None:
    with FakeOpenAI(faults={"第三题": ["logprob:nan"]}) as server:
        outputs = {o.id: o for o in model_for(server).loglikelihood([SINGLE, JUDGE, MULTI])}
    assert len(server.bodies) == 1
    assert outputs["j"].error == "the reply's log-probability of token '确' is nan, not a number <= 0"
    assert outputs["s"].logprobs == approx(expected(SINGLE)) and outputs["m"].logprobs == approx(
        expected(MULTI)
    )


def test_a_request_refused_for_one_question_is_sent_again_a_question_at_a_time() -> None:
    # a 400 for what one question holds (a prompt past the context, say) must not take the others down,
    # now or on every resume, where the same questions would be packed together again
    with FakeOpenAI(faults={"第二题": ["400", "400"]}) as server:
        model = model_for(server, concurrency=1)
        model.echo.prompt_lists = True  # type: ignore[attr-defined]  # found out earlier in the run
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    assert [len(b["prompt"]) for b in server.bodies] == [10, 4, 4, 2]
    assert (outputs["m"].error or "").startswith("a list of 4 prompts failed: HTTP 400")
    for request in (SINGLE, JUDGE):
        assert outputs[request.id].logprobs == approx(expected(request))


def test_a_request_failing_until_the_retries_ran_out_is_every_questions_error() -> None:
    # the server's state, not a question's: sending each question again would only multiply requests
    with FakeOpenAI(faults={"第二题": ["500", "500"]}) as server:
        model = model_for(server, max_retries=1)
        model.echo.prompt_lists = True  # type: ignore[attr-defined]
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI])}
    assert len(server.bodies) == 2  # the request and its one retry
    assert outputs["s"].error == outputs["m"].error
    assert (outputs["s"].error or "").startswith("a list of 8 prompts failed: HTTP 500 (gave up after 2")


def test_a_probe_that_fails_one_prompt_at_a_time_too_decides_nothing() -> None:
    # an outage during the first request is no verdict on lists: the request is then sent as a list with
    # its retries, and that list's answer is the verdict
    with FakeOpenAI(faults={"第一题": ["500", "500"]}) as server:
        model = model_for(server, concurrency=1, max_retries=0, prompts_per_request=4)
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI])}
    assert outputs["s"].logprobs == approx(expected(SINGLE)) and outputs["m"].logprobs == approx(
        expected(MULTI)
    )
    assert model.echo.prompt_lists is True  # type: ignore[attr-defined]
    assert [b["prompt"] if isinstance(b["prompt"], str) else len(b["prompt"]) for b in server.bodies] == [
        4,
        SINGLE.context + "A" + ECHO_SUFFIX,
        4,
        4,
    ]


def test_one_prompt_per_request_sends_every_candidate_alone() -> None:
    with FakeOpenAI() as server:
        outputs = {o.id: o for o in model_for(server, prompts_per_request=1).loglikelihood([SINGLE, JUDGE])}
    assert sorted(b["prompt"] for b in server.bodies) == sorted(
        [SINGLE.context + c + ECHO_SUFFIX for c in SINGLE.continuations]
        + [JUDGE.context + c + ECHO_SUFFIX for c in JUDGE.continuations]
    )
    assert outputs["s"].logprobs == approx(expected(SINGLE)) and outputs["j"].logprobs == approx(
        expected(JUDGE)
    )


def test_the_next_question_is_taken_through_the_gate_only_when_a_slot_can_send_it() -> None:
    """A run whose gate closes while a request is in flight (its lease taken over) sends nothing more:
    the pack is sent before the next question is taken, so the gate is asked when it could go."""
    with FakeOpenAI(latency_s=0.2) as server:
        model = model_for(server, concurrency=1, prompts_per_request=8)
        gated = GatedRequests([SINGLE, MULTI, JUDGE], admit=lambda: not server.bodies)
        outputs = {o.id: o for o in model.loglikelihood(gated)}
    assert [len(b["prompt"]) for b in server.bodies] == [8]  # S and M; J would not have fitted
    assert set(outputs) == {"s", "m"} and gated.withheld == {"j"}


def test_a_request_that_fails_for_a_while_is_sent_again_whole() -> None:
    with FakeOpenAI(faults={"第二题": ["500", "drop"]}) as server:
        model = model_for(server)
        model.echo.prompt_lists = True  # type: ignore[attr-defined]
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    assert [len(b["prompt"]) for b in server.bodies] == [10, 10, 10]
    for request in (SINGLE, MULTI, JUDGE):
        assert outputs[request.id].logprobs == approx(expected(request))


def test_letter_sets_are_told_apart_by_their_whole_text() -> None:
    with FakeOpenAI() as server:
        [output] = list(model_for(server).loglikelihood([MULTI]))
    assert output.logprobs is not None
    assert output.logprobs["A"] != output.logprobs["AB"] != output.logprobs["ABC"]


@pytest.mark.parametrize("status", [500, 400, 422])
def test_a_server_refusing_lists_is_sent_one_prompt_per_request(status: int) -> None:
    with FakeOpenAI(list_status=status) as server:
        model = model_for(server, concurrency=4)
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    for request in (SINGLE, MULTI, JUDGE):
        assert outputs[request.id].logprobs == approx(expected(request))
    lists = [b for b in server.bodies if isinstance(b["prompt"], list)]
    # the probe and the first question's prompts as a list of their own, neither retried; every other
    # question waited for the verdict
    assert [len(b["prompt"]) for b in lists] == [10, 4]
    assert len(server.bodies) == 2 + 4 + 4 + 2
    assert model.echo.prompt_lists is False  # type: ignore[attr-defined]


def test_lists_can_be_turned_off() -> None:
    with FakeOpenAI() as server:
        model = model_for(server)
        model.echo.prompt_lists = False  # type: ignore[attr-defined]
        outputs = {o.id: o for o in model.loglikelihood([SINGLE])}
    assert outputs["s"].logprobs == approx(expected(SINGLE))
    assert [b["prompt"] for b in server.bodies] == [
        SINGLE.context + c + ECHO_SUFFIX for c in SINGLE.continuations
    ]


@pytest.mark.parametrize(
    ("support", "lacks"),
    [
        ("nologprobs", "the reply has no logprobs"),
        ("ignored", "the reply's log-probabilities start after the prompt: it was not echoed"),
        ("content", "no token_logprobs (only the chat form's `content`)"),
        ("refused", f"HTTP 400: {ECHO_REFUSAL}"),
    ],
)
def test_a_server_without_prompt_logprobs_is_named_in_one_line(support: str, lacks: str) -> None:
    with FakeOpenAI(echo_support=support) as server:
        model = model_for(server, concurrency=1)
        with pytest.raises(CapabilityError) as raised:
            list(model.loglikelihood([SINGLE, MULTI, JUDGE]))
    message = str(raised.value)
    # the first question only: a list (then its own list, then one prompt) with logprobs 0, and again
    # with logprobs 1
    assert len(server.bodies) <= 6 and server.bodies[-1]["logprobs"] == 1
    assert message.startswith(
        f"{server.base_url} gave no log-probabilities of the prompt's tokens for echo=true"
    )
    assert lacks in message and message.endswith("use --method generate")
    assert "\n" not in message


@pytest.mark.parametrize("support", ["zero-none", "zero-refused"])
@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_server_that_needs_logprobs_1_is_asked_with_1_from_then_on(support: str, concurrency: int) -> None:
    requests = [
        LoglikRequest(f"q{i}", f"第{i}题：{'甲乙丙'[i % 3]}是____", ("A", "B", "C", "D")) for i in range(24)
    ]
    with FakeOpenAI(echo_support=support) as server:
        model = model_for(server, concurrency=concurrency, prompts_per_request=8)
        outputs = {o.id: o for o in model.loglikelihood(requests)}
    for request in requests:
        assert outputs[request.id].error is None
        assert outputs[request.id].logprobs == approx(expected(request))
    asked = [body["logprobs"] for body in server.bodies]
    assert asked[0] == 0 and asked[-1] == 1
    # requests already on their way with 0 are asked again; nothing after the switch asks for 0
    first_one = asked.index(1)
    assert asked[first_one:].count(0) <= concurrency - 1
    assert asked.count(1) >= len(requests) // 2  # every question answered by a request at 1


class _SlowOnSome(FakeOpenAI):
    """Prompts holding 慢 are answered `slow_s` later than the others."""

    slow_s: float = 0.4

    async def _respond(self, request_line: str, headers: dict[str, str], raw: bytes) -> Any:
        if "慢" in json.dumps(json.loads(raw or b"{}").get("prompt"), ensure_ascii=False):
            await asyncio.sleep(self.slow_s)
        return await super()._respond(request_line, headers, raw)


@pytest.mark.parametrize("support", ["zero-none", "zero-refused"])
def test_a_request_sent_with_0_that_comes_back_after_the_switch_is_asked_again(support: str) -> None:
    # One prompt a request: the fast question's reply turns the run to logprobs 1 and its answer at 1
    # is in before the slow question's request, sent with 0 at the same time, comes back without
    # log-probabilities: that one is asked again too, not stored as an error.
    fast = LoglikRequest("fast", "快题：", ("正确", "错误"))
    slow = LoglikRequest("slow", "慢题：", ("正确", "错误"))
    with _SlowOnSome(echo_support=support) as server:
        model = model_for(server, concurrency=2, prompts_per_request=1)
        outputs = {o.id: o for o in model.loglikelihood([fast, slow])}
    for request in (fast, slow):
        assert outputs[request.id].error is None
        assert outputs[request.id].logprobs == approx(expected(request))
    slow_asked = [body["logprobs"] for body in server.bodies if "慢" in body["prompt"]]
    assert slow_asked[0] == 0 and slow_asked[1:] == [1, 1]  # its first candidate again, then the second


def test_missing_logprobs_after_a_good_reply_is_that_samples_error() -> None:
    later = LoglikRequest("later", "第九题：", ("正确", "错误"))
    with FakeOpenAI(faults={"第九题": ["logprobs:none"]}) as server:
        model = model_for(server, concurrency=1)
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, later])}
    assert outputs["s"].error is None
    assert outputs["later"].error == "the reply has no logprobs" and outputs["later"].logprobs is None


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("logprob:nan", "the reply's log-probability of token '确' is nan, not a number <= 0"),
        ("logprob:pos", "the reply's log-probability of token '确' is 0.5, not a number <= 0"),
        ("empty", None),  # no choices for a list: the probe's verdict, then one prompt per request
        ("500", None),  # likewise, and the server is then sent one prompt per request
    ],
)
def test_faulty_echo_replies(fault: str, error: str | None) -> None:
    with FakeOpenAI(faults={"第三题": [fault]}) as server:
        [output] = list(model_for(server).loglikelihood([JUDGE]))
    assert output.error == error
    if error is None:
        assert output.logprobs == approx(expected(JUDGE))


def test_a_token_across_the_context_end_is_counted_and_noted() -> None:
    with FakeOpenAI(vocab=("：A", "：B")) as server:
        [output] = list(model_for(server).loglikelihood([LoglikRequest("q", "答案：", ("A", "B", "C"))]))
    assert output.logprobs is not None and output.text is not None
    assert output.logprobs["A"] == pytest.approx(toy_logprob("答案", "：A"))
    assert output.logprobs["C"] == pytest.approx(toy_score("答案：", "C"))
    assert "'A': '：A'; 'B': '：B'" in output.text and "counted to the candidate" in output.text


@pytest.mark.parametrize("style", ["bytes", "vllm", "llamacpp"])
def test_every_server_style_gives_the_same_scores(style: str) -> None:
    requests = [SINGLE, MULTI, JUDGE]
    with FakeOpenAI(split="：确") as plain, FakeOpenAI(split="：确", echo_style=style) as styled:
        first = {o.id: o.logprobs for o in model_for(plain).loglikelihood(requests)}
        second = {o.id: o.logprobs for o in model_for(styled).loglikelihood(requests)}
    assert all(first[r.id] is not None for r in requests)
    assert second == {k: approx(v) for k, v in first.items()}  # type: ignore[arg-type]


# -- kaoshi run --method loglik --------------------------------------------------------------------------


def run(server: FakeOpenAI, store: Path, *args: str) -> int:
    base = ["run", "--model", "openai:test-model", "--base-url", server.base_url, "--method", "loglik"]
    return main([*base, "--max-retries", "1", "--store", str(store), "--run-name", "r", *args])


def check_against_the_toy_model(store_path: Path) -> list[SampleRecord]:
    """Every stored sample's scores are the toy model's (letter sets with the template's answer end), and
    its answer is their best candidate."""
    with Store(store_path) as store:
        [record] = [r for r in store.runs() if r.name == "r"]
        samples = store.samples("r")
    answer_end = get_template(record.spec.prompt).answer_end(chat=False) or ""
    for sample in samples:
        assert sample.status == "ok" and sample.logprobs is not None, sample.error
        end = answer_end if sample.qtype == "multi" else ""
        toy = {c: toy_score(sample.prompt, c + end) for c in sample.logprobs}
        assert sample.logprobs == approx(toy)
        assert format_gold(sample.answer) == max(toy, key=lambda c: toy[c])
        assert sample.extracted_by == "loglik"
    return samples


def test_cli_scores_a_ceval_layout_set(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_ceval(tmp_path / "ceval-exam")
    with FakeOpenAI() as server:
        code = run(
            server, store_path, "--benchmark", "ceval", "--data", str(root), "--split", "val", "--no-chat"
        )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "6 new, 0 already stored, 0 error(s)" in err
    samples = check_against_the_toy_model(store_path)
    assert len(samples) == 6 and all(set(s.logprobs or {}) == set("ABCD") for s in samples)
    # 24 prompts: one request at the default --prompts-per-request (32)
    assert [len(b["prompt"]) for b in server.bodies] == [24]


def multi_exam(path: Path) -> Path:
    rows: list[object] = [{"exam": {"name": "multi"}}]
    for i, answer in enumerate(["AB", "C", "ABD", "BCD"]):
        rows.append(
            {"id": f"m{i}", "type": "multi", "question": f"第{i}题多选（）。", "answer": answer,
             "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}}
        )  # fmt: skip
    rows.append({"id": "s0", "type": "single", "question": "单选（）。", "answer": "B",
                 "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}})  # fmt: skip
    rows.append({"id": "j0", "type": "judge", "question": "判断。", "answer": True})
    return write_jsonl(path, rows)


def test_cli_scores_multiple_choice_letter_sets(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--method loglik` on the openai backend sends plain prompts unless --chat is given."""
    exam = multi_exam(tmp_path / "multi.jsonl")
    with FakeOpenAI() as server:
        code = run(server, store_path, "--benchmark", "kaoshi", "--data", str(exam))
    err = capsys.readouterr().err
    assert code == 0, err
    assert all("prompt" in body and "messages" not in body for body in server.bodies)
    samples = {s.question_id: s for s in check_against_the_toy_model(store_path)}
    assert {s.qtype for s in samples.values()} == {"multi", "single", "judge"}
    assert len(samples["m0"].logprobs or {}) == 15  # every letter set of four options
    assert set(samples["j0"].logprobs or {}) == {"正确", "错误"}


def test_cli_refuses_a_server_without_prompt_logprobs_in_one_line(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = multi_exam(tmp_path / "multi.jsonl")
    with FakeOpenAI(echo_support="refused") as server:
        code = run(server, store_path, "--benchmark", "kaoshi", "--data", str(exam), "--no-chat")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {server.base_url} gave no log-probabilities of the prompt's tokens")
    assert last.endswith("use --method generate")


def test_cli_chat_letter_sets_point_to_no_chat(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = multi_exam(tmp_path / "multi.jsonl")
    with FakeOpenAI() as server:
        code = run(server, store_path, "--benchmark", "kaoshi", "--data", str(exam), "--chat")
    err = capsys.readouterr().err
    assert code == 2 and server.bodies == []
    assert (
        "cannot tell 'A' from 'AB'" in err
        and "with --no-chat (the default for --method loglik) it scores whole answers" in err
    )


@pytest.mark.parametrize(
    ("options", "generate", "loglik"),
    [
        ({}, 8 * 16, 8 * 16 * 8),  # 16 rounds of the slots; 32 prompts a request are about 8 questions
        ({"prompts_per_request": 4}, 128, 128),
        ({"prompts_per_request": 1}, 128, 128),
        ({"batch_size": 100}, 100, 100),  # --batch-size is the chunk, whatever the method
    ],
)
def test_a_runner_chunk_is_16_rounds_of_every_slot(
    options: dict[str, int], generate: int, loglik: int
) -> None:
    with FakeOpenAI() as server:
        model = model_for(server, **options)
    assert (model.chunk_size("generate"), model.chunk_size("loglik")) == (generate, loglik)


@pytest.mark.parametrize("fault", ["400", "500"])
def test_a_probe_refused_for_another_question_does_not_turn_lists_off(fault: str) -> None:
    """The first list fails for what a later question holds (a 400), or for a moment (a 500): the first
    question's prompts as a list of their own are answered, so lists stay on (before, its first prompt
    alone was answered and every request went one prompt at a time for the rest of the run)."""
    with FakeOpenAI(faults={"第二题": [fault]}) as server:
        model = model_for(server, concurrency=1)
        outputs = {o.id: o for o in model.loglikelihood([SINGLE, MULTI, JUDGE])}
    for request in (SINGLE, MULTI, JUDGE):
        assert outputs[request.id].logprobs == approx(expected(request))
    assert model.echo.prompt_lists is True  # type: ignore[attr-defined]
    assert [len(b["prompt"]) for b in server.bodies] == [10, 4, 4, 2]
