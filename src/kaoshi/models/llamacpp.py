"""llama.cpp backend (`llamacpp:<file.gguf>`) via llama-cpp-python: generation and log-likelihood on CPU.

Greedy generation reuses what the model holds of the previous prompt. A sampled request (temperature > 0)
starts from an empty cache with its own seed, so its text depends on nothing but the request: llama.cpp's
logits depend on how a prompt is cut into batches (tests/integration/test_openai_loglik_llamacpp.py), so a
prompt evaluated on top of another's prefix may sample otherwise than on a resume that orders requests
differently. `thinking` is not honoured: `Llama.create_chat_completion` passes no arguments to the chat
template (no `enable_thinking`), so the runner refuses it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
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
from kaoshi.models.chat import as_dicts
from kaoshi.models.llamacpp_sequences import SEQUENCE_CALLS, LlamaSequences, log_normaliser
from kaoshi.models.reasoning import prompt_opens_reasoning, with_reasoning
from kaoshi.models.tokens import common_prefix, continuation_tokens, reusable_prefix

# llama.cpp's seeds are 32-bit, and 0xFFFFFFFF (LLAMA_DEFAULT_SEED) asks it for a random one.
_SEEDS = 2**32 - 1


class LlamaCppModel(Model):
    name = "llamacpp"
    capabilities = Capabilities(
        description="llama-cpp-python: generation and log-likelihood of a GGUF file on CPU",
        argument="FILE",
        methods=frozenset({"generate", "loglik"}),
        chat=ChatForm.LOADED,  # the GGUF file's chat template
        sampling=frozenset({"temperature", "top_p", "top_k"}),  # no thinking: see the module's docstring
        needs=("llama_cpp",),
        install="pip install 'kaoshi[llamacpp]'",
    )

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

    def _text(self, tokens: list[int]) -> str:
        return bytes(self.llm.detokenize(tokens)).decode("utf-8", errors="replace")

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = 256) -> bool:
        return len(self._tokens(prompt_text, bos=True)) + reserve <= self.max_length

    def count_tokens(self, prompt_text: str, messages: tuple[Message, ...] | None = None) -> int | None:
        # chat messages go through llama.cpp's own chat handler: not counted here (an estimate approximates)
        return None if messages is not None else len(self._tokens(prompt_text, bos=True))

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            started = time.perf_counter()
            decoding = self._decoding(request)
            if not request.sampling.greedy:
                self.llm.reset()  # no prefix of another prompt kept: the same request samples the same text
            if request.messages is not None:
                chat = as_dicts(request.messages)
                result: dict[str, Any] = self.llm.create_chat_completion(
                    messages=chat,
                    max_tokens=request.max_new_tokens,
                    stop=list(request.stop) or None,
                    **decoding,
                )
                choice = result["choices"][0]
                text = choice["message"]["content"] or ""
            else:
                result = self.llm.create_completion(
                    request.prompt,
                    max_tokens=request.max_new_tokens,
                    stop=list(request.stop) or None,
                    **decoding,
                )
                choice = result["choices"][0]
                text = choice["text"]
            usage = result.get("usage") or {}
            output = ModelOutput(
                request.id,
                text=text,
                tokens_in=usage.get("prompt_tokens"),
                tokens_out=usage.get("completion_tokens"),
                latency_s=time.perf_counter() - started,
                truncated=choice.get("finish_reason") == "length",
            )
            # The chat template's text is llama-cpp-python's own: only a plain prompt shows an opened block.
            opened = request.messages is None and prompt_opens_reasoning(request.prompt)
            yield with_reasoning(
                output, opened=opened, count_tokens=lambda text: len(self._tokens(text, bos=False))
            )

    def _decoding(self, request: GenerateRequest) -> dict[str, Any]:
        """The sampling arguments of a request's call. Greedy is temperature 0 alone, as it always was;
        a sampled request sets every filter (top-p and top-k off unless set, no min-p: llama-cpp-python's
        own defaults would filter) and its seed (the run's where it sets none)."""
        sampling = request.sampling
        if sampling.greedy:
            return {"temperature": 0.0}
        seed = self.options.seed if sampling.seed is None else sampling.seed
        return {
            "temperature": sampling.temperature,
            "top_p": 1.0 if sampling.top_p is None else sampling.top_p,
            "top_k": 0 if sampling.top_k is None else sampling.top_k,
            "min_p": 0.0,
            "seed": seed % _SEEDS,
        }

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            if request.messages is not None:
                yield ModelOutput(
                    request.id, error="the llamacpp backend scores plain-text prompts only; use --no-chat"
                )
                continue
            started = time.perf_counter()
            context = self._tokens(request.context, bos=True)
            end = request.scored_end("")
            continuations = [
                continuation_tokens(
                    lambda text: self._tokens(text, bos=True), self._text, request.context, context, c + end
                )
                or self._tokens(c + end, bos=False)
                for c in request.continuations
            ]
            longest = max((len(ids) for ids in continuations), default=0)
            if len(context) + longest > self.max_length:
                yield ModelOutput(
                    request.id,
                    error=f"prompt has {len(context)} tokens; with its longest answer it exceeds the "
                    f"{self.max_length}-token context (use fewer --shots or a shorter template)",
                )
                continue
            sequences = self._sequences
            if sequences is not None:
                values = sequences.score(context, continuations)
            else:
                self._eval_context(context)
                values = self._score_continuations(len(context), continuations)
            scores = dict(zip(request.continuations, values, strict=True))
            yield ModelOutput(
                request.id,
                logprobs=scores,
                tokens_in=len(context),
                tokens_out=0,
                latency_s=time.perf_counter() - started,
            )

    def _eval_context(self, context: list[int]) -> None:
        """Evaluate a context, keeping what the model already holds of it (the previous question's header
        and exemplars): llama.cpp drops its cache past `n_tokens` and appends what `eval` is given."""
        held = [int(token) for token in self.llm.input_ids[: self.llm.n_tokens]]
        self.llm.n_tokens = reusable_prefix(held, context)
        self.llm.eval(context[self.llm.n_tokens :])

    def _score_continuations(self, n_context: int, continuations: list[list[int]]) -> list[float]:
        """Each continuation's log-probability after the evaluated context. A token is read at the position
        before it, so a continuation runs all its tokens but the last, and only those the one before did
        not leave in the model: letter sets share their first letters, and a question's single-token
        candidates run nothing at all. Each row's normaliser is computed once, vectorised."""
        path: list[int] = []  # the tokens past the context the model holds now
        norms = [log_normaliser(self.llm.scores[n_context - 1])]  # norms[k]: the row after path[:k]
        scores = [0.0] * len(continuations)
        # Deepest first: a path runs before its own prefixes, which then run nothing ('ABD' before 'AB'
        # before 'A'), so there is one llama.cpp call per path no other candidate extends.
        last = 1 + max((token for ids in continuations for token in ids), default=0)
        for index in sorted(range(len(continuations)), key=lambda i: [*continuations[i][:-1], last]):
            ids = continuations[index]
            needed = ids[:-1]
            kept = common_prefix(path, needed)
            del path[kept:], norms[kept + 1 :]
            if len(needed) > kept:
                self.llm.n_tokens = n_context + kept
                self.llm.eval(needed[kept:])
                path.extend(needed[kept:])
                norms.extend(log_normaliser(self.llm.scores[n_context + k]) for k in range(kept, len(needed)))
            scores[index] = sum(
                float(self.llm.scores[n_context - 1 + k][token]) - norms[k] for k, token in enumerate(ids)
            )
        self.llm.n_tokens = n_context + len(path)
        return scores

    @cached_property
    def _sequences(self) -> LlamaSequences | None:
        """A scoring context with a sequence per candidate (one llama.cpp call a question), on the model
        `Llama` loaded; None where llama-cpp-python lacks the calls it needs (then candidates run one
        after another on `Llama`'s own context)."""
        lib = sys.modules.get("llama_cpp")
        model = getattr(getattr(self.llm, "_model", None), "model", None)
        if lib is None or model is None or not all(hasattr(lib, name) for name in SEQUENCE_CALLS):
            return None
        return LlamaSequences(lib, model, self.max_length, getattr(self.llm, "context_params", None))

    def close(self) -> None:
        if "_sequences" in self.__dict__ and self._sequences is not None:
            self._sequences.close()
        if hasattr(self.llm, "close"):
            self.llm.close()


def log_softmax_at(row: Sequence[float], token: int) -> float:
    """log softmax(row)[token], computed stably."""
    return float(row[token]) - log_normaliser(row)
