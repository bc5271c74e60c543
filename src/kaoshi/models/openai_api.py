"""OpenAI-compatible HTTP backends (OpenAI, vLLM / SGLang servers, DeepSeek, Qwen, ...), via aiohttp
(httpx's async pool costs several ms of CPU per request under high concurrency: encode/httpx#3215).

Requests run concurrently on an event loop in a worker thread (bounded by `concurrency`, optionally by
requests per minute); each result is handed to the runner the moment it arrives, so it is stored at
once. Transient failures (429, 5xx, timeouts, connection errors, unreadable bodies) are retried with
exponential backoff and full jitter, honouring Retry-After; what still fails becomes an error sample.
The API key is read from the environment and never leaves the Authorization header.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.models.base import GenerateRequest, LoglikRequest, Model, ModelError, ModelOptions, ModelOutput
from kaoshi.models.chat import as_dicts
from kaoshi.models.retry import RETRYABLE_STATUS, Backoff, parse_retry_after

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOP_LOGPROBS = 20


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Final(Exception):
    """A failure no retry will fix (4xx, empty choices); stored as the sample's error."""


@dataclass
class ApiStats:
    requests: int = 0
    retries: int = 0
    failures: int = 0


class _RateLimiter:
    """Spaces request starts evenly to stay under a requests-per-minute limit."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        await asyncio.sleep(start - now)


class OpenAIModel(Model):
    name = "openai"
    default_chat = True

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            raise ModelError("the openai backend needs aiohttp: pip install 'kaoshi[api]'") from None
        _, _, self.model_name = spec.partition(":")
        if not self.model_name:
            raise ModelError("name the model: --model openai:MODEL (e.g. openai:gpt-4o)")
        self.base_url = (options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        self._api_key = os.environ.get(options.api_key_env)
        if not self._api_key and self.base_url == DEFAULT_BASE_URL:
            raise ModelError(f"no API key: set {options.api_key_env} (or --api-key-env NAME)")
        if options.concurrency < 1:
            raise ModelError("--concurrency must be at least 1")
        self.stats = ApiStats()
        self.backoff = Backoff()
        self._rng = random.Random(options.seed)

    @property
    def batch_size(self) -> int:
        # Enough requests per runner chunk to keep every concurrent slot busy.
        return self.options.batch_size or self.options.concurrency * 4

    # -- the two capabilities -------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        return self._run(requests, self._generate_one)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        return self._run(requests, self._loglik_one)

    # -- request bodies --------------------------------------------------------------------------------
    def _body(
        self, prompt: str, messages: tuple[tuple[str, str], ...] | None, **extra: Any
    ) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model_name, **extra}
        if messages is not None:
            body["messages"] = as_dicts(messages)
            return "/chat/completions", body
        body["prompt"] = prompt
        return "/completions", body

    async def _generate_one(self, client: Any, request: GenerateRequest) -> ModelOutput:
        path, body = self._body(
            request.prompt,
            request.messages,
            max_tokens=request.max_new_tokens,
            temperature=0,
            seed=self.options.seed,
        )
        if request.stop:
            body["stop"] = list(request.stop[:4])
        started = time.perf_counter()
        data = await self._post(client, path, body)
        choice = _first_choice(data)
        text = choice.get("message", {}).get("content") if "message" in choice else choice.get("text")
        if not isinstance(text, str):
            raise _Final("the response's first choice has no text")
        usage = data.get("usage") or {}
        return ModelOutput(
            request.id,
            text=text,
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - started,
        )

    async def _loglik_one(self, client: Any, request: LoglikRequest) -> ModelOutput:
        # One request per question: the next token's top log-probabilities, read for the candidates.
        if request.messages is not None:
            path, body = self._body(
                request.context,
                request.messages,
                max_tokens=1,
                temperature=0,
                logprobs=True,
                top_logprobs=TOP_LOGPROBS,
            )
        else:
            path, body = self._body(request.context, None, max_tokens=1, temperature=0, logprobs=TOP_LOGPROBS)
        started = time.perf_counter()
        data = await self._post(client, path, body)
        top = _top_logprobs(_first_choice(data))
        scores = {c: top[c] for c in request.continuations if c in top}
        usage = data.get("usage") or {}
        return ModelOutput(
            request.id,
            logprobs=scores,
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=0,
            latency_s=time.perf_counter() - started,
        )

    # -- transport ------------------------------------------------------------------------------------
    async def _post(self, client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import aiohttp

        for attempt in range(self.options.max_retries + 1):
            await self._limiter.wait()
            self.stats.requests += 1
            try:
                async with client.post(self.base_url + path, json=body) as response:
                    raw = await response.read()
                    status = response.status
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                if status in RETRYABLE_STATUS:
                    raise _Retryable(f"HTTP {status}", retry_after)
                if status >= 400:
                    raise _Final(f"HTTP {status}: {raw[:300].decode('utf-8', 'replace')}")
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise _Retryable("the response body is not JSON") from None
                if not isinstance(data, dict):
                    raise _Retryable("the response body is not a JSON object")
                return data
            except _Retryable as exc:
                failure: _Retryable = exc
            except asyncio.TimeoutError:
                failure = _Retryable(f"timed out after {self.options.timeout_s:g} s")
            except aiohttp.ClientError as exc:
                failure = _Retryable(f"connection error: {type(exc).__name__}")
            if attempt == self.options.max_retries:
                raise _Final(f"{failure} (gave up after {attempt + 1} attempts)")
            self.stats.retries += 1
            await asyncio.sleep(self.backoff.delay(attempt, self._rng, failure.retry_after))
        raise AssertionError("unreachable")

    def _run(
        self, requests: Sequence[Any], call: Callable[[Any, Any], Awaitable[ModelOutput]]
    ) -> Iterator[ModelOutput]:
        """Run calls concurrently in a worker thread's event loop; yield each output as it completes."""
        results: queue.Queue[ModelOutput | BaseException | None] = queue.Queue()

        async def main() -> None:
            import aiohttp

            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            connector = aiohttp.TCPConnector(limit=self.options.concurrency)
            timeout = aiohttp.ClientTimeout(total=self.options.timeout_s)
            self._limiter = _RateLimiter(self.options.requests_per_minute)
            slots = asyncio.Semaphore(self.options.concurrency)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers=headers) as client:

                async def one(request: Any) -> None:
                    async with slots:
                        try:
                            results.put(await call(client, request))
                        except _Final as exc:
                            self.stats.failures += 1
                            results.put(ModelOutput(request.id, error=str(exc)))

                await asyncio.gather(*(one(r) for r in requests))

        def worker() -> None:
            try:
                asyncio.run(main())
            except BaseException as exc:  # surfaced in the caller's thread
                results.put(exc)
            finally:
                results.put(None)

        thread = threading.Thread(target=worker, name="kaoshi-openai", daemon=True)
        thread.start()
        while (item := results.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
        thread.join()


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Final("the response has no choices")
    choice: dict[str, Any] = choices[0]
    return choice


def _top_logprobs(choice: dict[str, Any]) -> dict[str, float]:
    """Token -> log-probability at the first generated position (chat and legacy completion shapes);
    tokens are stripped of surrounding spaces, keeping the best score for each."""
    logprobs = choice.get("logprobs") or {}
    pairs: list[tuple[str, float]] = []
    content = logprobs.get("content")
    if isinstance(content, list) and content:
        pairs = [(t.get("token", ""), t.get("logprob")) for t in content[0].get("top_logprobs") or []]
    elif isinstance(logprobs.get("top_logprobs"), list) and logprobs["top_logprobs"]:
        pairs = list((logprobs["top_logprobs"][0] or {}).items())
    if not pairs:
        raise _Final("the response has no top log-probabilities (does the endpoint support logprobs?)")
    best: dict[str, float] = {}
    for token, value in pairs:
        if isinstance(value, (int, float)):
            key = str(token).strip()
            best[key] = max(float(value), best.get(key, float("-inf")))
    return best
