"""llama.cpp backend (`llamacpp:<file.gguf>`) via llama-cpp-python: generation and log-likelihood on CPU."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
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
from kaoshi.models.chat import as_dicts


class LlamaCppModel(Model):
    name = "llamacpp"

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelError(
                "the llamacpp backend needs llama-cpp-python: pip install llama-cpp-python"
            ) from None
        _, _, file = spec.partition(":")
        if not file or not Path(file).is_file():
            raise ModelError(f"GGUF file {file or '(none)'} does not exist: --model llamacpp:FILE.gguf")
        self.max_length = options.max_length or 4096
        # logits_all keeps every position's logits, which multi-token continuations need.
        self.llm = Llama(
            model_path=file, n_ctx=self.max_length, logits_all=True, seed=options.seed, verbose=False
        )
        self.default_chat = bool(getattr(self.llm, "metadata", {}).get("tokenizer.chat_template"))

    def _tokens(self, text: str, *, bos: bool) -> list[int]:
        tokens: list[int] = self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=True)
        return tokens

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None) -> bool:
        return len(self._tokens(prompt_text, bos=True)) + 256 <= self.max_length

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            started = time.perf_counter()
            if request.messages is not None:
                chat = as_dicts(request.messages)
                result: dict[str, Any] = self.llm.create_chat_completion(
                    messages=chat,
                    max_tokens=request.max_new_tokens,
                    temperature=0.0,
                    stop=list(request.stop) or None,
                )
                text = result["choices"][0]["message"]["content"] or ""
            else:
                result = self.llm.create_completion(
                    request.prompt,
                    max_tokens=request.max_new_tokens,
                    temperature=0.0,
                    stop=list(request.stop) or None,
                )
                text = result["choices"][0]["text"]
            usage = result.get("usage") or {}
            yield ModelOutput(
                request.id,
                text=text,
                tokens_in=usage.get("prompt_tokens"),
                tokens_out=usage.get("completion_tokens"),
                latency_s=time.perf_counter() - started,
            )

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            if request.messages is not None:
                yield ModelOutput(
                    request.id, error="the llamacpp backend scores plain-text prompts only; use --no-chat"
                )
                continue
            started = time.perf_counter()
            context = self._tokens(request.context, bos=True)
            scores = {}
            for candidate in request.continuations:
                whole = self._tokens(request.context + candidate, bos=True)
                # Tokens past the context's own, so a merge at the boundary is scored as the model sees it.
                continuation = whole[len(context) :]
                scores[candidate] = self._sequence_logprob(context, continuation)
            yield ModelOutput(
                request.id,
                logprobs=scores,
                tokens_in=len(context),
                tokens_out=0,
                latency_s=time.perf_counter() - started,
            )

    def _sequence_logprob(self, context: list[int], continuation: list[int]) -> float:
        self.llm.reset()
        self.llm.eval(context + continuation)
        total = 0.0
        for offset, token in enumerate(continuation):
            row = self.llm.scores[len(context) - 1 + offset]
            peak = max(row)
            log_norm = peak + math.log(sum(math.exp(v - peak) for v in row))
            total += float(row[token]) - log_norm
        return total

    def close(self) -> None:
        if hasattr(self.llm, "close"):
            self.llm.close()
