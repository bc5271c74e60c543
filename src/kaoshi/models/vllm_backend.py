"""vLLM offline backend (`vllm:<hub id or folder>`): batched generation, and log-likelihood of whole
sequences: one max_tokens=1 request per candidate on context + candidate + answer end, summing the
prompt log-probabilities of the candidate's tokens. Every candidate gets a score, letter sets of any
length included. vLLM reads no prefix cache for requests with prompt log-probabilities, so each candidate
runs its whole prompt; that is the price of scoring every letter set.

A sampled request (temperature > 0) carries its own seed in its SamplingParams, so vLLM samples it with a
generator of its own: its draws do not depend on the other requests of the batch. A reply that stopped at
its budget (finish_reason "length") is `truncated`; a think block is kept apart from the answer
(models/reasoning.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any

from kaoshi.models.base import (
    Capabilities,
    ChatForm,
    GenerateRequest,
    LoglikRequest,
    Message,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.chat import assistant_turn_end, render_with_template
from kaoshi.models.reasoning import prompt_opens_reasoning, with_reasoning
from kaoshi.models.tokens import tokenize_request


class VLLMModel(Model):
    name = "vllm"
    default_batch_size = 256
    capabilities = Capabilities(
        description="vLLM's offline engine with prefix caching, --tensor-parallel-size (needs a GPU)",
        argument="ID_OR_FOLDER",
        methods=frozenset({"generate", "loglik"}),
        chat=ChatForm.LOADED,  # the tokenizer's chat template
        sampling=frozenset({"temperature", "top_p", "top_k", "thinking"}),
        needs=("vllm",),
        install="pip install 'kaoshi[vllm]'",
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        try:
            import vllm
        except ImportError:
            raise ModelError("the vllm backend needs vLLM and a GPU: pip install vllm") from None
        _, _, target = spec.partition(":")
        if not target:
            raise ModelError("name the model: --model vllm:<hub id or folder>")
        engine_args: dict[str, Any] = {
            "model": target,
            "tensor_parallel_size": options.tensor_parallel_size,
            "enable_prefix_caching": True,
            "seed": options.seed,
            "trust_remote_code": options.trust_remote_code,
        }
        if options.dtype != "auto":
            engine_args["dtype"] = options.dtype
        if options.max_length:
            engine_args["max_model_len"] = options.max_length
        self._vllm = vllm
        self.llm = vllm.LLM(**engine_args)
        self.tokenizer = self.llm.get_tokenizer()
        self.default_chat = bool(getattr(self.tokenizer, "chat_template", None))

    def render(
        self, prompt: str, messages: tuple[Message, ...] | None, *, thinking: bool | None = None
    ) -> str:
        return render_with_template(self.tokenizer, prompt, messages, thinking=thinking)

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        by_budget: dict[tuple[int, tuple[str, ...]], list[GenerateRequest]] = {}
        sampled = []
        for request in requests:
            if request.sampling.greedy:
                by_budget.setdefault((request.max_new_tokens, request.stop), []).append(request)
            else:
                sampled.append(request)
        for (max_tokens, stop), group in by_budget.items():
            params = self._vllm.SamplingParams(
                temperature=0.0, max_tokens=max_tokens, stop=list(stop) or None
            )
            yield from self._generate(group, params)
        if sampled:
            # One call, each request with its own parameters and seed.
            yield from self._generate(sampled, [self._sampling_params(request) for request in sampled])

    def _sampling_params(self, request: GenerateRequest) -> Any:
        """A sampled request's parameters: top-p and top-k only where set (vLLM's defaults are off), its
        seed, or the run's where it sets none."""
        sampling = request.sampling
        filters: dict[str, Any] = {}
        if sampling.top_p is not None:
            filters["top_p"] = sampling.top_p
        if sampling.top_k is not None:
            filters["top_k"] = sampling.top_k
        return self._vllm.SamplingParams(
            temperature=sampling.temperature,
            seed=self.options.seed if sampling.seed is None else sampling.seed,
            max_tokens=request.max_new_tokens,
            stop=list(request.stop) or None,
            **filters,
        )

    def _generate(self, group: list[GenerateRequest], params: Any) -> Iterator[ModelOutput]:
        """Generate a group of requests with one SamplingParams, or one per request."""
        prompts = [self.render(r.prompt, r.messages, thinking=r.sampling.thinking) for r in group]
        started = time.perf_counter()
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        elapsed = (time.perf_counter() - started) / max(1, len(group))
        for request, prompt, output in zip(group, prompts, outputs, strict=True):
            completion = output.outputs[0]
            answer = ModelOutput(
                request.id,
                text=completion.text,
                tokens_in=len(output.prompt_token_ids or []),
                tokens_out=len(completion.token_ids),
                latency_s=elapsed,
                truncated=completion.finish_reason == "length",
            )
            yield with_reasoning(
                answer, opened=prompt_opens_reasoning(prompt), count_tokens=self._count_tokens
            )

    def _count_tokens(self, text: str) -> int:
        return len(self._encode(text, chat=True))

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        # prompt_logprobs=0 returns, at every prompt position, the log-probability of the token there and
        # no alternatives (1 would also find, at every position, the most likely token: on an H200
        # `vllm serve` answered such requests at half the rate, speed/README.md "vllm_shapes.py").
        params = self._vllm.SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=0, detokenize=False)
        started = time.perf_counter()
        prompts: list[dict[str, list[int]]] = []
        spans: list[tuple[int, list[list[int]]]] = []  # per request: context length, candidate tokens
        for request in requests:
            context = self.render(request.context, request.messages)
            context_ids, continuations = tokenize_request(
                request, context, self._encode, self._decode, self.turn_end
            )
            prompts += [{"prompt_token_ids": context_ids + ids} for ids in continuations]
            spans.append((len(context_ids), continuations))
        outputs = iter(self.llm.generate(prompts, params, use_tqdm=False))
        elapsed = (time.perf_counter() - started) / max(1, len(requests))
        for request, (n_context, continuations) in zip(requests, spans, strict=True):
            scores = {}
            for candidate, ids in zip(request.continuations, continuations, strict=True):
                positions = next(outputs).prompt_logprobs  # per position: token id -> Logprob (None first)
                scores[candidate] = sum(
                    float(positions[n_context + i][token].logprob) for i, token in enumerate(ids)
                )
            yield ModelOutput(
                request.id, logprobs=scores, tokens_in=n_context, tokens_out=0, latency_s=elapsed
            )

    @cached_property
    def turn_end(self) -> str:
        """What ends an assistant turn in this model's chat template: scored after each chat answer."""
        return assistant_turn_end(self.tokenizer)

    def _encode(self, text: str, *, chat: bool) -> list[int]:
        # A chat template already wrote the special tokens; plain text gets the tokenizer's own (BOS).
        return list(self.tokenizer.encode(text, add_special_tokens=not chat))

    def _decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))
