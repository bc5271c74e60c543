"""vLLM offline backend (`vllm:<hub id or folder>`): batched generation, and log-likelihood through one
max_tokens=1 request with top log-probabilities per question (prefix caching stays in effect, unlike
prompt_logprobs). Single-token candidates are read; a candidate outside the top log-probabilities is
left out, and a question none of whose candidates appears is unparsed."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from kaoshi.models.base import (
    GenerateRequest,
    LoglikRequest,
    Message,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.chat import render_with_template

TOP_LOGPROBS = 20


class VLLMModel(Model):
    name = "vllm"
    default_batch_size = 256

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

    def render(self, prompt: str, messages: tuple[Message, ...] | None) -> str:
        return render_with_template(self.tokenizer, prompt, messages)

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        by_budget: dict[tuple[int, tuple[str, ...]], list[GenerateRequest]] = {}
        for request in requests:
            by_budget.setdefault((request.max_new_tokens, request.stop), []).append(request)
        for (max_tokens, stop), group in by_budget.items():
            params = self._vllm.SamplingParams(
                temperature=0.0, max_tokens=max_tokens, stop=list(stop) or None
            )
            started = time.perf_counter()
            outputs = self.llm.generate(
                [self.render(r.prompt, r.messages) for r in group], params, use_tqdm=False
            )
            elapsed = (time.perf_counter() - started) / max(1, len(group))
            for request, output in zip(group, outputs, strict=True):
                completion = output.outputs[0]
                yield ModelOutput(
                    request.id,
                    text=completion.text,
                    tokens_in=len(output.prompt_token_ids or []),
                    tokens_out=len(completion.token_ids),
                    latency_s=elapsed,
                )

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        params = self._vllm.SamplingParams(temperature=0.0, max_tokens=1, logprobs=TOP_LOGPROBS)
        started = time.perf_counter()
        outputs = self.llm.generate(
            [self.render(r.context, r.messages) for r in requests], params, use_tqdm=False
        )
        elapsed = (time.perf_counter() - started) / max(1, len(requests))
        for request, output in zip(requests, outputs, strict=True):
            top = output.outputs[0].logprobs[0]  # token id -> Logprob
            by_text: dict[str, float] = {}
            for token_id, entry in top.items():
                text = (entry.decoded_token or self.tokenizer.decode([token_id])).strip()
                by_text[text] = max(float(entry.logprob), by_text.get(text, float("-inf")))
            scores = {c: by_text[c] for c in request.continuations if c in by_text}
            yield ModelOutput(
                request.id,
                logprobs=scores,
                tokens_in=len(output.prompt_token_ids or []),
                tokens_out=1,
                latency_s=elapsed,
            )
