"""Full-sequence log-likelihood over an OpenAI-compatible completions endpoint (lm-eval's
local-completions protocol): each candidate is sent as context + candidate + answer end with `echo: true`,
`logprobs: 0`, `temperature: 0`, and the log-probabilities the server gives the prompt's own tokens are
summed over the candidate (openai_echo.py reads them).

`logprobs: 0` asks for the prompt tokens' own log-probabilities and no alternatives, which is all the
scoring reads: vLLM 0.20 answers it twice as fast as lm-eval's `logprobs: 1`, whose top alternative it
computes, decodes and writes at every prompt position (speed/README.md, "vllm_shapes.py"). A server that
answers 0 without log-probabilities of the prompt, or refuses it with a 4xx naming echo or logprobs,
before any reply held them, is asked with `logprobs: 1` from then on; every question whose request went
with 0 and came back so is asked again (the replies set aside count to what the requests cost).

`max_tokens` is 1, as lm-eval sends: llama-cpp-python reads 0 as "until the context is full" and some
servers refuse 0; the one generated token lies past the prompt and is never read.

A question's candidates go in one request (`prompt` as a list, one choice per prompt) where the server
takes lists, with the next questions' while they fit --prompts-per-request (the backend packs them,
openai_api.py): the first request of several prompts finds out while the others wait, and a server that
refuses a list (llama-cpp-python's answers 500) is sent one prompt per request, one after another, for
the rest of the run (unless the prompts fail one at a time too: then the next request asks again). A
request refused for what it holds (a 4xx) is sent again a question at a time, so that one question the
server cannot take does not fail the others; one that failed until the retries ran out is the error of
every question it carried; a reply that cannot be read for one question is that question's. A server that
gives no log-probabilities of the prompt stops the run with one line saying so, unless an earlier reply
held them (then it is that sample's error).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kaoshi.models.base import CapabilityError, LoglikRequest, ModelOutput
from kaoshi.models.openai_echo import (
    EchoPrompt,
    EchoScore,
    NoPromptLogprobs,
    echo_prompts,
    match_choices,
    read_echo,
)
from kaoshi.models.openai_replies import (
    FinalFailure,
    RetriesExhausted,
    first_choice,
    kind,
    served_model,
    token_counts,
)

# An error body that names what echo scoring needs: OpenAI's "Setting 'echo' and 'logprobs' at the same
# time is not supported", llama.cpp's llama-server "Only no echo is supported", a chat-only model on
# /completions ("not supported in the v1/completions endpoint").
_REFUSES_ECHO = re.compile(r"(?i)\becho\b|logprob|completions endpoint")
# An echo reply's bytes per character of prompt, about, at the most: a token of one Chinese character
# is written four times (tokens, top_logprobs' key, the echoed text, as \u escapes at worst) beside its
# log-probabilities and offset. Packs of questions are sized so that their reply stays under the cap.
ECHO_BYTES_PER_CHAR = 80


class Post(Protocol):
    def __call__(
        self, client: Any, path: str, body: dict[str, Any], *, retries: int | None = None
    ) -> Awaitable[dict[str, Any]]: ...


Scored = list[EchoScore] | FinalFailure  # a question's candidates' scores, or why it has none


class _AskForOneTop(Exception):
    """A reply to `logprobs: 0` held no log-probabilities of the prompt, or the server refused 0."""


class _ListRefused(Exception):
    """The server did not answer a list of prompts with one choice each; `exhausted`: it failed for a
    while (retries ran out), not for what the list held."""

    def __init__(self, message: str, exhausted: bool = False) -> None:
        super().__init__(message)
        self.exhausted = exhausted


@dataclass
class _Usage:
    """What a question's requests cost, and the model their replies name where it is not the one asked."""

    asked: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    served: str | None = None

    def add(self, data: dict[str, Any]) -> None:
        self.served = served_model(data, self.asked) or self.served
        tokens_in, tokens_out = token_counts(data)
        if tokens_in is not None:
            self.tokens_in = (self.tokens_in or 0) + tokens_in
        if tokens_out is not None:
            self.tokens_out = (self.tokens_out or 0) + tokens_out


@dataclass
class EchoLoglik:
    """Scores plain-text log-likelihood requests for one backend. `prompt_lists`: True sends a question's
    candidates in one request, False one per request, None finds out from the server."""

    model_name: str
    seed: int
    post: Post
    server: str  # the endpoint, credentials masked, for messages
    redact: Callable[[str], str]
    prompts_per_request: int = 32  # 1: every prompt in its own request
    prompt_lists: bool | None = None
    top_alternatives: int = 0  # the `logprobs` sent: 0 until a server shows it needs 1
    _echoed: bool = field(default=False, init=False)  # whether a reply so far held prompt log-probs
    _probing: asyncio.Event | None = field(default=None, init=False)  # set when the probe has ended

    def start(self) -> None:
        """Begin a batch on a new event loop (an event belongs to one loop)."""
        self._probing = None

    async def score(self, client: Any, requests: Sequence[LoglikRequest]) -> list[ModelOutput]:
        """The questions' outputs, all their prompts sent together (one request where the server takes
        lists). The tokens the requests cost are shared out by the questions' prompt lengths; a failure
        of the request is every question's error, a reply unreadable for one question that question's."""
        started = time.perf_counter()
        prompts = [echo_prompts(request) for request in requests]
        usage = _Usage(self.model_name)
        results = await self._questions(client, prompts, usage)
        latency = time.perf_counter() - started
        # prompt tokens by the questions' prompt lengths; generated tokens by their prompts (one each)
        tokens_in = _shared_out(usage.tokens_in, [sum(len(p.text) for p in question) for question in prompts])
        tokens_out = _shared_out(usage.tokens_out, [len(question) for question in prompts])
        outputs = []
        for request, question, result, i, o in zip(
            requests, prompts, results, tokens_in, tokens_out, strict=True
        ):
            output = ModelOutput(
                request.id, tokens_in=i, tokens_out=o, latency_s=latency, served_model=usage.served
            )
            if isinstance(result, FinalFailure):
                outputs.append(replace(output, error=str(result)))
                continue
            logprobs = {p.candidate: score.logprob for p, score in zip(question, result, strict=True)}
            outputs.append(replace(output, text=_spanning_note(question, result), logprobs=logprobs))
        return outputs

    async def _questions(self, client: Any, questions: list[list[EchoPrompt]], usage: _Usage) -> list[Scored]:
        try:
            return await self._questions_as_asked(client, questions, usage)
        except _AskForOneTop:
            self.top_alternatives = 1  # for the whole run: this server needs `logprobs: 1`
            return await self._questions_as_asked(client, questions, usage)

    async def _questions_as_asked(
        self, client: Any, questions: list[list[EchoPrompt]], usage: _Usage
    ) -> list[Scored]:
        several = sum(map(len, questions)) > 1 and self.prompts_per_request > 1
        if several and self.prompt_lists is None:
            found = await self._find_out_lists(client, questions, usage)
            if found is not None:
                return found
        if several and self.prompt_lists is not False:  # lists taken, or not found out yet
            try:
                results = await self._in_one_request(client, questions, usage, retries=None)
                self.prompt_lists = True  # a list answered one choice a prompt: the verdict
                return results
            except _ListRefused as exc:
                if len(questions) == 1 or exc.exhausted:
                    return [FinalFailure(str(exc))] * len(questions)
            # Refused for what one question holds (a prompt past the context, say): each question
            # alone, so that the others are answered, now and on every resume.
            return await self._each_alone(client, questions, usage, self._alone)
        return await self._each_alone(client, questions, usage, self._one_by_one)

    async def _each_alone(
        self,
        client: Any,
        questions: list[list[EchoPrompt]],
        usage: _Usage,
        send: Callable[[Any, list[EchoPrompt], _Usage], Awaitable[Scored]],
    ) -> list[Scored]:
        """The questions one after another, until the server has failed one for as long as the retries
        last: the rest are not sent (each would wait as long again, one after another, on one slot) and
        carry that failure."""
        results: list[Scored] = []
        for question in questions:
            result = await send(client, question, usage)
            results.append(result)
            if isinstance(result, RetriesExhausted):
                unsent = FinalFailure(
                    f"not sent: the server failed an earlier question of this request: {result}"
                )
                return results + [unsent] * (len(questions) - len(results))
        return results

    async def _alone(self, client: Any, question: list[EchoPrompt], usage: _Usage) -> Scored:
        if len(question) == 1:
            return await self._one_by_one(client, question, usage)
        try:
            return (await self._in_one_request(client, [question], usage, retries=None))[0]
        except _ListRefused as exc:
            return RetriesExhausted(str(exc)) if exc.exhausted else FinalFailure(str(exc))

    async def _find_out_lists(
        self, client: Any, questions: list[list[EchoPrompt]], usage: _Usage
    ) -> list[Scored] | None:
        """Whether the server takes a list of prompts, found out by one request while the others wait
        for its verdict: that request's questions' results, or None for a request that waited (it then
        goes as the verdict says, or as a list when the probe decided nothing)."""
        if self._probing is not None:
            await self._probing.wait()
            return None
        self._probing = probing = asyncio.Event()
        try:
            return await self._probe_lists(client, questions, usage)
        finally:
            probing.set()
            self._probing = None

    async def _probe_lists(
        self, client: Any, questions: list[list[EchoPrompt]], usage: _Usage
    ) -> list[Scored] | None:
        """Send the prompts as a list once, without retrying. If that fails: the first question's prompts
        as a list of their own, once (a list is taken when that is answered: the request failed for what
        another question held, and each question goes alone); then its first prompt alone, once (lists
        are refused when that is answered where both lists failed: llama-cpp-python answers a list with
        500). A server that fails those too decides nothing, and holds up no one: the waiting requests,
        and this one, are sent as lists with their retries, in parallel (a dead server then fails every
        slot within its retries, not one question after another)."""
        try:
            results = await self._in_one_request(client, questions, usage, retries=0)
        except _ListRefused:
            pass
        else:
            self.prompt_lists = True
            return results
        first, rest = questions[0], questions[1:]
        if len(first) > 1 and len(questions) > 1:
            try:
                (alone,) = await self._in_one_request(client, [first], usage, retries=0)
            except _ListRefused:
                pass
            else:
                self.prompt_lists = True
                return [alone, *await self._each_alone(client, rest, usage, self._alone)]
        answered = await self._one_by_one(client, first, usage, retries=0)
        if isinstance(answered, FinalFailure):
            return None
        self.prompt_lists = False
        return [answered, *await self._each_alone(client, rest, usage, self._one_by_one)]

    async def _in_one_request(
        self, client: Any, questions: list[list[EchoPrompt]], usage: _Usage, retries: int | None
    ) -> list[Scored]:
        prompts = [prompt for question in questions for prompt in question]
        asked = self.top_alternatives
        try:
            data = await self.post(
                client, "/completions", self._body([p.text for p in prompts], asked), retries=retries
            )
        except FinalFailure as exc:
            exhausted = isinstance(exc, RetriesExhausted)
            raise _ListRefused(f"a list of {len(prompts)} prompts failed: {exc}", exhausted) from None
        usage.add(data)
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) != len(prompts):
            shown = (
                f"{len(choices)} choices"
                if isinstance(choices, list)
                else f"choices that are {kind(choices)}"
            )
            raise _ListRefused(f"the reply to {len(prompts)} prompts holds {shown}")
        matched = iter(match_choices(choices, prompts))
        results: list[Scored] = []
        for question in questions:
            own = [next(matched) for _ in question]
            try:
                results.append(
                    [self._read(choice, prompt, asked) for choice, prompt in zip(own, question, strict=True)]
                )
            except FinalFailure as exc:
                results.append(exc)
        return results

    async def _one_by_one(
        self, client: Any, question: list[EchoPrompt], usage: _Usage, retries: int | None = None
    ) -> Scored:
        """A question's prompts one a request, until one fails."""
        try:
            return [await self._in_own_request(client, prompt, usage, retries) for prompt in question]
        except FinalFailure as exc:
            return exc

    async def _in_own_request(
        self, client: Any, prompt: EchoPrompt, usage: _Usage, retries: int | None = None
    ) -> EchoScore:
        asked = self.top_alternatives
        try:
            data = await self.post(client, "/completions", self._body(prompt.text, asked), retries=retries)
        except FinalFailure as exc:
            message = str(exc)
            # a 4xx naming echo or logprobs, not 429s until the retries ran out (whose text may name a
            # server called "echo-…")
            refused = not isinstance(exc, RetriesExhausted) and message.startswith("HTTP 4")
            if refused and _REFUSES_ECHO.search(message):
                self._raise_for_missing(message, asked)
            raise
        usage.add(data)
        first_choice(data)  # the reply's shape: choices, an object first
        (choice,) = match_choices(data["choices"], [prompt])
        return self._read(choice, prompt, asked)

    def _read(self, choice: object, prompt: EchoPrompt, asked: int) -> EchoScore:
        """The prompt's score from its choice in a reply to a request sent with `logprobs: asked`."""
        if isinstance(choice, FinalFailure):  # no choice of the reply echoes this prompt
            raise choice
        try:
            score = read_echo(choice, prompt)
        except NoPromptLogprobs as exc:
            self._raise_for_missing(str(exc), asked)
            raise
        self._echoed = True
        return score

    def _raise_for_missing(self, detail: str, asked: int) -> None:
        """A reply to a request sent with `logprobs: asked` held no log-probabilities of the prompt, or the
        server refused the request for echo or logprobs. Sent with 0 before any reply held them, or after
        the run turned to 1 (a request still on its way meanwhile): ask again with 1. Sent with 1 before
        any reply held them: the server cannot do this, one line says so. Otherwise (an earlier reply
        held them): the caller's failure is that question's error."""
        if asked == 0 and (not self._echoed or self.top_alternatives):
            raise _AskForOneTop(detail) from None
        if not self._echoed:
            raise CapabilityError(
                f"{self.server} gave no log-probabilities of the prompt's tokens for echo=true "
                f"({self.redact(detail)[:300]}): --method loglik over HTTP scores plain prompts through a "
                "completions endpoint that echoes them (vLLM, llama-cpp-python's server); use --method "
                "generate"
            ) from None

    def _body(self, prompt: str | list[str], top_alternatives: int) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "prompt": prompt,
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": top_alternatives,
            "echo": True,
            "seed": self.seed,
        }


def _shared_out(total: int | None, shares: list[int]) -> list[int | None]:
    """`total` split in proportion to `shares`, in whole numbers that add up to it (largest remainders
    first; integer arithmetic, exact at any size); None for each where the server counted nothing."""
    if total is None:
        return [None] * len(shares)
    weights = shares if sum(shares) > 0 else [1] * len(shares)
    whole = sum(weights)
    parts, remainders = zip(*(divmod(total * weight, whole) for weight in weights), strict=True)
    shared = list(parts)
    for i in sorted(range(len(shared)), key=lambda i: -remainders[i])[: total - sum(shared)]:
        shared[i] += 1
    return list(shared)


def _spanning_note(prompts: list[EchoPrompt], scores: list[EchoScore]) -> str | None:
    """A line naming the server's tokens that cross a candidate's edges (counted to the candidate)."""
    crossing = [
        f"{prompt.candidate!r}: {', '.join(repr(token) for token in score.spanning)}"
        for prompt, score in zip(prompts, scores, strict=True)
        if score.spanning
    ]
    if not crossing:
        return None
    return (
        "note: the server's tokenizer merged text across a candidate's edges; those tokens are counted to "
        f"the candidate ({'; '.join(crossing)[:500]})"
    )
