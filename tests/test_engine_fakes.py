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


# -- vLLM ------------------------------------------------------------------------------------------------
@dataclass
class FakeLogprob:
    logprob: float
    decoded_token: str | None


class FakeTokenizer:
    chat_template = "{{ messages }}"

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool
    ) -> str:
        assert tokenize is False and add_generation_prompt is True
        return "".join(f"<{m['role']}>{m['content']}" for m in chat) + "<assistant>"

    def decode(self, ids: list[int]) -> str:
        return {1: " A", 2: "B", 3: "C"}.get(ids[0], "?")


@dataclass
class FakeLLM:
    kwargs: dict[str, Any]
    calls: list[tuple[list[str], Any]] = field(default_factory=list)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer()

    def generate(self, prompts: list[str], params: Any, use_tqdm: bool) -> list[Any]:
        self.calls.append((prompts, params))
        outputs = []
        for prompt in prompts:
            if params.kwargs.get("logprobs"):
                top = {1: FakeLogprob(-0.1, None), 2: FakeLogprob(-2.5, "B"), 9: FakeLogprob(-3.0, "正确")}
                completion = types.SimpleNamespace(text="A", token_ids=[1], logprobs=[top])
            else:
                completion = types.SimpleNamespace(
                    text=f"答案：B <{len(prompt)}>", token_ids=[5, 6, 7], logprobs=None
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


def test_vllm_loglik_is_one_max_tokens_1_request_with_logprobs(fake_vllm: types.ModuleType) -> None:
    model = resolve_model("vllm:m")
    [output] = list(model.loglikelihood([LoglikRequest("q", "题\n答案：", ("A", "B", "C", "D", "正确"))]))
    [(_, params)] = model.llm.calls  # type: ignore[attr-defined]
    assert params.kwargs == {"temperature": 0.0, "max_tokens": 1, "logprobs": 20}
    assert "prompt_logprobs" not in params.kwargs
    # ' A' decodes to A; C and D are not among the top log-probabilities and are left out
    assert output.logprobs == {"A": -0.1, "B": -2.5, "正确": -3.0}


def test_vllm_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ModelError, match="the vllm backend needs vLLM and a GPU: pip install vllm"):
        resolve_model("vllm:m")


# -- llama.cpp -------------------------------------------------------------------------------------------
class FakeLlama:
    """Byte-level tokenizer and deterministic logits over a 256-token vocabulary."""

    def __init__(self, model_path: str, n_ctx: int, logits_all: bool, seed: int, verbose: bool) -> None:
        assert logits_all is True
        self.n_ctx = n_ctx
        self.metadata = {"tokenizer.chat_template": "x"}
        self.scores: list[list[float]] = []

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        return ([1] if add_bos else []) + list(text)

    def reset(self) -> None:
        self.scores = []

    def eval(self, tokens: list[int]) -> None:
        self.scores = [fake_logits(tokens[: i + 1]) for i in range(len(tokens))]

    def create_completion(self, prompt: str, **kw: Any) -> dict[str, Any]:
        return {"choices": [{"text": "答案：C"}], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}

    def create_chat_completion(self, messages: list[dict[str, str]], **kw: Any) -> dict[str, Any]:
        return {"choices": [{"message": {"content": f"chat:{messages[-1]['content']}"}}], "usage": {}}


def fake_logits(prefix: list[int]) -> list[float]:
    return [math.sin(sum(prefix) * 0.01 + v * 0.37) * 3 for v in range(256)]


def log_softmax_at(row: list[float], token: int) -> float:
    peak = max(row)
    return row[token] - (peak + math.log(sum(math.exp(v - peak) for v in row)))


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


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
