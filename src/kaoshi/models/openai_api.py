"""OpenAI-compatible HTTP backends (OpenAI, vLLM / SGLang servers, DeepSeek, Qwen, ...), via aiohttp
(httpx's async pool costs several ms of CPU per request under high concurrency: encode/httpx#3215).

Requests run concurrently on an event loop in a worker thread (bounded by `concurrency`, optionally by
requests per minute); each result is handed to the runner the moment it arrives, so it is stored at
once. Transient failures (429, 5xx, timeouts, connection errors, bodies that are not readable JSON such
as a proxy's HTML page or a reply nested 100,000 levels deep, an error object in a 2xx reply) are
retried with exponential backoff and full jitter, honouring Retry-After. A reply that is well-formed
HTTP but holds no usable answer (no choices, a null message, empty, non-text or over-size content,
missing or impossible log-probabilities) is not retried within the run: it becomes an error sample
saying why, keeping the tokens it cost, and resuming the run asks again. The API key is read from the
environment and never leaves the Authorization header; it and any credential in the base URL are masked
in every text the backend returns (openai_replies.py reads replies, openai_transport.py addresses them).
Log-likelihood of plain prompts scores whole candidates from echoed prompt log-probabilities
(openai_loglik.py sends the requests, openai_echo.py reads them); chat messages rank the next token.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import queue
import random
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kaoshi.models.base import (
    Capabilities,
    ChatForm,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.chat import as_dicts
from kaoshi.models.endpoints import EndpointPool
from kaoshi.models.openai_batch import OpenAIBatches
from kaoshi.models.openai_body import decoding_fields, merged
from kaoshi.models.openai_loglik import ECHO_BYTES_PER_CHAR, EchoLoglik
from kaoshi.models.openai_replies import (
    FinalFailure,
    ReplyParts,
    RetriesExhausted,
    TransientFailure,
    cached_tokens,
    check_next_token_rankable,
    describe_error_body,
    first_choice,
    json_reply,
    reasoning_tokens,
    reply_parts,
    served_model,
    token_counts,
    top_logprobs,
)
from kaoshi.models.openai_transport import (
    REPLY_BYTES_PER_CHAR,
    EndpointTarget,
    describe_client_error,
    read_capped,
)
from kaoshi.models.retry import Backoff, is_retryable_status, parse_retry_after
from kaoshi.models.secrets import mask_secrets, redact, strip_credentials, url_secrets

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def is_private_host(url: str) -> bool:
    """Whether a URL names this machine or a private network (localhost, 127.x, 10.x, 192.168.x, ::1,
    a name without a dot): a server someone runs, not a provider."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host in ("localhost", "") or ("." not in host and ":" not in host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host.endswith((".local", ".internal", ".lan"))
    return address.is_private or address.is_loopback or address.is_link_local


TOP_LOGPROBS = 20

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
    capabilities = Capabilities(
        description="any OpenAI-compatible endpoint (--base-url; key from $OPENAI_API_KEY, --api-key-env)",
        argument="MODEL",
        methods=frozenset({"generate", "loglik"}),
        chat=ChatForm.CHAT,
        # Log-likelihood scores whole answers from a completions endpoint's echoed prompt
        # log-probabilities; chat endpoints echo nothing (--chat there ranks the next token only).
        chat_loglik=ChatForm.PLAIN,
        # top_k and the thinking switch are fields of vLLM, SGLang, llama.cpp's server and DashScope; a
        # server that refuses one answers with its own error (models/openai_body.py)
        sampling=frozenset({"temperature", "top_p", "top_k", "thinking"}),
        extra_body=True,
        batch_endpoint=True,
        needs=("aiohttp",),
        install="pip install 'kaoshi[api]'",
    )

    def cached_by_default(self) -> bool:
        """A provider's endpoints (every request paid for); not a server on this machine or a private
        network (vLLM, llama.cpp, a gateway), which may serve a new checkpoint under the same name."""
        return not any(is_private_host(url) for url in self.base_urls)

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
        self.targets = {url: EndpointTarget.parse(url, self._api_key) for url in self.base_urls}
        self._secrets = [
            self._api_key,
            *(secret for url in self.base_urls for secret in url_secrets(url)),
            *(target.basic_token for target in self.targets.values()),
        ]
        self.endpoints = EndpointPool(self.base_urls)
        self.stats = ApiStats()
        self.backoff = Backoff()
        self._rng = random.Random(options.seed)
        self._unanswered = False  # a request ran out of retries and no reply came since
        self._scout: asyncio.Future[str | None] | None = None  # the request trying while others wait
        # Plain-text log-likelihood: whole candidates scored from echoed prompt log-probabilities.
        self.echo = EchoLoglik(
            self.model_name,
            options.seed,
            self._post,
            ", ".join(strip_credentials(url) for url in self.base_urls),
            lambda text: redact(text, self._secrets),
            options.prompts_per_request,
        )

    @property
    def secrets(self) -> list[str | None]:
        """What is masked in every text the backend returns: the API key and the base URLs' credentials."""
        return self._secrets

    def batch_endpoint(self) -> OpenAIBatches:
        """The Batch API of the first base URL (kaoshi run --batch)."""
        return OpenAIBatches(self)

    @property
    def max_wait_s(self) -> float:
        """The longest single wait a Retry-After may impose: --max-wait (which also caps a request's
        retrying in all), else the timeout x retries."""
        if self.options.max_wait_s is not None:
            return self.options.max_wait_s
        return self.options.timeout_s * max(1, self.options.max_retries)

    @property
    def batch_size(self) -> int:
        # Requests per runner chunk: each chunk's end drains the slots and its start opens new
        # connections, so a chunk is 16 rounds of every slot (4 left evaluate 12% slower than the backend
        # alone at concurrency 32 on a 50 ms server, speed/http_peers.py; 16: 6%). A claim is a chunk.
        return self.options.batch_size or self.options.concurrency * 16

    def chunk_size(self, method: str) -> int:
        """16 rounds of every slot; under log-likelihood a slot's request carries the prompts of several
        questions (four candidates each, as most exams have), so a chunk holds that many more."""
        if self.options.batch_size or method != "loglik":
            return self.batch_size
        return self.batch_size * max(1, self.options.prompts_per_request // 4)

    # -- the two capabilities -------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        return self._run(([request] for request in requests), self._generate_one)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        """Plain prompts: each candidate's whole log-likelihood from a completions endpoint that echoes
        the prompt's log-probabilities (openai_loglik.py), several questions' prompts a request
        (--prompts-per-request). Chat messages: the next token's top log-probabilities, which rank
        candidates that differ in their first token only."""
        for request in requests:  # before any request is sent, so nothing is paid for
            if request.messages is not None:
                check_next_token_rankable(request.continuations)
        return self._run(self._packs(requests), self._loglik_pack)

    def _packs(self, requests: Sequence[LoglikRequest]) -> Iterator[list[LoglikRequest]]:
        """Consecutive plain questions, as many as fit one request: at most --prompts-per-request
        prompts, and prompt text whose echoed reply stays well inside the reply cap (a question too
        large for either goes alone). Chat questions go one a request; so does every question once the
        server has refused lists. Whether the next question fits is read from the sequence, not taken
        through the run's gate: a pack is yielded before the next request is taken, so each request
        is taken, and the gate asked, only when a slot is free to send it."""
        most = self.options.prompts_per_request
        most_chars = self.options.max_reply_chars * REPLY_BYTES_PER_CHAR // (2 * ECHO_BYTES_PER_CHAR)

        def alone(request: LoglikRequest) -> bool:
            return request.messages is not None or self.echo.prompt_lists is False or most == 1

        def size(request: LoglikRequest) -> tuple[int, int]:
            n = len(request.continuations)
            return n, n * len(request.context) + sum(map(len, request.continuations))

        pack: list[LoglikRequest] = []
        prompts = chars = 0
        for position, request in enumerate(requests, start=1):  # each taken through the gate
            pack.append(request)
            n, length = size(request)
            prompts, chars = prompts + n, chars + length
            following = requests[position] if position < len(requests) else None
            if following is None or alone(request) or alone(following):
                full = True
            else:
                n, length = size(following)
                full = prompts + n > most or chars + length > most_chars
            if full:
                yield pack
                pack, prompts, chars = [], 0, 0
        if pack:  # the gate closed before the pack was full
            yield pack

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

    async def _generate_one(self, client: Any, requests: list[GenerateRequest]) -> list[ModelOutput]:
        (request,) = requests
        path, body = self.generation_body(request)
        return [await self._reply(client, request.id, path, body, self.generation_reader(request))]

    def generation_body(self, request: GenerateRequest) -> tuple[str, dict[str, Any]]:
        """The endpoint path and body of a generation request (sent at once, or as a batch's line)."""
        decoding = decoding_fields(request.sampling, self.options.seed, chat=request.messages is not None)
        path, body = self._body(
            request.prompt, request.messages, max_tokens=request.max_new_tokens, **decoding
        )
        if request.stop:
            body["stop"] = list(request.stop[:4])
        return path, merged(body, self.options.extra_body)

    def generation_reader(self, request: GenerateRequest) -> Reader:
        """What reads a generation request's reply into its output."""

        def read(output: ModelOutput, data: dict[str, Any]) -> ModelOutput:
            parts = reply_parts(first_choice(data), self.options.max_reply_chars)
            if request.sampling.thinking and parts.cut_off and parts.reasoning is None:
                # Thinking on, and the reply cut off before closing a think block it never opened: a
                # template that opens it in the prompt (DeepSeek-R1's), served without a reasoning
                # parser. All of it is reasoning, never read for an answer.
                parts = ReplyParts("", parts.text or None, cut_off=True)
            return replace(
                output,
                text=parts.text,
                reasoning=parts.reasoning,
                truncated=parts.cut_off,
                reasoning_tokens=reasoning_tokens(data),
            )

        return read

    async def _loglik_pack(self, client: Any, requests: list[LoglikRequest]) -> list[ModelOutput]:
        if requests[0].messages is None:
            return await self.echo.score(client, requests)
        (request,) = requests
        # One request per question: the next token's top log-probabilities, read for the candidates.
        path, body = self._body(
            request.context,
            request.messages,
            max_tokens=1,
            temperature=0,
            logprobs=True,
            top_logprobs=TOP_LOGPROBS,
        )

        def read(output: ModelOutput, data: dict[str, Any]) -> ModelOutput:
            top = top_logprobs(first_choice(data))
            scores = {c: top[c] for c in request.continuations if c in top}
            return replace(output, logprobs=scores, tokens_out=0)

        return [await self._reply(client, request.id, path, body, read)]

    async def _reply(
        self, client: Any, request_id: str, path: str, body: dict[str, Any], read: Reader
    ) -> ModelOutput:
        """Send one request and read its reply; a reply without a usable answer becomes an error that
        keeps what the request cost (tokens, latency)."""
        started = time.perf_counter()
        data = await self._post(client, path, body)
        return self.read_reply(request_id, data, read, time.perf_counter() - started)

    def read_reply(
        self, request_id: str, data: dict[str, Any], read: Reader, latency_s: float
    ) -> ModelOutput:
        """A reply's output, or an error that keeps what the request cost (tokens, latency); credentials
        are masked by the caller (redacted)."""
        tokens_in, tokens_out = token_counts(data)
        output = ModelOutput(
            request_id,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_s=latency_s,
            served_model=served_model(data, self.model_name),
            cached_tokens=cached_tokens(data),
        )
        try:
            return read(output, data)
        except FinalFailure as exc:
            return replace(output, error=str(exc))
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            # A reply shape nobody foresaw is still one sample's error, never the end of the run.
            return replace(
                output, error=f"the reply has an unexpected shape ({type(exc).__name__}: {str(exc)[:200]})"
            )

    # -- transport ------------------------------------------------------------------------------------
    async def _post(
        self, client: Any, path: str, body: dict[str, Any], *, retries: int | None = None
    ) -> dict[str, Any]:
        """The reply's JSON body; `retries` (default --max-retries) bounds the retries of a transient
        failure, and --max-wait the time they may take in all: no attempt starts once it is spent (the
        wait before one is cut to what is left)."""
        retries = self.options.max_retries if retries is None else retries
        full = retries == self.options.max_retries  # a probe's single attempt decides nothing here
        scout: asyncio.Future[str | None] | None = None
        if self._unanswered and full:
            # The server has answered nothing since a request spent its retries on it (down, refusing
            # connections, failing every request): one request (the scout) tries with its retries while
            # the others wait for it, instead of each spending a full set of retries on a dead server;
            # when it is answered they go on, when it gives up they fail with it.
            if self._scout is not None and not self._scout.done():
                verdict = await asyncio.shield(self._scout)
                if verdict is not None:
                    raise RetriesExhausted(
                        f"{verdict}; not sent: the server answered no request while another tried it"
                    )
            else:
                scout = self._scout = asyncio.get_running_loop().create_future()
        try:
            return await self._post_with_retries(client, path, body, retries, full)
        except RetriesExhausted as exc:
            if scout is not None:
                scout.set_result(str(exc))
            raise
        finally:
            if scout is not None and not scout.done():
                scout.set_result(None)

    async def _post_with_retries(
        self, client: Any, path: str, body: dict[str, Any], retries: int, full: bool
    ) -> dict[str, Any]:
        capped = ""  # what a too-long Retry-After was cut to, said when the request finally fails
        began = time.monotonic()
        for attempt in range(retries + 1):
            failure = await self._attempt(client, path, body)
            if isinstance(failure, dict):
                self._unanswered = False
                return failure
            # --max-wait, given, caps the whole; otherwise the retries do, and a Retry-After is
            # honoured up to the timeout x retries
            limit = self.options.max_wait_s
            left = None if limit is None else limit - (time.monotonic() - began)
            spent = attempt == retries or (left is not None and left <= 0)
            if spent and not failure.busy and full:
                self._unanswered = True  # a full set of retries spent, not a probe's single attempt
            if attempt == retries:
                raise RetriesExhausted(f"{failure} (gave up after {_attempts(attempt + 1)}{capped})")
            if left is not None and left <= 0:
                raise RetriesExhausted(
                    f"{failure} (gave up after {_attempts(attempt + 1)}: {limit:g} s, the most --max-wait "
                    f"allows{capped})"
                )
            self.stats.retries += 1
            cap = self.max_wait_s if left is None else left
            if failure.retry_after is not None and failure.retry_after > cap:
                asked = failure.retry_after
                capped = f"; the server asked to wait {asked:g} s, capped at {cap:.1f} s (--max-wait)"
            await asyncio.sleep(self.backoff.delay(attempt, self._rng, failure.retry_after, cap))
        raise FinalFailure("no attempt was made (--max-retries must be >= 0)")

    async def _attempt(
        self, client: Any, path: str, body: dict[str, Any]
    ) -> dict[str, Any] | TransientFailure:
        """One attempt: the reply's JSON body, or the transient failure to retry; a failure no retry fixes
        is raised."""
        import aiohttp

        max_bytes = self.options.max_reply_chars * REPLY_BYTES_PER_CHAR
        await self._limiter.wait()
        self.stats.requests += 1
        endpoint = self.endpoints.acquire()
        target = self.targets[endpoint.url]
        healthy = False
        try:
            async with client.post(target.url(path), json=body, headers=target.headers) as response:
                status = response.status
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                raw = None if is_retryable_status(status) else await read_capped(response, max_bytes)
            if is_retryable_status(status):
                raise TransientFailure(f"HTTP {status}", retry_after, busy=status == 429)
            if status >= 400:
                shown = "an over-size body" if raw is None else describe_error_body(raw)
                raise FinalFailure(f"HTTP {status}: {shown}")
            if raw is None:
                raise FinalFailure(
                    f"the reply is over {max_bytes:,} bytes, the most --max-reply-chars "
                    f"{self.options.max_reply_chars:,} allows; not read further"
                )
            data = json_reply(raw)
            healthy = True
            return data
        except FinalFailure:
            healthy = True  # the server answered: the fault is this request's, not the endpoint's
            self._unanswered = False
            raise
        except TransientFailure as exc:
            failure: TransientFailure = exc
        except asyncio.TimeoutError:
            failure = TransientFailure(f"timed out after {self.options.timeout_s:g} s")
        except aiohttp.ClientError as exc:
            failure = TransientFailure(describe_client_error(exc))
        finally:
            self.endpoints.release(endpoint, healthy)
        if len(self.base_urls) > 1:
            failure = TransientFailure(
                f"{failure} from {strip_credentials(endpoint.url)}", failure.retry_after, failure.busy
            )
        return failure

    def _run(
        self, units: Iterable[list[Any]], call: Callable[[Any, list[Any]], Awaitable[list[ModelOutput]]]
    ) -> Iterator[ModelOutput]:
        """Run calls concurrently in a worker thread's event loop, one a unit of requests (those one
        HTTP request carries); yield each output as it completes."""
        # a unit's outputs are handed over together: one wake-up of the caller's thread a request
        results: queue.Queue[list[ModelOutput] | BaseException | None] = queue.Queue()

        async def main() -> None:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self.options.concurrency)
            timeout = aiohttp.ClientTimeout(total=self.options.timeout_s)
            self._limiter = _RateLimiter(self.options.requests_per_minute)
            self._scout = None  # a future belongs to one event loop
            self.echo.start()
            slots = asyncio.Semaphore(self.options.concurrency)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as client:

                async def one(unit: list[Any]) -> None:
                    try:
                        try:
                            outputs = await call(client, unit)
                        except FinalFailure as exc:
                            outputs = [ModelOutput(request.id, error=str(exc)) for request in unit]
                        outputs = [self.redacted(output) for output in outputs]
                        self.stats.failures += sum(output.error is not None for output in outputs)
                        results.put(outputs)
                    except Exception:
                        failed.set()  # the run's end (e.g. the server lacks a capability): send no more
                        raise
                    finally:
                        slots.release()

                # A request is taken only once a slot is free: a run that may send no more (its gate,
                # kaoshi.models.gating) stops here, and what is in flight still comes back.
                failed = asyncio.Event()
                sending: list[asyncio.Task[None]] = []
                taken = iter(units)
                while True:
                    await slots.acquire()
                    unit = None if failed.is_set() else next(taken, None)
                    if unit is None:
                        slots.release()
                        break
                    sending.append(asyncio.ensure_future(one(unit)))
                await asyncio.gather(*sending)

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
            yield from item
        thread.join()

    def redacted(self, output: ModelOutput) -> ModelOutput:
        """The output with every credential it was sent masked: a server may echo them in an error body,
        or a model in its answer. Answer text loses only the exact credentials; error text also any
        `Bearer …` or `api_key=…` (a pattern that would mask ordinary words in an answer)."""
        text = mask_secrets(output.text, self._secrets) if output.text is not None else None
        error = redact(output.error, self._secrets) if output.error is not None else None
        return replace(output, text=text, error=error)


def _attempts(count: int) -> str:
    return "1 attempt" if count == 1 else f"{count} attempts"
