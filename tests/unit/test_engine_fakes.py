"""vLLM and llama.cpp backends with their engines faked at the library boundary: everything kaoshi does
around the engine (arguments, chat rendering, batching by budget, reading log-probabilities) runs on CPU.
The real engines are exercised where they are installed (llama.cpp) or on a GPU machine (vLLM)."""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kaoshi.models import GenerateRequest, LoglikRequest, ModelError, ModelOptions, resolve_model
from kaoshi.models.base import Sampling
from kaoshi.models.llamacpp import log_softmax_at, reusable_prefix


# -- vLLM ------------------------------------------------------------------------------------------------
@dataclass
class FakeLogprob:
    logprob: float
    decoded_token: str | None


class FakeTokenizer:
    """Byte-level (token 1 is BOS); its chat template closes an assistant turn with '<end>'."""

    chat_template = "{{ messages }}"
    eos_token = "</s>"

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool = False
    ) -> str:
        assert tokenize is False
        turns = "".join(
            f"<{m['role']}>{m['content']}" + ("<end>" if m["role"] == "assistant" else "") for m in chat
        )
        return turns + ("<assistant>" if add_generation_prompt else "")

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return ([1] if add_special_tokens else []) + list(text.encode())

    def decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return bytes(ids).decode(errors="replace")


@dataclass
class FakeLLM:
    kwargs: dict[str, Any]
    calls: list[tuple[list[str], Any]] = field(default_factory=list)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer()

    def generate(self, prompts: list[Any], params: Any, use_tqdm: bool) -> list[Any]:
        self.calls.append((prompts, params))
        outputs = []
        for index, prompt in enumerate(prompts):
            one = params[index] if isinstance(params, list) else params
            if one.kwargs.get("prompt_logprobs") is not None:
                # As vLLM's prompt_logprobs=0: the token at each position with its log-probability under
                # fake_logits (None first), no alternatives.
                ids = prompt["prompt_token_ids"]
                scored: list[dict[int, FakeLogprob] | None] = [None]
                scored += [
                    {t: FakeLogprob(log_softmax_at(fake_logits(ids[:i]), t), None)}
                    for i, t in enumerate(ids)
                    if i
                ]
                completion = types.SimpleNamespace(text="", token_ids=[0], logprobs=None)
                outputs.append(
                    types.SimpleNamespace(outputs=[completion], prompt_token_ids=ids, prompt_logprobs=scored)
                )
                continue
            # A prompt that asks for it gets a think block, or is cut off at its budget.
            text = (
                f"<think>想一想</think>答案：B <{len(prompt)}>"
                if "想" in prompt
                else f"答案：B <{len(prompt)}>"
            )
            completion = types.SimpleNamespace(
                text=text,
                token_ids=[5, 6, 7],
                logprobs=None,
                finish_reason="length" if "长" in prompt else "stop",
            )
            outputs.append(
                types.SimpleNamespace(outputs=[completion], prompt_token_ids=list(range(len(prompt))))
            )
        return outputs


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("vllm")
    module.LLM = lambda **kwargs: FakeLLM(kwargs)  # type: ignore[attr-defined]
    module.SamplingParams = lambda **kwargs: types.SimpleNamespace(kwargs=kwargs)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def test_vllm_engine_arguments(fake_vllm: types.ModuleType) -> None:
    model = resolve_model(
        "vllm:Qwen/Qwen2.5-7B-Instruct", ModelOptions(seed=3, tensor_parallel_size=2, max_length=4096)
    )
    assert model.llm.kwargs == {  # type: ignore[attr-defined]
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "tensor_parallel_size": 2,
        "enable_prefix_caching": True,
        "seed": 3,
        "trust_remote_code": False,
        "max_model_len": 4096,
    }
    assert model.default_chat is True


def test_vllm_generation_groups_by_budget_and_renders_chat(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m")
    requests = [
        GenerateRequest("a", "题一", max_new_tokens=8),
        GenerateRequest("b", "题二", max_new_tokens=8),
        GenerateRequest("c", "", messages=(("user", "题三"),), max_new_tokens=64, stop=("\n",)),
    ]
    outputs = {o.id: o for o in model.generate(requests)}
    calls = model.llm.calls  # type: ignore[attr-defined]
    assert [len(prompts) for prompts, _ in calls] == [2, 1]
    assert calls[0][1].kwargs == {"temperature": 0.0, "max_tokens": 8, "stop": None}
    assert calls[1][0] == ["<user>题三<assistant>"] and calls[1][1].kwargs["stop"] == ["\n"]
    assert outputs["a"].text == "答案：B <2>" and outputs["a"].tokens_out == 3 and outputs["a"].tokens_in == 2


class ThinkingTokenizer(FakeTokenizer):
    """A template with Qwen3's switch: thinking on opens the block in the prompt, off writes it empty."""

    def apply_chat_template(  # type: ignore[override]
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool = False, **kwargs: Any
    ) -> str:
        rendered = super().apply_chat_template(chat, tokenize, add_generation_prompt)
        switch = kwargs.pop("enable_thinking", None)
        assert not kwargs
        return rendered + {None: "", True: "<think>\n", False: "<think>\n\n</think>\n\n"}[switch]


def test_vllm_sampled_requests_carry_their_own_parameters_and_seed(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m", ModelOptions(seed=3))
    assert model.sampling_options == {"temperature", "top_p", "top_k", "thinking"}
    requests = [
        GenerateRequest("greedy", "题一", max_new_tokens=8),
        GenerateRequest("b", "题二", max_new_tokens=8, sampling=Sampling(0.7, top_p=0.9, top_k=20, seed=5)),
        GenerateRequest("c", "题三", max_new_tokens=64, stop=("\n",), sampling=Sampling(1.0)),
    ]
    outputs = {o.id: o for o in model.generate(requests)}
    [(greedy_prompts, greedy), (prompts, params)] = model.llm.calls  # type: ignore[attr-defined]
    # Greedy requests go as they always did; sampled ones in one call, a SamplingParams each.
    assert greedy_prompts == ["题一"]
    assert greedy.kwargs == {"temperature": 0.0, "max_tokens": 8, "stop": None}
    assert prompts == ["题二", "题三"]
    assert [p.kwargs for p in params] == [
        {"temperature": 0.7, "seed": 5, "max_tokens": 8, "stop": None, "top_p": 0.9, "top_k": 20},
        {"temperature": 1.0, "seed": 3, "max_tokens": 64, "stop": ["\n"]},  # the run's seed
    ]
    assert set(outputs) == {"greedy", "b", "c"}


def test_vllm_cut_off_replies_and_think_blocks(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m")
    requests = [
        GenerateRequest("cut", "很长的题", max_new_tokens=4),
        GenerateRequest("ended", "题", max_new_tokens=4),
        GenerateRequest("thought", "想想这题", max_new_tokens=64, sampling=Sampling(0.6, seed=1)),
    ]
    outputs = {o.id: o for o in model.generate(requests)}
    assert outputs["cut"].truncated is True and outputs["ended"].truncated is False
    thought = outputs["thought"]
    assert (thought.text, thought.reasoning) == (f"答案：B <{len('想想这题')}>", "想一想")
    assert thought.reasoning_tokens == len("想一想".encode())  # the byte-level tokenizer's tokens
    assert outputs["ended"].reasoning is None


def test_vllm_thinking_reaches_the_chat_template(
    fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(FakeLLM, "get_tokenizer", lambda self: ThinkingTokenizer())
    model = resolve_model("vllm:m")
    chat = (("user", "题"),)
    requests = [
        GenerateRequest(str(switch), "", messages=chat, sampling=Sampling(thinking=switch))
        for switch in (None, True, False)
    ]
    outputs = {o.id: o for o in model.generate(requests)}
    [(prompts, _)] = model.llm.calls  # type: ignore[attr-defined]
    assert prompts == [
        "<user>题<assistant>",  # unset: the template renders as it always did
        "<user>题<assistant><think>\n",
        "<user>题<assistant><think>\n\n</think>\n\n",
    ]
    # The prompt opened the block and the reply never closed it: all of it is reasoning, no answer.
    opened = outputs["True"]
    assert (opened.text, opened.reasoning) == ("", f"答案：B <{len(prompts[1])}>")
    assert outputs["None"].text == f"答案：B <{len(prompts[0])}>" and outputs["None"].reasoning is None


def sequence_logprob(context: list[int], continuation: list[int]) -> float:
    """Log-probability of a continuation after a context under fake_logits, token by token."""
    whole = context + continuation
    return sum(log_softmax_at(fake_logits(whole[: len(context) + i]), t) for i, t in enumerate(continuation))


def test_vllm_loglik_scores_every_candidate_with_its_answer_end(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m")
    candidates = ("A", "AB", "ABD", "正确")
    [output] = list(model.loglikelihood([LoglikRequest("q", "题\n答案：", candidates, answer_end="\n\n")]))
    [(prompts, params)] = model.llm.calls  # type: ignore[attr-defined]
    assert params.kwargs == {"temperature": 0.0, "max_tokens": 1, "prompt_logprobs": 0, "detokenize": False}
    context = [1, *"题\n答案：".encode()]
    # One whole sequence per candidate: context + candidate + answer end, all scored.
    assert prompts == [{"prompt_token_ids": context + list(f"{c}\n\n".encode())} for c in candidates]
    assert output.logprobs is not None and set(output.logprobs) == set(candidates)
    for candidate in candidates:
        expected = sequence_logprob(context, list(f"{candidate}\n\n".encode()))
        assert abs(output.logprobs[candidate] - expected) < 1e-9
    assert output.tokens_in == len(context)


def test_vllm_chat_loglik_ends_the_assistant_turn(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m")
    request = LoglikRequest("c", "", ("A", "AB"), messages=(("user", "题"),))
    [output] = list(model.loglikelihood([request]))
    [(prompts, _)] = model.llm.calls  # type: ignore[attr-defined]
    context = list(b"<user>\xe9\xa2\x98<assistant>")  # the rendered template, no BOS added
    assert [p["prompt_token_ids"] for p in prompts] == [context + list(b"A<end>"), context + list(b"AB<end>")]
    assert output.logprobs is not None
    assert abs(output.logprobs["AB"] - sequence_logprob(context, list(b"AB<end>"))) < 1e-9


def test_vllm_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ModelError, match="the vllm backend needs vLLM and a GPU: pip install vllm"):
        resolve_model("vllm:m")


# -- llama.cpp -------------------------------------------------------------------------------------------
class FakeLlama:
    """Byte-level tokenizer and deterministic logits over a 256-token vocabulary. Like llama.cpp it keeps
    what it evaluated: `eval` drops the tokens past `n_tokens` and appends, one logits row per token."""

    def __init__(self, model_path: str, n_ctx: int, logits_all: bool, seed: int, verbose: bool) -> None:
        assert logits_all is True
        self.n_ctx = n_ctx
        self.metadata = {"tokenizer.chat_template": "x"}
        self.input_ids: list[int] = []
        self.scores: list[list[float]] = []
        self.n_tokens = 0
        self.evaluated = 0  # tokens run through the model, to see what is reused
        self.completions: list[dict[str, Any]] = []  # the arguments of each generation call
        self.resets = 0

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        return ([1] if add_bos else []) + list(text)

    def detokenize(self, tokens: list[int]) -> bytes:
        return bytes(tokens)

    def reset(self) -> None:
        self.n_tokens = 0
        self.resets += 1

    def eval(self, tokens: list[int]) -> None:
        del self.input_ids[self.n_tokens :], self.scores[self.n_tokens :]
        for token in tokens:
            self.input_ids.append(token)
            self.scores.append(self.logits(self.input_ids))
            self.n_tokens += 1
            self.evaluated += 1

    def logits(self, prefix: list[int]) -> list[float]:
        return fake_logits(prefix)

    def create_completion(self, prompt: str, **kw: Any) -> dict[str, Any]:
        self.completions.append(kw)
        # A prompt that asks for it is cut off at its budget, or answered after a think block.
        finish = "length" if "长" in prompt else "stop"
        text = "<think>想一想</think>答案：C" if "想" in prompt else "答案：C"
        return {
            "choices": [{"text": text, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3},
        }

    def create_chat_completion(self, messages: list[dict[str, str]], **kw: Any) -> dict[str, Any]:
        self.completions.append(kw)
        content = f"chat:{messages[-1]['content']}"
        return {"choices": [{"message": {"content": content}, "finish_reason": "stop"}], "usage": {}}


class PrimedLlama(FakeLlama):
    """A model primed to answer 'ABCD' and end the line: after the last ':' it all but certainly writes the
    next character of 'ABCD\\n\\n'."""

    def logits(self, prefix: list[int]) -> list[float]:
        written = bytes(prefix[len(prefix) - prefix[::-1].index(ord(":")) :]) if ord(":") in prefix else b""
        target = b"ABCD\n\n"
        row = [0.0] * 256
        if target.startswith(written) and len(written) < len(target):
            row[target[len(written)]] = 12.0
        return row


def fake_logits(prefix: list[int]) -> list[float]:
    return [math.sin(sum(prefix) * 0.01 + v * 0.37) * 3 for v in range(256)]


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_llamacpp_greedy_calls_are_as_before_and_sampled_ones_set_every_filter(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}", ModelOptions(seed=7))
    assert model.sampling_options == {"temperature", "top_p", "top_k"}  # no template kwargs: no thinking
    llm = model.llm  # type: ignore[attr-defined]
    requests = [
        GenerateRequest("greedy", "题", max_new_tokens=8),
        GenerateRequest("b", "题", max_new_tokens=8, sampling=Sampling(0.7, top_p=0.9, top_k=20, seed=5)),
        GenerateRequest("c", "", messages=(("user", "题"),), stop=("\n",), sampling=Sampling(1.0)),
        GenerateRequest("d", "题", sampling=Sampling(0.5, seed=2**32 - 1)),
    ]
    list(model.generate(requests))
    unset = {"top_p": 1.0, "top_k": 0, "min_p": 0.0}  # llama-cpp-python's own defaults would filter
    assert llm.completions == [
        {"max_tokens": 8, "stop": None, "temperature": 0.0},
        {
            "max_tokens": 8,
            "stop": None,
            "temperature": 0.7,
            "top_p": 0.9,
            "top_k": 20,
            "min_p": 0.0,
            "seed": 5,
        },
        {"max_tokens": 256, "stop": ["\n"], "temperature": 1.0, **unset, "seed": 7},  # the run's seed
        # 32-bit seeds, never 0xFFFFFFFF (llama.cpp's "pick a random one")
        {"max_tokens": 256, "stop": None, "temperature": 0.5, **unset, "seed": 0},
    ]
    assert llm.resets == 3  # each sampled prompt is evaluated afresh, never on another's prefix


def test_llamacpp_cut_off_replies_and_think_blocks(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    requests = [
        GenerateRequest("cut", "很长的题", max_new_tokens=3),
        GenerateRequest("ended", "题"),
        GenerateRequest("thought", "想想这题"),
        GenerateRequest("opened", "长题\n<think>\n"),  # the prompt opened the block: cut off while thinking
    ]
    outputs = {o.id: o for o in model.generate(requests)}
    assert outputs["cut"].truncated is True and outputs["ended"].truncated is False
    assert (outputs["thought"].text, outputs["thought"].reasoning) == ("答案：C", "想一想")
    assert outputs["thought"].reasoning_tokens == len("想一想".encode())
    opened = outputs["opened"]
    assert (opened.text, opened.reasoning, opened.truncated) == ("", "答案：C", True)


def test_llamacpp_loglik_sums_continuation_tokens(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    context = "答案："
    [output] = list(model.loglikelihood([LoglikRequest("q", context, ("A", "正确"))]))
    ctx = [1, *context.encode()]
    for candidate in ("A", "正确"):
        cont = list(candidate.encode())
        whole = ctx + cont
        expected = sum(log_softmax_at(fake_logits(whole[: len(ctx) + i]), t) for i, t in enumerate(cont))
        assert output.logprobs is not None and abs(output.logprobs[candidate] - expected) < 1e-9


def test_llamacpp_scores_the_answer_end_with_every_candidate(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    context = "题\n答案："
    candidates = ("A", "AB", "ABD")
    [output] = list(model.loglikelihood([LoglikRequest("q", context, candidates, answer_end="\n\n")]))
    ctx = [1, *context.encode()]
    for candidate in candidates:
        expected = sequence_logprob(ctx, list(f"{candidate}\n\n".encode()))
        assert output.logprobs is not None and abs(output.logprobs[candidate] - expected) < 1e-9


def test_llamacpp_keeps_the_shared_prefix_between_questions(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    shared = "以下是单项选择题。\n\n例题：1+1=？\nA. 2\nB. 3\n答案：A\n\n"
    first = LoglikRequest("1", shared + "2+2=？\n答案：", ("A", "B"), answer_end="\n\n")
    second = LoglikRequest("2", shared + "3+3=？\n答案：", ("A", "B"), answer_end="\n\n")
    llm = model.llm  # type: ignore[attr-defined]
    list(model.loglikelihood([first]))
    before = llm.evaluated
    [reused] = list(model.loglikelihood([second]))
    # Only the new question and each candidate's tokens but the last ran: the shared part was kept.
    tail = len(("3+3=？\n答案：").encode())
    assert llm.evaluated - before == tail + 2 * len("A\n")
    [fresh] = list(resolve_model(f"llamacpp:{fake_llama_cpp}").loglikelihood([second]))
    assert reused.logprobs is not None and fresh.logprobs is not None
    for candidate, value in fresh.logprobs.items():
        assert abs(reused.logprobs[candidate] - value) < 1e-9


def test_llamacpp_candidates_share_their_first_tokens(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    llm = model.llm  # type: ignore[attr-defined]
    candidates = ("A", "AB", "ABD", "ABCD", "BD", "C")
    request = LoglikRequest("q", "题\n答案：", candidates, answer_end="\n")
    [output] = list(model.loglikelihood([request]))
    context = [1, *"题\n答案：".encode()]
    assert output.logprobs is not None
    for candidate in candidates:
        expected = sequence_logprob(context, list(f"{candidate}\n".encode()))
        assert abs(output.logprobs[candidate] - expected) < 1e-9
    # Each distinct token path past the context runs once: A, AB, ABC, ABCD, ABD, B, BD, C (the context,
    # then 8 tokens), not the 1 + 2 + 3 + 4 + 2 + 1 = 13 a candidate-by-candidate pass would run.
    assert llm.evaluated == len(context) + 8
    again = LoglikRequest("r", "题\n答案：", tuple(reversed(candidates)), answer_end="\n")
    [reordered] = list(resolve_model(f"llamacpp:{fake_llama_cpp}").loglikelihood([again]))
    assert reordered.logprobs == output.logprobs


class FakeLlamaLib:
    """llama.cpp's C calls for a context of many sequences, over fake_logits: each sequence holds the
    tokens at its positions; a decode's rows are each sequence's tokens up to the entry's position."""

    def __init__(self) -> None:
        self.cells: dict[int, dict[int, int]] = {}
        self.decodes = 0
        self.entries = 0  # tokens run, shared ones once
        self.rows: list[list[float]] = []

    def llama_context_default_params(self) -> types.SimpleNamespace:
        return types.SimpleNamespace()

    def llama_init_from_model(self, model: object, params: types.SimpleNamespace) -> object:
        assert params.n_seq_max == 64 and params.kv_unified is True
        return object()

    def llama_get_memory(self, ctx: object) -> str:
        return "memory"

    def llama_model_get_vocab(self, model: object) -> str:
        return "vocab"

    def llama_vocab_n_tokens(self, vocab: object) -> int:
        return 256

    def llama_batch_init(self, n_tokens: int, embd: int, n_seq: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(
            n_tokens=0, token=[0] * n_tokens, pos=[0] * n_tokens, n_seq_id=[0] * n_tokens,
            seq_id=[[0] * n_seq for _ in range(n_tokens)], logits=[0] * n_tokens,
        )  # fmt: skip

    def llama_memory_seq_rm(self, memory: object, seq: int, p0: int, p1: int) -> bool:
        for held in [self.cells.get(seq, {})] if seq >= 0 else list(self.cells.values()):
            for position in [p for p in held if p >= max(p0, 0) and (p1 < 0 or p < p1)]:
                del held[position]
        return True

    def llama_memory_seq_cp(self, memory: object, src: int, dst: int, p0: int, p1: int) -> None:
        self.cells.setdefault(dst, {}).update(self.cells.get(src, {}))

    def llama_decode(self, ctx: object, batch: types.SimpleNamespace) -> int:
        self.decodes += 1
        entries = [
            (batch.token[i], batch.pos[i], batch.seq_id[i][: batch.n_seq_id[i]])
            for i in range(batch.n_tokens)
        ]
        for token, position, seqs in entries:
            for seq in seqs:
                held = self.cells.setdefault(seq, {})
                assert position == len(held), "a position that does not follow the sequence's tokens"
                held[position] = token
        self.entries += len(entries)
        self.rows = [
            fake_logits([t for p, t in sorted(self.cells[seqs[0]].items()) if p <= position])
            if batch.logits[i]
            else []
            for i, (_, position, seqs) in enumerate(entries)
        ]
        return 0

    def llama_get_logits_ith(self, ctx: object, index: int) -> list[float]:
        return self.rows[index]

    def llama_batch_free(self, batch: object) -> None:
        pass

    def llama_free(self, ctx: object) -> None:
        pass


def test_one_call_scores_every_candidate_in_a_sequence_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from kaoshi.models.llamacpp_sequences import LlamaSequences

    lib = FakeLlamaLib()
    monkeypatch.setattr(np.ctypeslib, "as_array", lambda row, shape: np.asarray(row))
    sequences = LlamaSequences(lib, object(), 4096)
    context = [1, *"题\n答案：".encode()]
    candidates = [list(f"{c}\n".encode()) for c in ("A", "AB", "ABD", "ABCD", "BD", "C", "正确")]
    scores = sequences.score(context, candidates)
    for ids, score in zip(candidates, scores, strict=True):
        assert abs(score - sequence_logprob(context, ids)) < 1e-9
    assert lib.decodes == 2  # the context, then every candidate at once
    # A token tree: 'A', 'AB', 'ABC', 'ABD', 'B', 'C' and the two of '正确' each run once after the context.
    assert lib.entries == len(context) + len({(*ids[:k],) for ids in candidates for k in range(1, len(ids))})
    # The next question keeps the shared part of the context: only its own tail runs.
    second = [1, *"题\n答：".encode()]
    again = sequences.score(second, candidates)
    assert lib.decodes == 4
    for ids, score in zip(candidates, again, strict=True):
        assert abs(score - sequence_logprob(second, ids)) < 1e-9
    assert set(lib.cells) <= {0, *range(1, 8)} and all(not lib.cells[s] for s in lib.cells if s)


def test_a_letter_set_no_longer_loses_to_its_own_prefix(
    fake_llama_cpp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model all but certainly writes 'ABCD' and a line break. Scored bare, 'AB' wins anyway: its
    # score is part of ABCD's. With the answer end scored too, 'AB' must end where the model writes 'C'.
    monkeypatch.setattr(sys.modules["llama_cpp"], "Llama", PrimedLlama)
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    candidates = ("A", "AB", "ABC", "ABCD", "BD")
    [bare] = list(model.loglikelihood([LoglikRequest("bare", "Answer:", candidates)]))
    [ended] = list(model.loglikelihood([LoglikRequest("ended", "Answer:", candidates, answer_end="\n\n")]))
    assert bare.logprobs is not None and ended.logprobs is not None
    assert max(bare.logprobs, key=bare.logprobs.__getitem__) == "A"
    assert max(ended.logprobs, key=ended.logprobs.__getitem__) == "ABCD"
    assert ended.logprobs["ABCD"] > ended.logprobs["AB"] + 10


@pytest.mark.parametrize(
    ("held", "tokens", "kept"),
    [
        ([], [1, 2, 3], 0),
        ([1, 2, 3], [1, 2, 3], 2),  # the same sequence: its last token runs again, its logits are read
        ([1, 2, 3, 9, 9], [1, 2, 3, 4], 3),
        ([1, 2], [1, 2, 3, 4], 2),
        ([5, 2, 3], [1, 2, 3], 0),
        ([1], [1], 0),
    ],
)
def test_reusable_prefix(held: list[int], tokens: list[int], kept: int) -> None:
    assert reusable_prefix(held, tokens) == kept


def test_log_softmax_at_is_stable_and_normalised() -> None:
    row = [1000.0, 1001.0, 999.0]
    total = sum(math.exp(log_softmax_at(row, t)) for t in range(3))
    assert abs(total - 1.0) < 1e-12
    assert abs(log_softmax_at(row, 1) - (1.0 - math.log(math.exp(0) + math.exp(1) + math.exp(-1)))) < 1e-12


def test_llamacpp_generation(fake_llama_cpp: Path) -> None:
    model = resolve_model(f"llamacpp:{fake_llama_cpp}")
    outputs = list(
        model.generate(
            [
                GenerateRequest("a", "题", max_new_tokens=4),
                GenerateRequest("b", "", messages=(("user", "你好"),)),
            ]
        )
    )
    assert [(o.text, o.tokens_out) for o in outputs] == [("答案：C", 3), ("chat:你好", None)]
    [chat_loglik] = list(model.loglikelihood([LoglikRequest("c", "", ("A",), messages=(("user", "x"),))]))
    assert chat_loglik.error == "the llamacpp backend scores plain-text prompts only; use --no-chat"


def test_llamacpp_missing_file_and_package(fake_llama_cpp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelError, match=r"GGUF file /nope\.gguf does not exist"):
        resolve_model("llamacpp:/nope.gguf")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ModelError, match="pip install llama-cpp-python"):
        resolve_model(f"llamacpp:{fake_llama_cpp}")


@pytest.mark.skipif(
    "llama_cpp" in sys.modules or __import__("importlib").util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed (it compiles for ~11 minutes; CI does not build it)",
)
def test_llamacpp_real_engine_with_smollm2() -> None:
    from kaoshi.models.hf import smollm2_path

    model = resolve_model(f"llamacpp:{smollm2_path()}")
    [output] = list(model.loglikelihood([LoglikRequest("q", "1+1=", ("2", "3"))]))
    assert output.logprobs is not None and output.logprobs["2"] > output.logprobs["3"]
