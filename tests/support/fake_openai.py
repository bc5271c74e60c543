"""A local server speaking the OpenAI chat/completions protocol, with scripted faults (tests and benchmarks).

It listens on 127.0.0.1 only, answers at most `max_requests` requests and lives at most `max_seconds`
(then it closes, so a client that loops cannot keep a test alive). It answers only paths ending in
/completions (404 otherwise, as a real server would a mangled URL). A request whose prompt contains a key
of `faults` gets that key's faults in turn, one per attempt, then a normal answer. Faults:
- transport: "429", "429:0.2" (with Retry-After seconds), "500" (any status), "hang", "drop" (the
  connection closed with no reply), "cut" (closed halfway through the body), "gzip" (a body marked
  gzip that is not), "badjson", "html" (a proxy's HTML page with status 200), "html:502"
  (with that status), "echo" (401 quoting the Authorization header it got);
- error objects with status 200: "error" (no code), "error:CODE" (code CODE), "vllm:CODE" (vLLM's
  `{"object": "error", ..., "code": CODE}`);
- hostile bodies (status 200): "deep" (`[[[…]]]` nested 100,000 levels), "bignum" (usage with a
  5,000-digit number), "huge:N" (the answer followed by N more characters), "stream:N" (N bytes of an
  unfinished reply with no Content-Length, cut when the client hangs up), "keyecho" (the answer followed
  by the Authorization header and the query string it was sent with);
- reply shapes (status 200, the normal reply altered): "empty" (no choices), "nochoices", "choices:str",
  "choice:str", "message:null", "nocontent", "content:int", "content:empty" (finish_reason=length),
  "reasoning" (only reasoning_content, finish_reason=length), "reasoning:stop" (the same, finished),
  "reasoning:decoy" (the answer, and reasoning naming another), "content:blank" (empty, finish_reason=stop),
  "refusal", "usage:str" (answer intact),
  "length" (answer intact, finish_reason=length), "logprobs:none", "logprob:nan", "logprob:pos",
  "logprob:str", "logprob:missing" (on the first top token).
Answers come from `answers` (a key contained in the prompt -> reply text), else `default_answer`.
Log-probability requests get `logprobs_for(prompt)` (by default `logprobs`) as top log-probabilities.

Completion requests with `echo: true` and `logprobs` are scored by a toy model instead: `toy_tokens`
splits the prompt (one token a character, or the longest entry of `vocab`), `toy_logprob` gives each
token a log-probability from a hash of the text before it, and the reply's legacy `logprobs` object holds
every prompt token (the first with null) and, for max_tokens >= 1, one generated token. `echo_style` says
how a real server writes them: "chars" (offsets in characters), "bytes" (offsets in UTF-8 bytes),
"vllm" (a leading '<s>' and offsets that add up the token strings' lengths, as vLLM's do), "llamacpp"
(as llama-cpp-python's server: character offsets, a split character's pieces as empty strings);
characters in `split` are written as two byte tokens ('\ufffd' in vllm, '' in llamacpp). A server
variant is chosen by `list_status` (the HTTP status a list of prompts gets; None: lists are answered one
choice each) and `echo_support`: "full", "nologprobs" (logprobs null), "ignored" (no echo: only the
generated token), "refused" (400, OpenAI's message), "content" (llama-server's chat-style logprobs),
"zero-none" (`logprobs: 0` read as no log-probabilities, as a server testing it for truth would; 1 and
up as "full"), "zero-refused" (400 naming `logprobs` for 0). Every other variant reads `logprobs: 0` as
vLLM does: the prompt tokens' own values, no alternatives.
`ToyToken` and `toy_echo` give tests the exact tokens and values, so they know every expected sum.

Opt-in, for benchmarks against other tools (speed/http_peers.py): `tokenizer` (a Hugging Face tokenizer,
`--tokenizer FOLDER` on the command line) makes echo requests use its tokens instead of the toy's, and
take token ids as the prompt (a list of ids, or a list of such lists), as lm-eval's local-completions
sends them: a client that counts the context's tokens with the same tokenizer reads the same values
(`tokenizer_echo`) as one that places tokens by their text. `openai_fields` (`--openai-fields`) adds
what OpenAI's replies always hold and the toy's leave out (`model`, `object`, usage.total_tokens), which
EvalScope's reader requires.

`batch` (a FakeBatches, tests/support/fake_batches.py) answers the Batch API's /files and /batches routes;
those requests are not in `bodies`, `headers` or `paths`.
"""

from __future__ import annotations

import asyncio
import bisect
import codecs
import contextlib
import functools
import hashlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_batches import FakeBatches

DEEP_BODY = b"[" * 100_000 + b"]" * 100_000
BIG_NUMBER = "9" * 5_000  # over Python's 4,300-digit limit on int(), so json.loads raises ValueError
# What OpenAI answers a model that cannot echo log-probabilities.
ECHO_REFUSAL = "Setting 'echo' and 'logprobs' at the same time is not supported for this model."
HTML_PAGE = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


@dataclass
class FakeOpenAI:
    latency_s: float = 0.0
    faults: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    default_answer: str = "答案：A"
    logprobs: dict[str, float] = field(default_factory=lambda: {"A": -0.2, "B": -1.9, " C": -2.5, "D": -4.0})
    hang_s: float = 5.0
    # the toy model behind echo requests (see the module's docstring)
    vocab: tuple[str, ...] = ()
    split: str = ""
    echo_style: str = "chars"
    echo_support: str = "full"
    list_status: int | None = None
    tokenizer: Any = None  # a Hugging Face tokenizer for echo requests (see the module's docstring)
    openai_fields: bool = False  # replies also hold model, object and usage.total_tokens
    reply_model: str | None = None  # the model every reply names (a gateway routing elsewhere)
    # the answer to a generation request from its prompt and body (a sampled model's answer depends on
    # its seed); None, or a None answer: `answers` decides
    answer_for: Callable[[str, dict[str, Any]], str | None] | None = None
    outage_s: float = 0.0  # every request in this many seconds after the start answers 500, Retry-After 0.3
    die_after: int | None = None  # stop serving (dropping open connections) after this many requests
    # what a gateway in front of the server does to every echo reply (GATEWAYS; None: nothing)
    gateway: str | None = None
    # a prompt cache, as providers keep one: a prompt's longest common prefix with a prompt served before,
    # in blocks of this many tokens (a token is a character here), is reported cached; None: no cache.
    # `cache_style` "openai" reports usage.prompt_tokens_details.cached_tokens, "deepseek"
    # prompt_cache_hit_tokens / prompt_cache_miss_tokens
    prefix_cache: int | None = None
    cache_style: str = "openai"
    cache_min: int = 0  # no prefix shorter than this is cached (OpenAI caches prompts of 1,024 tokens up)
    # count a chat request's tokens over all its messages (role and content), as a provider does; by
    # default the last message's content alone, which the tests that count tokens read
    whole_conversation: bool = False
    _cached_prompts: list[str] = field(default_factory=list)
    _last_echo: dict[str, Any] | None = None
    max_requests: int | None = 100_000
    max_seconds: float | None = 300.0
    # observations
    attempts: Counter[str] = field(default_factory=Counter)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # each request's target: path and query
    usages: list[dict[str, Any]] = field(default_factory=list)  # each generation reply's usage, as sent
    stream_bytes_sent: int = 0  # what "stream:N" faults wrote before the client hung up
    max_in_flight: int = 0
    _in_flight: int = 0
    # the Batch API (files and batches routes) with its own faults and observations (fake_batches.py)
    batch: FakeBatches = field(default_factory=FakeBatches)

    def __enter__(self) -> FakeOpenAI:
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(RuntimeError):  # a server that died on purpose (die_after) is closed already
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._handlers: set[asyncio.Task[None]] = set()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._started = time.monotonic()
        self._ready.set()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop.wait(), self.max_seconds)
        server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, extra, payload = await self._respond(request_line.decode(), headers, body)
                if isinstance(payload, Stream):
                    await self._stream(writer, payload)
                    break
                if isinstance(payload, Drop):
                    break
                if isinstance(payload, Cut):  # a Content-Length the body never reaches, then closed
                    announced = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    announced += f"Content-Length: {2 * len(payload.body)}\r\n\r\n"
                    writer.write(announced.encode() + payload.body)
                    await writer.drain()
                    break
                content_type = extra.pop("Content-Type", "application/json")
                head = [
                    f"HTTP/1.1 {status} X",
                    f"Content-Type: {content_type}",
                    f"Content-Length: {len(payload)}",
                ]
                head += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter, stream: Stream) -> None:
        """A body with no Content-Length, ended by closing the connection; stops when the client has gone."""
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
        writer.write(head.encode() + stream.start)
        chunk = b"x" * 65_536
        sent = 0
        while sent < stream.size and not writer.is_closing():
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
            self.stream_bytes_sent += len(chunk)

    async def _respond(
        self, request_line: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Extra, Payload]:
        method, target = request_line.split()[:2]
        if FakeBatches.serves(target):  # before json.loads: uploads are multipart, GETs have no body
            if self.max_requests is not None and len(self.batch.requests) >= self.max_requests:
                self._stop.set()
                return 200, {}, Drop()
            return self.batch.respond(method, target, raw, headers.get("content-type", ""), self)
        body = json.loads(raw)
        self.bodies.append(body)
        if self.die_after is not None and len(self.bodies) >= self.die_after:
            self._stop.set()
        if self.max_requests is not None and len(self.bodies) > self.max_requests:
            self._stop.set()
            return 200, {}, Drop()
        self.headers.append(headers)
        self.paths.append(target)
        path, _, query = target.partition("?")
        if not path.endswith("/completions"):
            return 404, {}, json.dumps({"error": {"message": f"no route {path}"}}).encode()
        prompts = self._prompt(body)
        refusal = self._refusal(body, prompts)
        if refusal is not None:
            return refusal[0], {}, json.dumps(refusal[1]).encode()
        prompt = prompts if isinstance(prompts, str) else "\n".join(prompts)
        if time.monotonic() - self._started < self.outage_s:
            return 500, {"Retry-After": "0.3"}, b'{"error": {"message": "down for a moment"}}'
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            fault = self.next_fault(prompt, body)
            if fault is not None:
                key = next((k for k in self.faults if k in prompt), "")
                return await self._fault(fault, self._completion(body, prompt), headers, query, key)
            return 200, {}, json.dumps(self._reply(body, prompt), ensure_ascii=False).encode()
        finally:
            self._in_flight -= 1

    def _prompt(self, body: dict[str, Any]) -> str | list[str]:
        """A request's prompt: the last message's content, or the completions prompt (a list: several)."""
        prompt = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
        if self.tokenizer is not None and "messages" not in body:
            return [_as_text(p, self.tokenizer) for p in _prompt_list(prompt)]
        return prompt  # type: ignore[no-any-return]

    def _refusal(self, body: dict[str, Any], prompts: str | list[str]) -> tuple[int, dict[str, Any]] | None:
        """The status and error a request gets before any answer (lists of prompts or echo refused)."""
        if isinstance(prompts, list) and len(prompts) > 1 and self.list_status is not None:
            return self.list_status, {"error": {"message": "prompt must be a string"}}
        if body.get("echo") and self.echo_support == "zero-refused" and body.get("logprobs") == 0:
            return 400, {"error": {"message": "logprobs must be at least 1 when echo is set"}}
        if body.get("echo") and self.echo_support == "refused":
            return 400, {"error": {"message": ECHO_REFUSAL, "type": "invalid_request_error"}}
        return None

    def _reply(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        reply = self._completion(body, prompt)
        if self.openai_fields:
            _add_openai_fields(reply, body)
        if self.reply_model is not None:
            reply["model"] = self.reply_model
        return reply

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and reply a real-time request with this body gets when no fault, outage or latency is
        scripted (how the batch fake answers each line)."""
        prompts = self._prompt(body)
        refusal = self._refusal(body, prompts)
        if refusal is not None:
            return refusal
        return 200, self._reply(body, prompts if isinstance(prompts, str) else "\n".join(prompts))

    def next_fault(self, prompt: str, body: dict[str, Any]) -> str | None:
        """The fault for this attempt: the next one in the script of the first key the prompt contains."""
        key = next((k for k in self.faults if k in prompt), None)
        if key is None:
            return None
        attempt = self.attempts[key]
        self.attempts[key] += 1
        script = self.faults[key]
        return script[attempt] if attempt < len(script) else None

    async def _fault(
        self, fault: str, reply: dict[str, Any], headers: dict[str, str], query: str, key: str
    ) -> tuple[int, Extra, Payload]:
        if fault in REPLY_SHAPES:
            # the first choice echoing the faulted prompt (several questions' prompts share a request)
            choices = reply["choices"]
            faulted = next((c for c in choices if key in str(c.get("text", ""))), choices[0])
            REPLY_SHAPES[fault](reply, faulted)
            return 200, {}, json.dumps(reply, ensure_ascii=False).encode()  # NaN is written as NaN
        kind, _, arg = fault.partition(":")
        if kind == "hang":
            await asyncio.sleep(self.hang_s)
            return 200, {}, b"{}"
        if kind == "drop":
            return 200, {}, Drop()
        if kind == "cut":
            return 200, {}, Cut(json.dumps(reply, ensure_ascii=False).encode())
        if kind == "gzip":  # a body that says it is compressed and is not
            return 200, {"Content-Encoding": "gzip"}, json.dumps(reply).encode()
        if kind == "badjson":
            return 200, {}, b"{not json"
        if kind == "echo":  # a careless server quoting the credentials it was sent
            sent = headers.get("authorization", "")
            message = f"Incorrect API key provided: {sent.removeprefix('Bearer ')}. Header was: {sent}"
            return 401, {}, json.dumps({"error": {"message": message}}).encode()
        if kind == "keyecho":  # a successful reply quoting the credentials it was sent
            holder, key = _answer_field(reply["choices"][0])
            sent = headers.get("authorization", "").partition(" ")[2]
            holder[key] += f"（请求头 {sent}；参数 {query}）"
            return 200, {}, json.dumps(reply, ensure_ascii=False).encode()
        if kind == "html":
            return int(arg or 200), {"Content-Type": "text/html"}, HTML_PAGE
        if kind == "error":
            error: dict[str, Any] = {"message": "scripted error object"}
            if arg:
                error["code"] = int(arg) if arg.isdigit() else arg
            return 200, {}, json.dumps({"error": error}).encode()
        if kind == "vllm":
            error = {
                "object": "error",
                "message": "scripted vllm error",
                "type": "ServerError",
                "param": None,
            }
            return 200, {}, json.dumps({**error, "code": int(arg)}).encode()
        if kind == "deep":
            return 200, {}, DEEP_BODY
        if kind == "bignum":
            reply["usage"]["prompt_tokens"] = "BIG"
            return 200, {}, json.dumps(reply, ensure_ascii=False).replace('"BIG"', BIG_NUMBER).encode()
        if kind == "huge":
            holder, key = _answer_field(reply["choices"][0])
            holder[key] += "很" * int(arg)
            return 200, {}, json.dumps(reply, ensure_ascii=False).encode()
        if kind == "stream":
            return 200, {}, Stream(b'{"choices": [{"message": {"content": "', int(arg))
        extra = {"Retry-After": arg} if arg else {}
        return int(kind), extra, b'{"error": {"message": "scripted fault"}}'

    def _completion(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        top = body.get("logprobs")
        if body.get("echo") and top is not None and top is not False and "messages" not in body:
            reply = self._echo_completion(body)
            if self.gateway is None:
                return reply
            mangled, self._last_echo = GATEWAYS[self.gateway](reply, self._last_echo), reply
            return mangled
        text = self.answer_for(prompt, body) if self.answer_for is not None else None
        if text is None:
            text = next((v for k, v in self.answers.items() if k in prompt), self.default_answer)
        counted = prompt
        if self.whole_conversation and "messages" in body:
            counted = "".join(f"{m['role']}\n{m['content']}\n" for m in body["messages"])
        usage: dict[str, Any] = {"prompt_tokens": len(counted), "completion_tokens": len(text)}
        if self.prefix_cache is not None:
            hit = self._cache_hit(counted)
            if self.cache_style == "deepseek":
                usage.update(prompt_cache_hit_tokens=hit, prompt_cache_miss_tokens=len(prompt) - hit)
            else:
                usage["prompt_tokens_details"] = {"cached_tokens": hit}
        wants_logprobs = body.get("logprobs") not in (None, False)
        top_logprobs = self.logprobs_for(prompt)
        if "messages" in body:
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
            if wants_logprobs:
                top = [{"token": t, "logprob": v} for t, v in top_logprobs.items()]
                choice["logprobs"] = {
                    "content": [{"token": top[0]["token"], "logprob": top[0]["logprob"], "top_logprobs": top}]
                }
        else:
            choice = {"index": 0, "text": text, "finish_reason": "stop"}
            if wants_logprobs:
                choice["logprobs"] = {"top_logprobs": [dict(top_logprobs)]}
        self.usages.append(usage)
        return {"id": "x", "created": int(time.time()), "choices": [choice], "usage": usage}

    def _cache_hit(self, prompt: str) -> int:
        """The prompt's tokens read from the cache: its longest common prefix with a prompt served before
        (one of its neighbours in sorted order has it), in whole blocks; the prompt is cached for the
        requests after it."""
        assert self.prefix_cache is not None
        served = self._cached_prompts  # sorted
        at = bisect.bisect_left(served, prompt)
        longest = max(
            (_shared_prefix(prompt, served[i]) for i in (at - 1, at) if 0 <= i < len(served)), default=0
        )
        served.insert(at, prompt)
        return longest // self.prefix_cache * self.prefix_cache if longest >= self.cache_min else 0

    def logprobs_for(self, prompt: str) -> dict[str, float]:
        """The top log-probabilities a log-likelihood request for this prompt gets."""
        return self.logprobs

    def _echo_completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """The toy model's reply to an echo request: one choice per prompt."""
        prompts = _prompt_list(body["prompt"])
        generate = int(body.get("max_tokens", 16)) >= 1
        choices: list[dict[str, Any]] = []
        prompt_tokens = 0
        for index, prompt in enumerate(prompts):
            if self.tokenizer is not None:
                text, logprobs = tokenizer_echo(prompt, self.tokenizer, generate)
                prompt_tokens += len(logprobs["tokens"]) - generate
                choice = {"text": text + TOY_GENERATED * generate, "logprobs": logprobs}
                choices.append({"index": index, "finish_reason": "length", **choice})
                continue
            tokens = toy_echo(prompt, self.vocab, self.split, self.echo_style, generate)
            prompt_tokens += len(tokens) - generate
            choice = self._echo_choice(prompt, tokens, body["logprobs"])
            choices.append({"index": index, "finish_reason": "length", **choice})
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(prompts) * generate}
        return {"id": "x", "object": "text_completion", "choices": choices, "usage": usage}

    def _echo_choice(self, prompt: str, tokens: list[ToyToken], top: int) -> dict[str, Any]:
        generated = TOY_GENERATED if tokens and tokens[-1].start >= len(prompt) else ""
        if self.echo_support == "nologprobs" or (self.echo_support == "zero-none" and top == 0):
            return {"text": prompt + generated, "logprobs": None}
        if self.echo_support == "ignored":
            tokens = tokens[-1:] if generated else []
            return {"text": generated, "logprobs": _legacy_logprobs(tokens)}
        if self.echo_support == "content":
            content = [
                {"token": t.text, "logprob": t.logprob or 0.0, "top_logprobs": []} for t in tokens[-1:]
            ]
            return {"text": generated, "logprobs": {"content": content}}
        return {"text": prompt + generated, "logprobs": _legacy_logprobs(tokens)}


# The toy model: what a test needs to know every log-probability an echo reply holds.
TOY_WINDOW = 12  # characters of context a toy log-probability depends on
TOY_GENERATED = "的"  # the one token an echo request with max_tokens >= 1 generates


def _shared_prefix(first: str, second: str) -> int:
    """How many characters two texts share from their start."""
    shared = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        shared += 1
    return shared


def toy_tokens(text: str, vocab: Sequence[str] = ()) -> list[str]:
    """The toy tokenizer: the longest entry of `vocab` that starts here, else one character."""
    ordered = sorted(vocab, key=len, reverse=True)
    tokens: list[str] = []
    position = 0
    while position < len(text):
        piece = next((entry for entry in ordered if text.startswith(entry, position)), text[position])
        tokens.append(piece)
        position += len(piece)
    return tokens


def toy_logprob(before: str, token: str) -> float:
    """The toy model's log-probability of `token` after `before`: from a hash of the last TOY_WINDOW
    characters and the token, so it is the same in every process."""
    digest = hashlib.blake2b(f"{before[-TOY_WINDOW:]}\x1f{token}".encode(), digest_size=8).digest()
    return -0.05 - 6.0 * int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class ToyToken:
    text: str  # as the server writes it
    offset: int  # as the server reports it
    logprob: float | None
    start: int  # the characters of the prompt it truly covers
    stop: int


def toy_echo(prompt: str, vocab: Sequence[str], split: str, style: str, generate: bool) -> list[ToyToken]:
    """The tokens an echo reply holds for `prompt` in a server style (see the module's docstring)."""
    pieces: list[tuple[str, float | None, int, int]] = []  # (text as written, value, start, stop)
    if style == "vllm":
        pieces.append(("<s>", None, 0, 0))
    position = 0
    for token in toy_tokens(prompt, vocab):
        before = prompt[:position]
        stop = position + len(token)
        if token in split:
            shown = "\ufffd" if style == "vllm" else ""
            pieces += [(shown, toy_logprob(before, token + "#1"), position, stop)]
            pieces += [(shown, toy_logprob(before, token + "#2"), position, stop)]
        else:
            shown = token[1:] if style == "vllm" and len(token) > 1 and token[0] == " " else token
            pieces.append((shown, toy_logprob(before, token), position, stop))
        position = stop
    if generate:
        pieces.append((TOY_GENERATED, toy_logprob(prompt, TOY_GENERATED), len(prompt), len(prompt)))
    first = 1 if style == "vllm" else 0
    if len(pieces) > first:
        text, _, start, stop = pieces[first]
        pieces[first] = (text, None, start, stop)  # nothing precedes the first text token
    tokens = []
    reported = 0
    for index, (text, value, start, stop) in enumerate(pieces):
        if style == "chars":
            reported = start
        elif style == "bytes":
            reported = len(prompt[:start].encode())
        elif style == "llamacpp":  # a split character's first piece stands before it, the second too
            reported = start
        elif index:  # vllm: the lengths of the token strings before it
            reported += len(pieces[index - 1][0])
        tokens.append(ToyToken(text, reported, value, start, stop))
    return tokens


def tokenizer_echo(prompt: str | list[int], tokenizer: Any, generate: bool) -> tuple[str, dict[str, Any]]:
    """The prompt's text and an echo reply's legacy `logprobs` object for it under a Hugging Face
    tokenizer, written as llama-cpp-python's server writes them: each token decoded alone with its
    partial bytes dropped (a piece of a character is ''), offsets the length of the decoded text before
    it. A token's value comes from its id and the two before it (`tokenizer_logprob`),
    so any client that sends the same ids, as text or as ids, reads the same values."""
    if isinstance(prompt, list):
        ids = prompt
    else:
        ids = tokenizer.backend_tokenizer.encode(prompt, add_special_tokens=False).ids
    vocabulary = _vocabulary_bytes(tokenizer)
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    completed = [decode(vocabulary[token_id]) for token_id in ids]  # the characters each token completes
    text = "".join(completed) + decode(b"", final=True)
    offsets = list(itertools.accumulate(map(len, completed), initial=0))[: len(completed)]
    # each token decoded alone, its partial bytes dropped, as llama_cpp/llama.py writes `tokens`
    shown = [vocabulary[token_id].decode("utf-8", errors="ignore") for token_id in ids]
    # nothing precedes the first token
    values = [None, *(tokenizer_logprob(tuple(ids[max(0, i - 2) : i]), ids[i]) for i in range(1, len(ids)))]
    del values[len(ids) :]
    if generate:
        shown.append(TOY_GENERATED)
        values.append(tokenizer_logprob(tuple(ids[-2:]), -1))
        offsets.append(len(text))
    top = [None if value is None else {piece: value} for piece, value in zip(shown, values, strict=True)]
    return text, {"tokens": shown, "token_logprobs": values, "top_logprobs": top, "text_offset": offsets}


def tokenizer_logprob(before: tuple[int, ...], token_id: int) -> float:
    """A log-probability from the token's id and the ids before it (hashes of ints are the same in every
    process, whatever PYTHONHASHSEED)."""
    return -0.05 - 6.0 * (hash((*before, token_id)) & 0xFFFFFFFF) / 2**32


@functools.cache
def _vocabulary_bytes(tokenizer: Any) -> list[bytes]:
    """Each token id's bytes: byte-level BPE names them one character a byte (GPT-2's map); a token whose
    name is outside the map is its decoded text."""
    byte_of = _byte_decoder()
    ids = list(range(len(tokenizer)))
    pieces = []
    for token_id, name in zip(ids, tokenizer.convert_ids_to_tokens(ids), strict=True):
        if name is not None and all(character in byte_of for character in name):
            pieces.append(bytes(byte_of[character] for character in name))
        else:
            pieces.append(tokenizer.decode([token_id]).encode())
    return pieces


@functools.cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level map, character -> byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    shown = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in shown:
            shown[byte] = chr(256 + extra)
            extra += 1
    return {character: byte for byte, character in shown.items()}


def _prompt_list(prompt: Any) -> list[Any]:
    """A completions `prompt` as a list of prompts: text, a list of ids, or a list of either."""
    if not isinstance(prompt, list) or (prompt and all(isinstance(item, int) for item in prompt)):
        return [prompt]
    return prompt


def _as_text(prompt: str | list[int], tokenizer: Any) -> str:
    return prompt if isinstance(prompt, str) else str(tokenizer.decode(prompt))


def _add_openai_fields(reply: dict[str, Any], body: dict[str, Any]) -> None:
    reply["model"] = str(body.get("model", ""))
    reply.setdefault("object", "chat.completion" if "messages" in body else "text_completion")
    usage = reply["usage"]
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]


def _legacy_logprobs(tokens: list[ToyToken]) -> dict[str, Any]:
    return {
        "tokens": [t.text for t in tokens],
        "token_logprobs": [t.logprob for t in tokens],
        "top_logprobs": [None if t.logprob is None else {t.text: t.logprob} for t in tokens],
        "text_offset": [t.offset for t in tokens],
    }


@dataclass(frozen=True)
class Stream:
    """A reply body written in chunks until `size` bytes or the client hangs up."""

    start: bytes
    size: int


class Drop:
    """No reply: the connection is closed."""


@dataclass(frozen=True)
class Cut:
    """A reply whose connection closes halfway through the body its Content-Length announces."""

    body: bytes


Extra = dict[str, str]
Payload = bytes | Stream | Drop | Cut


def _answer_field(choice: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The object and key holding a choice's answer text: message.content (chat) or text (completion)."""
    return (choice["message"], "content") if "message" in choice else (choice, "text")


def _set_answer(choice: dict[str, Any], value: object, finish_reason: str | None = None) -> None:
    holder, key = _answer_field(choice)
    holder[key] = value
    if finish_reason is not None:
        choice["finish_reason"] = finish_reason


def _drop_answer(choice: dict[str, Any]) -> None:
    holder, key = _answer_field(choice)
    del holder[key]


def _reasoning_only(choice: dict[str, Any], finish_reason: str = "length") -> None:
    choice["message"].update(content=None, reasoning_content="首先分析题干……" * 50)
    choice["finish_reason"] = finish_reason


def _decoy_reasoning(reply: dict[str, Any], choice: dict[str, Any]) -> None:
    """The answer, with reasoning naming another letter, counted as 17 reasoning tokens (as OpenAI and
    vLLM count them: usage.completion_tokens_details.reasoning_tokens)."""
    choice["message"].update(reasoning_content="选项C看似正确，答案是C？再想想，应选A。")
    reply["usage"]["completion_tokens_details"] = {"reasoning_tokens": 17}


def _set_logprob(choice: dict[str, Any], value: object) -> None:
    logprobs = choice["logprobs"]
    if "token_logprobs" in logprobs:  # an echo reply: the prompt's last token but its closing space
        values, tokens = logprobs["token_logprobs"], logprobs["tokens"]
        last = max(i for i in range(len(tokens) - 1) if tokens[i].strip())
        values[last] = None if value is _DROP else value
        return
    if "content" in logprobs:
        entry = logprobs["content"][0]["top_logprobs"][0]
        if value is _DROP:
            del entry["logprob"]
        else:
            entry["logprob"] = value
        return
    legacy = logprobs["top_logprobs"][0]
    token = next(iter(legacy))
    if value is _DROP:  # the legacy shape has no way to leave a value out: a null stands for it
        value = None
    legacy[token] = value


_DROP = object()

# Reply-shape faults: each alters a normal reply in place (the whole reply, and the choice echoing the
# faulted prompt, else the first).
REPLY_SHAPES: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "empty": lambda reply, choice: reply.update(choices=[]),
    "nochoices": lambda reply, choice: reply.pop("choices"),
    "choices:str": lambda reply, choice: reply.update(choices="A"),
    "choice:str": lambda reply, choice: reply.update(choices=["A"]),
    "message:null": lambda reply, choice: choice.update(message=None),
    "nocontent": lambda reply, choice: _drop_answer(choice),
    "content:int": lambda reply, choice: _set_answer(choice, 42),
    "content:empty": lambda reply, choice: _set_answer(choice, "", "length"),
    "reasoning": lambda reply, choice: _reasoning_only(choice),
    "reasoning:stop": lambda reply, choice: _reasoning_only(choice, "stop"),
    "reasoning:decoy": lambda reply, choice: _decoy_reasoning(reply, choice),
    "content:blank": lambda reply, choice: _set_answer(choice, "", "stop"),
    "refusal": lambda reply, choice: choice["message"].update(
        content=None, refusal="I can't help with that."
    ),
    "usage:str": lambda reply, choice: reply.update(usage="n/a"),
    "length": lambda reply, choice: choice.update(finish_reason="length"),
    "logprobs:none": lambda reply, choice: choice.update(logprobs=None),
    "logprob:nan": lambda reply, choice: _set_logprob(choice, float("nan")),
    "logprob:pos": lambda reply, choice: _set_logprob(choice, 0.5),
    "logprob:str": lambda reply, choice: _set_logprob(choice, "high"),
    "logprob:missing": lambda reply, choice: _set_logprob(choice, _DROP),
}


def _swap_adjacent(reply: dict[str, Any], last: object) -> dict[str, Any]:
    """Choices 0 and 1, 2 and 3, ... swapped and numbered in their new order."""
    choices = reply["choices"]
    for i in range(0, len(choices) - 1, 2):
        choices[i], choices[i + 1] = choices[i + 1], choices[i]
    for index, choice in enumerate(choices):
        choice["index"] = index
    return reply


def _shuffle_without_index(reply: dict[str, Any], last: object) -> dict[str, Any]:
    """Choices in another order (rotated by one, reversed), with no index."""
    choices = reply["choices"]
    reply["choices"] = (choices[1:] + choices[:1])[::-1]
    for choice in reply["choices"]:
        del choice["index"]
    return reply


def _permute_indexes(reply: dict[str, Any], last: object) -> dict[str, Any]:
    """The choices stay in order, their indexes do not follow it (each one's is the next one's)."""
    choices = reply["choices"]
    for position, choice in enumerate(choices):
        choice["index"] = (position + 1) % len(choices)
    return reply


def _previous_reply(reply: dict[str, Any], last: dict[str, Any] | None) -> dict[str, Any]:
    """The reply the previous request got (a proxy mixing up its connections); the first request's own."""
    return reply if last is None else json.loads(json.dumps(last))


def _without(field: str) -> Callable[[dict[str, Any], object], dict[str, Any]]:
    def drop(reply: dict[str, Any], last: object) -> dict[str, Any]:
        for choice in reply["choices"]:
            if field == "text":
                choice.pop("text", None)
            else:
                choice["logprobs"].pop(field, None)
        return reply

    return drop


def _offsets_shifted(reply: dict[str, Any], last: object) -> dict[str, Any]:
    for choice in reply["choices"]:
        choice["logprobs"]["text_offset"] = [offset + 2 for offset in choice["logprobs"]["text_offset"]]
    return reply


def _swapped_without_text(reply: dict[str, Any], last: object) -> dict[str, Any]:
    return _swap_adjacent(_without("text")(reply, last), last)


def _previous_without_text(reply: dict[str, Any], last: dict[str, Any] | None) -> dict[str, Any]:
    return _without("text")(_previous_reply(reply, last), last)


# A gateway's or proxy's faults on echo replies (FakeOpenAI(gateway=...)): each takes the reply and the
# previous echo reply, and gives what the client receives.
GATEWAYS: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]] = {
    "swapped": _swap_adjacent,
    "shuffled": _shuffle_without_index,
    "permuted": _permute_indexes,
    "previous": _previous_reply,
    "no-tokens": _without("tokens"),
    "shifted": _offsets_shifted,
    "swapped-no-text": _swapped_without_text,
    "previous-no-text": _previous_without_text,
}


def serve_forever(latency_s: float, tokenizer: str | None = None, openai_fields: bool = False) -> None:
    """Run the server in this process (for benchmarks: keeps it off the client's interpreter)."""
    loaded = None
    if tokenizer is not None:
        from transformers import AutoTokenizer

        loaded = AutoTokenizer.from_pretrained(tokenizer)
    with FakeOpenAI(
        latency_s=latency_s,
        max_requests=None,
        max_seconds=None,
        tokenizer=loaded,
        openai_fields=openai_fields,
    ) as server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="the fake OpenAI server, in this process")
    parser.add_argument("latency_s", nargs="?", type=float, default=0.0)
    parser.add_argument("--tokenizer", help="a Hugging Face tokenizer folder for echo requests")
    parser.add_argument(
        "--openai-fields", action="store_true", help="replies also hold model, object and usage.total_tokens"
    )
    arguments = parser.parse_args()
    serve_forever(arguments.latency_s, arguments.tokenizer, arguments.openai_fields)
