"""OpenAI-compatible HTTP backends (OpenAI, vLLM / SGLang servers, DeepSeek, Qwen, ...), via aiohttp
(httpx's async pool costs several ms of CPU per request under high concurrency: encode/httpx#3215).

Requests run concurrently on an event loop in a worker thread (bounded by `concurrency`, optionally by
requests per minute); each result is handed to the runner the moment it arrives, so it is stored at
once. Transient failures (429, 5xx, timeouts, connection errors, bodies that are not JSON such as a
proxy's HTML page, an error object with a transient status) are retried with exponential backoff and
full jitter, honouring Retry-After. A reply that is well-formed HTTP but holds no usable answer (no
choices, a null message, empty or non-text content, missing or impossible log-probabilities) is not
retried within the run: it becomes an error sample saying why, keeping the tokens it cost, and resuming
the run asks again. The API key is read from the environment and never leaves the Authorization header.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import queue
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kaoshi.models.base import (
    CapabilityError,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.chat import as_dicts
from kaoshi.models.endpoints import EndpointPool
from kaoshi.models.retry import Backoff, is_retryable_status, parse_retry_after
from kaoshi.models.secrets import redact, strip_credentials, url_secrets

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOP_LOGPROBS = 20


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Final(Exception):
    """A failure no retry within the run will fix (4xx, a reply without an answer); stored as the
    sample's error, so resuming the run asks again."""


Reader = Callable[[ModelOutput, dict[str, Any]], ModelOutput]


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
        given = options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_urls = tuple(u.rstrip("/") for u in ((given,) if isinstance(given, str) else given))
        self.base_url = self.base_urls[0]
        self._api_key = os.environ.get(options.api_key_env)
        if not self._api_key and DEFAULT_BASE_URL in self.base_urls:
            raise ModelError(f"no API key: set {options.api_key_env} (or --api-key-env NAME)")
        if options.concurrency < 1:
            raise ModelError("--concurrency must be at least 1")
        self._secrets = [self._api_key, *(secret for url in self.base_urls for secret in url_secrets(url))]
        self.endpoints = EndpointPool(self.base_urls)
        self.stats = ApiStats()
        self.backoff = Backoff()
        self._rng = random.Random(options.seed)

    @property
    def max_wait_s(self) -> float:
        """The longest single wait a Retry-After may impose: --max-wait, else the timeout x retries."""
        if self.options.max_wait_s is not None:
            return self.options.max_wait_s
        return self.options.timeout_s * max(1, self.options.max_retries)

    @property
    def batch_size(self) -> int:
        # Enough requests per runner chunk to keep every concurrent slot busy.
        return self.options.batch_size or self.options.concurrency * 4

    # -- the two capabilities -------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        return self._run(requests, self._generate_one)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:  # before any request is sent, so nothing is paid for
            _check_next_token_rankable(request.continuations)
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

        def read(output: ModelOutput, data: dict[str, Any]) -> ModelOutput:
            return replace(output, text=_reply_text(_first_choice(data)))

        return await self._reply(client, request.id, path, body, read)

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

        def read(output: ModelOutput, data: dict[str, Any]) -> ModelOutput:
            top = _top_logprobs(_first_choice(data))
            scores = {c: top[c] for c in request.continuations if c in top}
            return replace(output, logprobs=scores, tokens_out=0)

        return await self._reply(client, request.id, path, body, read)

    async def _reply(
        self, client: Any, request_id: str, path: str, body: dict[str, Any], read: Reader
    ) -> ModelOutput:
        """Send one request and read its reply; a reply without a usable answer becomes an error that
        keeps what the request cost (tokens, latency)."""
        started = time.perf_counter()
        data = await self._post(client, path, body)
        tokens_in, tokens_out = _token_counts(data)
        output = ModelOutput(
            request_id, tokens_in=tokens_in, tokens_out=tokens_out, latency_s=time.perf_counter() - started
        )
        try:
            return read(output, data)
        except _Final as exc:
            return replace(output, error=str(exc))
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            # A reply shape nobody foresaw is still one sample's error, never the end of the run.
            return replace(output, error=f"the reply has an unexpected shape ({type(exc).__name__}: {exc})")

    # -- transport ------------------------------------------------------------------------------------
    async def _post(self, client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import aiohttp

        capped = ""  # what a too-long Retry-After was cut to, said when the request finally fails
        for attempt in range(self.options.max_retries + 1):
            await self._limiter.wait()
            self.stats.requests += 1
            endpoint = self.endpoints.acquire()
            healthy = False
            try:
                async with client.post(endpoint.url + path, json=body) as response:
                    raw = await response.read()
                    status = response.status
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                if is_retryable_status(status):
                    raise _Retryable(f"HTTP {status}", retry_after)
                if status >= 400:
                    raise _Final(f"HTTP {status}: {_describe_error_body(raw)}")
                data = _json_reply(raw)
                healthy = True
                return data
            except _Final:
                healthy = True  # the server answered: the fault is this request's, not the endpoint's
                raise
            except _Retryable as exc:
                failure: _Retryable = exc
            except asyncio.TimeoutError:
                failure = _Retryable(f"timed out after {self.options.timeout_s:g} s")
            except aiohttp.ClientError as exc:
                failure = _Retryable(f"connection error: {type(exc).__name__}")
            finally:
                self.endpoints.release(endpoint, healthy)
            if len(self.base_urls) > 1:
                failure = _Retryable(f"{failure} from {strip_credentials(endpoint.url)}", failure.retry_after)
            if attempt == self.options.max_retries:
                raise _Final(f"{failure} (gave up after {attempt + 1} attempts{capped})")
            self.stats.retries += 1
            cap = self.max_wait_s
            if failure.retry_after is not None and failure.retry_after > cap:
                capped = (
                    f"; the server asked to wait {failure.retry_after:g} s, capped at {cap:g} s (--max-wait)"
                )
            await asyncio.sleep(self.backoff.delay(attempt, self._rng, failure.retry_after, cap))
        raise _Final("no attempt was made (--max-retries must be >= 0)")

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
                            output = await call(client, request)
                        except _Final as exc:
                            output = ModelOutput(request.id, error=str(exc))
                        if output.error is not None:  # a server may echo the key back in its error body
                            output = replace(output, error=redact(output.error, self._secrets))
                        self.stats.failures += output.error is not None
                        results.put(output)

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


def _json_reply(raw: bytes) -> dict[str, Any]:
    """The body of a 2xx reply as a JSON object. A body that is not one (a proxy's HTML page, a cut-off
    reply) and an error object with a transient status are retried; other error objects are final."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _Retryable(f"the response body is not JSON: {_describe_body(raw)}") from None
    if not isinstance(data, dict):
        raise _Retryable(f"the response body is {_kind(data)}, not a JSON object")
    message = _error_message(data)
    if message is not None:
        error = data["error"]
        code = error.get("code", error.get("status")) if isinstance(error, dict) else None
        failure = f"the server replied with an error: {message}"
        if _is_transient_code(code):
            raise _Retryable(failure)
        raise _Final(failure)
    return data


def _is_transient_code(code: object) -> bool:
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    return isinstance(code, int) and not isinstance(code, bool) and is_retryable_status(code)


def _error_message(data: object) -> str | None:
    """The message of an API error object ({"error": {"message": ...}} or {"error": "..."}), if any."""
    if not isinstance(data, dict) or not data.get("error"):
        return None
    error = data["error"]
    message = error.get("message") if isinstance(error, dict) else error
    if not message:
        message = json.dumps(error, ensure_ascii=False)
    return " ".join(str(message).split())[:300]


def _describe_error_body(raw: bytes) -> str:
    """The useful part of a 4xx body: the API's error message, else a short account of the body."""
    try:
        message = _error_message(json.loads(raw))
    except (json.JSONDecodeError, UnicodeDecodeError):
        message = None
    return message if message is not None else _describe_body(raw)


def _describe_body(raw: bytes) -> str:
    """A short account of a body that is not the expected JSON, for error messages."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return "an empty body"
    if text.startswith("<") or "<html" in text[:500].lower():
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        named = f" ({' '.join(title.group(1).split())[:80]!r})" if title else ""
        return f"an HTML page{named}, not an API reply (check --base-url)"
    return repr(" ".join(text.split())[:200])


def _kind(value: object) -> str:
    """What a JSON value is, for messages about a reply of the wrong shape."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _token_counts(data: dict[str, Any]) -> tuple[int | None, int | None]:
    """Prompt and completion tokens from `usage`. Usage is optional in the protocol and some servers and
    proxies drop or mangle it; a bad one only loses the counts, never an answer that was paid for."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None, None
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if choices is None or choices == []:
        raise _Final("the response has no choices")
    if not isinstance(choices, list):
        raise _Final(f"the response's choices is {_kind(choices)}, not a list")
    if not isinstance(choices[0], dict):
        raise _Final(f"the response's first choice is {_kind(choices[0])}, not an object")
    choice: dict[str, Any] = choices[0]
    return choice


def _reply_text(choice: dict[str, Any]) -> str:
    """The answer text of a chat choice (`message.content`) or a completion choice (`text`)."""
    message: dict[str, Any] = {}
    if "message" in choice:
        if not isinstance(choice["message"], dict):
            raise _Final(f"the reply's message is {_kind(choice['message'])}, not an object")
        message = choice["message"]
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            raise _Final(f"the model refused: {' '.join(refusal.split())[:200]}")
        text, field = message.get("content"), "message.content"
    else:
        text, field = choice.get("text"), "text"
    if text is not None and not isinstance(text, str):
        raise _Final(f"the reply's {field} is {_kind(text)}, not text")
    if not text or not text.strip():
        raise _Final(
            _no_answer_reason(choice, message, f"no {field}" if text is None else "empty completion")
        )
    return text


def _no_answer_reason(choice: dict[str, Any], message: dict[str, Any], what: str) -> str:
    """Why a reply holds no answer text, e.g. 'empty completion (finish_reason=length)'; a reasoning
    model that spent every token on its reasoning is named as such."""
    finish = choice.get("finish_reason")
    reason = f"{what} (finish_reason={finish})" if isinstance(finish, str) else what
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        reason += f"; the reply holds only reasoning ({len(reasoning)} characters)"
        if finish == "length":
            reason += ", which used every token: raise --max-new-tokens"
    return reason


def _top_logprobs(choice: dict[str, Any]) -> dict[str, float]:
    """Token -> log-probability at the first generated position (chat and legacy completion shapes);
    tokens are stripped of surrounding spaces, keeping the best score for each. A value that is not a
    log-probability (missing, not a number, NaN, infinite, above 0) makes the whole reply unusable."""
    logprobs = choice.get("logprobs")
    pairs = _top_pairs(logprobs) if isinstance(logprobs, dict) else []
    if not pairs:
        raise _Final("the response has no top log-probabilities (does the endpoint support logprobs?)")
    best: dict[str, float] = {}
    for token, value in pairs:
        if not isinstance(token, str):
            raise _Final(f"the reply's top log-probabilities hold a token that is {_kind(token)}, not text")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value > 0
        ):
            shown = "missing" if value is _MISSING else repr(value)
            raise _Final(f"the reply's log-probability of token {token!r} is {shown}, not a number <= 0")
        key = token.strip()
        best[key] = max(float(value), best.get(key, float("-inf")))
    return best


_MISSING = object()


def _top_pairs(logprobs: dict[str, Any]) -> list[tuple[object, object]]:
    """(token, log-probability) pairs at the first position: chat `content[0].top_logprobs` (a list of
    objects) or legacy completion `top_logprobs[0]` (token -> value)."""
    content = logprobs.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        top = content[0].get("top_logprobs")
        if not isinstance(top, list):
            return []
        if not all(isinstance(entry, dict) for entry in top):
            raise _Final("the reply's top log-probabilities are not all objects")
        return [(entry.get("token"), entry.get("logprob", _MISSING)) for entry in top]
    legacy = logprobs.get("top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        return list(legacy[0].items())
    return []


def _check_next_token_rankable(candidates: Sequence[str]) -> None:
    """Refuse candidates that one next token cannot rank: when an answer extends another ('A' and 'AB',
    multiple-choice letter sets) the first token's log-probability is the same for both, and the full
    sequence's would need echoed prompt log-probabilities, which chat endpoints, OpenAI and llama.cpp's
    server do not give."""
    for shorter in candidates:
        longer = next((c for c in candidates if c != shorter and c.startswith(shorter)), None)
        if longer is not None:
            raise CapabilityError(
                f"the openai backend ranks answers by the next token's log-probability, which cannot tell "
                f"{shorter!r} from {longer!r} (multiple choice); use --method generate"
            )
