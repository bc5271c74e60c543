"""What ends an answer: each template's own answer end, how a request carries it, and how its tokens are
found, so log-likelihood can tell 'ABCD' from its prefix 'AB'."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kaoshi.benchmarks import TEMPLATES, get_template
from kaoshi.data import Exam, Question, QuestionType
from kaoshi.data.model import format_gold
from kaoshi.models import LoglikRequest, Model, ModelOptions, ModelOutput
from kaoshi.models.chat import assistant_turn_end
from kaoshi.models.tokens import continuation_tokens, decode_whole_characters
from kaoshi.prompts import RenderOptions
from kaoshi.runner import execute_run
from kaoshi.store import Store
from tests.support.runs import exam_spec

OPTIONS = (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁"))
EXEMPLAR = Question(
    "law/0",
    QuestionType.MULTI,
    "例题____",
    OPTIONS,
    frozenset("ABD"),
    "因为甲乙丁都对。",
    subject="law",
    split="dev",
)
QUESTION = Question(
    "law/1", QuestionType.MULTI, "问题____", OPTIONS, frozenset("AC"), subject="law", split="val"
)
EXAM = Exam("law", (QUESTION,), (EXEMPLAR,))


def after_exemplar_answer(text: str) -> str:
    """The text that follows the exemplar's answer: after the answer cue, in CoT's closing sentence, or
    at the start of an assistant turn."""
    answer = format_gold(EXEMPLAR.answer)
    for lead in ("所以答案是", "答案：", ""):
        if lead + answer in text:
            return text.split(lead + answer, 1)[1]
    raise AssertionError(f"no answer in {text!r}")


# Zero-shot protocols show no exemplar (their answer ends are tested below): GAOKAO-Bench's, and CFLUE's
# and CMExam's own prompts, whose code sends none.
ZERO_SHOT_TEMPLATES = ("cflue", "cmexam", "gaokao", "gaokao-kaoshi")
FEW_SHOT_TEMPLATES = sorted(name for name in TEMPLATES if name not in ZERO_SHOT_TEMPLATES)


def test_gaokao_answers_end_with_its_marker() -> None:
    for name in ("gaokao", "gaokao-kaoshi"):
        assert get_template(name).answer_end(chat=False) == "<eoa>"
        assert get_template(name).answer_end(chat=True) is None
    text = get_template("gaokao-kaoshi").render(QUESTION, EXAM, RenderOptions(1)).text
    assert "【答案】……<eoa>" in text


@pytest.mark.parametrize(("name", "line"), [("cflue", "解析"), ("cmexam", "解释")])
@pytest.mark.parametrize("chat", [False, True])
def test_two_line_protocols_answers_end_where_their_second_line_starts(
    name: str, line: str, chat: bool
) -> None:
    # The reply they ask for is '答案：…' then '解析：…' (CMExam: '解释：…'), in both forms.
    template = get_template(name)
    prompt = template.render(QUESTION, EXAM, RenderOptions(1, chat=chat))
    assert prompt.shots == 0 and f"“答案：”，“{line}：”" in prompt.text
    assert template.answer_end(chat) == f"\n{line}："


def test_zero_shot_templates_are_known() -> None:
    assert set(ZERO_SHOT_TEMPLATES) <= set(TEMPLATES)


@pytest.mark.parametrize("name", FEW_SHOT_TEMPLATES)
def test_completion_answer_end_is_what_follows_an_exemplar_answer(name: str) -> None:
    template = get_template(name)
    prompt = template.render(QUESTION, EXAM, RenderOptions(1))
    assert prompt.shots == 1
    end = template.answer_end(chat=False)
    assert end and after_exemplar_answer(prompt.text).startswith(end)


@pytest.mark.parametrize("name", FEW_SHOT_TEMPLATES)
def test_chat_answer_end_is_what_follows_an_exemplar_answer_in_its_turn(name: str) -> None:
    template = get_template(name)
    prompt = template.render(QUESTION, EXAM, RenderOptions(1, chat=True))
    assert prompt.messages is not None
    replies = [content for role, content in prompt.messages if role == "assistant"]
    # The QualBench protocol sends its demo inside the one user message, as in completion form.
    [reply] = replies or [prompt.messages[-1][1]]
    after = after_exemplar_answer(reply)
    end = template.answer_end(chat=True)
    # None: the answer is the last thing in the assistant turn.
    assert after == "" if end is None else after.startswith(end)


def test_user_template_answers_end_their_line(tmp_path: Path) -> None:
    path = tmp_path / "t.j2"
    path.write_text(
        "{% for e in exemplars %}{{ e.question }}\n答案：{{ e.answer }}\n{% endfor %}{{ question }}\n答案："
    )
    template = get_template(f"file:{path}")
    assert template.answer_end(chat=False) == "\n"
    assert template.answer_end(chat=True) is None


def test_scored_end() -> None:
    completion = LoglikRequest("q", "答案：", ("A",), answer_end="\n\n")
    chat = LoglikRequest("q", "", ("A",), messages=(("user", "题"),))
    chat_with_end = LoglikRequest("q", "", ("A",), messages=(("user", "题"),), answer_end="\n解析：")
    assert completion.scored_end("<|im_end|>") == "\n\n"
    assert chat.scored_end("<|im_end|>") == "<|im_end|>"
    assert chat_with_end.scored_end("<|im_end|>") == "\n解析："
    assert LoglikRequest("q", "答案：", ("A",)).scored_end("<|im_end|>") == ""  # a bare continuation


# -- tokens ----------------------------------------------------------------------------------------------
PARAGRAPH = 999  # the toy tokenizer's one token for a final '\n\n'


def toy_encode(text: str) -> list[int]:
    """One token per character, except a final '\n\n', which is one token, as GPT-2-style tokenizers write
    it at the end of a string (before further text they write two '\n')."""
    ids = [ord(c) for c in text]
    return [*ids[:-2], PARAGRAPH] if text.endswith("\n\n") else ids


def toy_decode(ids: list[int]) -> str:
    return "".join("\n\n" if i == PARAGRAPH else chr(i) for i in ids)


def test_an_answer_end_closing_with_whitespace_is_tokenized_as_before_further_text() -> None:
    context = "答案："
    tokens = continuation_tokens(toy_encode, toy_decode, context, toy_encode(context), "AB\n\n")
    assert tokens == [ord("A"), ord("B"), ord("\n"), ord("\n")]  # not [A, B, PARAGRAPH]
    assert continuation_tokens(toy_encode, toy_decode, context, toy_encode(context), "AB<end>") == [
        ord(c) for c in "AB<end>"
    ]


def test_continuation_tokens_is_none_when_the_context_merges_into_it() -> None:
    def merging(text: str) -> list[int]:  # '：A' is one token
        return [ord(c) for c in text.replace("：A", "\0")]

    context = "答案："
    assert continuation_tokens(merging, toy_decode, context, merging(context), "AB\n\n") is None


class ChatML:
    eos_token = "<|endoftext|>"

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool = False
    ) -> str:
        turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat)
        return turns + ("<|im_start|>assistant\n" if add_generation_prompt else "")


class Llama2Style(ChatML):
    eos_token = "</s>"

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool = False
    ) -> str:
        return f"<s>[INST] {chat[0]['content']} [/INST] {chat[1]['content']} </s>"


class NothingAfter(ChatML):
    eos_token = "<eos>"

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool = False
    ) -> str:
        return "".join(f"{m['role']}: {m['content']}\n" for m in chat)


@pytest.mark.parametrize(
    ("tokenizer", "end"), [(ChatML(), "<|im_end|>"), (Llama2Style(), " </s>"), (NothingAfter(), "<eos>")]
)
def test_assistant_turn_end(tokenizer: Any, end: str) -> None:
    assert assistant_turn_end(tokenizer) == end


# -- the runner fills it in ------------------------------------------------------------------------------
class RecordingModel(Model):
    def __init__(self) -> None:
        super().__init__("recording", ModelOptions())
        self.requests: list[LoglikRequest] = []

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        self.requests += requests
        for request in requests:
            yield ModelOutput(request.id, logprobs={c: -1.0 for c in request.continuations})


@pytest.mark.parametrize(
    ("name", "chat", "end"),
    [("default", False, "\n\n"), ("default", True, None), ("qualbench", True, "\n解析：")],
)
def test_runner_sends_the_templates_answer_end(
    tmp_path: Path, name: str, chat: bool, end: str | None
) -> None:
    model = RecordingModel()
    template = get_template(name)
    spec = exam_spec(
        EXAM,
        model="recording",
        method="loglik",
        n_questions=1,
        prompt=name,
        shots=1,
        max_new_tokens=8,
        chat=chat,
    )
    with Store(tmp_path / "s.sqlite") as store:
        execute_run(name="r", exam=EXAM, spec=spec, model=model, template=template, store=store)
        [sample] = store.samples("r")
    [request] = model.requests
    assert request.answer_end == end and (request.messages is not None) == chat
    assert sample.logprobs is not None and "ABCD" in sample.logprobs  # keyed by the candidate alone


@pytest.mark.parametrize("chat", [False, True])
def test_single_choice_and_true_false_are_scored_bare(tmp_path: Path, chat: bool) -> None:
    # No candidate of theirs is a prefix of another: scored as C-Eval's code and lm-eval score them.
    single = Question("s", QuestionType.SINGLE, "题干", QUESTION.options, frozenset("A"))
    judge = Question("j", QuestionType.TRUE_FALSE, "说法。", (), True)
    exam = Exam("law", (single, judge), (EXEMPLAR,))
    model = RecordingModel()
    spec = exam_spec(exam, model="recording", method="loglik", n_questions=2, max_new_tokens=8, chat=chat)
    with Store(tmp_path / "s.sqlite") as store:
        execute_run(
            name="r", exam=exam, spec=spec, model=model, template=get_template("default"), store=store
        )
    assert [r.answer_end for r in model.requests] == ["", ""]
    assert all(r.scored_end("<|im_end|>") == "" for r in model.requests)


def test_a_character_cut_by_the_token_limit_is_dropped_not_shown_broken() -> None:
    # A byte-level tokenizer: one token per UTF-8 byte; 考 is three bytes.
    def decode(tokens: list[int]) -> str:
        return bytes(tokens).decode("utf-8", errors="replace")

    whole = list("答案：考".encode())
    assert decode_whole_characters(decode, whole) == "答案：考"
    assert decode_whole_characters(decode, whole[:-1]) == "答案："  # 考 cut after two of its bytes
    assert decode_whole_characters(decode, whole[:-2]) == "答案："
    assert decode_whole_characters(decode, list("考�试".encode())) == "考�试"  # only an unfinished end goes
    assert decode_whole_characters(decode, []) == ""
