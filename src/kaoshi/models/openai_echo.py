"""Reading a candidate's log-likelihood from a completions reply that echoes the prompt's log-probabilities
(`echo: true`, `logprobs: 0` or 1): the legacy `logprobs` object's `tokens` and `token_logprobs`, and the
choice's `text`.

A reply is read only when its echo **is** the prompt that was sent: a gateway in front of the server may
re-order or re-number the choices of a request of several prompts, a proxy may hand a reply to the wrong
request, and the score of another prompt's tokens is a wrong answer stored as a right one. So:

- the choice's `text`, where the reply has one, must begin with the prompt sent (servers echo the prompt
  as they were sent it, then the generated token);
- the `tokens` must spell the prompt, in order, each whole-text token exactly where the one before it
  ended. A reply without `tokens` cannot be checked and is not read (its `text_offset` alone may count
  characters, bytes or a BOS: trusting it scored 56 of 56 candidates from the wrong tokens).
- What the tokens cannot show is allowed for and must then be vouched for by `text`: a character split
  over byte tokens (vLLM writes each piece as U+FFFD, llama-cpp-python as '', OpenAI as 'bytes:…'), whose
  pieces take the characters between the tokens placed around them; a piece hidden inside a token that
  shows whole text (llama-cpp-python drops a token's partial bytes); a special token ('<s>'); a leading
  space a SentencePiece token is shown without.
- After the prompt comes the one generated token (`max_tokens: 1`), never more.

The candidate's tokens are then those whose characters fall inside the scored text (candidate + answer
end); a token that spans the context's end (the server's tokenizer merged '：A') is counted to the
candidate and named (`EchoScore.spanning`). Every prompt ends in a fixed suffix after the scored text
(`ECHO_SUFFIX`), so the generated token never touches the candidate: a candidate whose last character is
split over byte tokens (正确 under a byte-level tokenizer) ends where the suffix's token is placed.

Only the prompt's very first token may lack a log-probability (nothing precedes it); a candidate that
needs it (an empty context) or any other missing value is an error.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from typing import Any

from kaoshi.models.base import LoglikRequest
from kaoshi.models.echo_placement import GENERATED_TOKENS, Bounds, PlacementError, is_special, placed_spans
from kaoshi.models.openai_replies import FinalFailure, kind
from kaoshi.models.tokens import FOLLOWING_TEXT

# Sent after the scored text, so that the generated token never meets the candidate's last character.
# A space is its own pre-token after letters, digits and punctuation alike in GPT-2, Llama-3, Qwen and
# cl100k-style tokenizers (a newline joins the punctuation before it there, '。\n'; a letter joins a
# letter), and SentencePiece writes it as its own '▁': the candidate's tokens stay those the local
# backends score, which see no suffix.
ECHO_SUFFIX = " "
# A character is at most 4 UTF-8 bytes, so at most 4 tokens; a few more allow for tokens spanning the
# candidate's edges. More selected tokens than that means the tokens were not placed on the prompt.
_TOKENS_PER_CHARACTER = 4
_EDGE_TOKENS = 4


class NoPromptLogprobs(FinalFailure):
    """The reply holds no log-probabilities of the prompt's own tokens, or none it can be checked by:
    the server does not echo them."""


class EchoMismatch(FinalFailure):
    """The reply's echo is not the prompt that was sent (another prompt's, a re-ordered choice's), or
    cannot be shown to be."""


@dataclass(frozen=True)
class EchoPrompt:
    """One candidate's prompt: context + candidate + answer end, then, when that ends in whitespace, the
    text the local backends tokenize it before (so '\\n\\n' is read as it is before more text, not as
    the final token a tokenizer writes at the very end), then `ECHO_SUFFIX`. `start`:`end` is the scored
    text."""

    candidate: str
    text: str
    start: int
    end: int


def echo_prompts(request: LoglikRequest) -> list[EchoPrompt]:
    """Each candidate's prompt; the context is the same string in all of them (a server's prefix cache
    then holds it once)."""
    answer_end = request.scored_end("")
    start = len(request.context)
    prompts = []
    for candidate in request.continuations:
        scored = candidate + answer_end
        following = (FOLLOWING_TEXT if scored[-1:].isspace() else "") + ECHO_SUFFIX
        prompts.append(
            EchoPrompt(candidate, request.context + scored + following, start, start + len(scored))
        )
    return prompts


@dataclass(frozen=True)
class EchoScore:
    logprob: float
    tokens: int  # how many tokens were summed
    spanning: tuple[str, ...] = ()  # tokens that cross the scored text's edges, counted to it


def read_echo(choice: object, prompt: EchoPrompt) -> EchoScore:
    """The candidate's log-probability from one choice of an echo reply, once the choice is shown to
    echo this prompt."""
    if not isinstance(choice, dict):
        raise FinalFailure(f"a choice of the reply is {kind(choice)}, not an object")
    logprobs = choice.get("logprobs")
    if logprobs is None:
        raise NoPromptLogprobs("the reply has no logprobs")
    if not isinstance(logprobs, dict):
        raise FinalFailure(f"the reply's logprobs is {kind(logprobs)}, not an object")
    values, tokens, offsets = (logprobs.get(key) for key in ("token_logprobs", "tokens", "text_offset"))
    if not isinstance(values, list):
        shape = " (only the chat form's `content`)" if "content" in logprobs else ""
        raise NoPromptLogprobs(f"the reply's logprobs has no token_logprobs{shape}")
    if not isinstance(tokens, list):
        raise NoPromptLogprobs(
            "the reply's logprobs name no tokens, so its log-probabilities cannot be checked against the "
            "prompt sent"
        )
    if len(values) != len(tokens) or (isinstance(offsets, list) and len(offsets) != len(tokens)):
        shown = f", {len(offsets)} text_offset" if isinstance(offsets, list) else ""
        raise FinalFailure(
            f"the reply's logprobs lists differ in length ({len(tokens)} tokens, {len(values)} "
            f"token_logprobs{shown})"
        )
    if offsets is not None:
        _check_offsets(offsets)
    if len(tokens) <= GENERATED_TOKENS or (offsets and _past(offsets[0], prompt.text)):
        raise NoPromptLogprobs("the reply's log-probabilities start after the prompt: it was not echoed")
    echoed = choice.get("text")
    if isinstance(echoed, str) and not echoed.startswith(prompt.text):
        raise EchoMismatch(f"the reply echoes another prompt: {_first_difference(echoed, prompt.text)}")
    first, spans, unverified = token_spans(tokens, prompt)
    if unverified and not isinstance(echoed, str):
        raise EchoMismatch(
            "the reply's tokens do not show all of the prompt (characters split over byte tokens) and it "
            "has no text to show it echoes this prompt"
        )
    last = first + len(spans)
    return _sum_scored(prompt, tokens[first:last], values[first:last], spans)


def _past(offset: object, text: str) -> bool:
    return isinstance(offset, int) and offset >= len(text)


def _first_difference(echoed: str, sent: str) -> str:
    """Where an echoed text leaves the prompt sent, for the error line."""
    at = next(
        (i for i, (a, b) in enumerate(zip(echoed, sent, strict=False)) if a != b), min(len(echoed), len(sent))
    )
    if at == len(echoed):
        return f"its text stops after {at} of the prompt's {len(sent)} characters"
    return (
        f"its text leaves the prompt at character {at} ({echoed[at : at + 12]!r} where "
        f"{sent[at : at + 12]!r} was sent)"
    )


def _check_offsets(offsets: object) -> None:
    if not isinstance(offsets, list):
        raise FinalFailure(f"the reply's text_offset is {kind(offsets)}, not a list")
    if set(map(type, offsets)) <= {int} and offsets == sorted(offsets) and offsets[:1] >= [0]:
        return  # the common case, checked at C speed (a 5-shot prompt has thousands of tokens)
    previous = 0
    for offset in offsets:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < previous:
            raise FinalFailure(
                f"the reply's text_offset holds {str(offset)[:40]!r} after {previous}, not a rising position"
            )
        previous = offset


def _sum_scored(
    prompt: EchoPrompt, tokens: list[Any], values: list[Any], spans: list[tuple[int, int]]
) -> EchoScore:
    """The scored text's tokens summed."""
    start, end = prompt.start, prompt.end
    chosen = [
        index
        for index, (first, stop) in enumerate(spans)
        if (first < end and stop > start) or (first == stop and start <= first < end)
    ]
    if not chosen or len(chosen) > _TOKENS_PER_CHARACTER * (end - start) + _EDGE_TOKENS:
        raise EchoMismatch(
            f"the reply's tokens do not line up with the prompt: {len(chosen)} of {len(tokens)} fall on "
            f"candidate {prompt.candidate!r}"
        )
    total = 0.0
    for index in chosen:
        value = values[index]
        if value is None and spans[index][0] == 0:
            raise FinalFailure(
                f"candidate {prompt.candidate!r} starts at the prompt's first token, which has no "
                "log-probability (an empty context)"
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value > 0
        ):
            raise FinalFailure(
                f"the reply's log-probability of token {str(tokens[index])[:40]!r} is "
                f"{repr(value)[:40]}, not a number <= 0"
            )
        total += float(value)
    spanning = tuple(str(tokens[i]) for i in chosen if spans[i][0] < start or spans[i][1] > end)
    return EchoScore(total, len(chosen), spanning)


def token_spans(tokens: list[Any], prompt: EchoPrompt) -> tuple[int, list[tuple[int, int]], bool]:
    """The spans [start, stop) in characters of the prompt of the tokens from some token on (the
    generated token's lies at the prompt's end), the index of that token, and whether some characters
    were not shown by the tokens (split over byte tokens, hidden in a token's partial bytes, or after the
    scored text where the tokens stop spelling it): those must be vouched for by the reply's text.
    Raises EchoMismatch where the tokens spell another text."""
    spelled = _spelled_spans(tokens, prompt)
    if spelled is not None:
        return spelled[0], spelled[1], False
    try:
        spans, unverified = placed_spans(
            tokens, Bounds(prompt.text, prompt.start, prompt.end, prompt.candidate)
        )
    except PlacementError as exc:
        raise EchoMismatch(str(exc)) from None
    return 0, spans, unverified


def _spelled_spans(tokens: list[Any], prompt: EchoPrompt) -> tuple[int, list[tuple[int, int]]] | None:
    """When the tokens, after any leading special tokens, are text that spells the prompt exactly and
    then the generated token (the common case, checked at C speed: a 5-shot prompt echoes thousands of
    tokens), the spans of the tokens around the scored text and the index of the first of them. None
    when they are not so (the tokens are then placed one by one)."""
    text = prompt.text
    lead = 0
    while lead < len(tokens) and is_special(tokens[lead], text, 0):
        lead += 1
    shown = tokens[lead:]
    # an empty token may be a piece of a character whose other pieces show nothing (llama-cpp-python):
    # spelling the prompt without it proves nothing, so such a reply is placed token by token
    if set(map(type, shown)) != {str} or "" in shown:
        return None
    joined = "".join(shown)
    if not joined.startswith(text) or "\ufffd" in joined[: len(text)]:
        return None
    ends = list(itertools.accumulate(map(len, shown)))
    last = bisect.bisect_left(ends, len(text))
    if last == len(ends) or ends[last] != len(text) or len(ends) - last - 1 > GENERATED_TOKENS:
        return None
    # the tokens ending at or after the scored text's start, up to the one past its end
    low = bisect.bisect_left(ends, prompt.start)
    high = min(len(ends), bisect.bisect_left(ends, prompt.end) + 2)
    cap = len(text)
    spans = [(min(ends[index] - len(shown[index]), cap), min(ends[index], cap)) for index in range(low, high)]
    return lead + low, spans


def match_choices(choices: list[Any], prompts: list[EchoPrompt]) -> list[Any]:
    """Each prompt's choice, found by the text it echoes, never by index or order alone: gateways re-order
    and re-number the choices of a request of several prompts. The choice whose `text` begins with a
    prompt is that prompt's (the longest such prompt claims it: an echo of '…A B ' also begins with
    '…A '); identical prompts share their choices in order. Where a choice has no text, each prompt
    takes the choice at its place (a distinct `index` from 0, else the list's order), whose tokens
    read_echo checks against the prompt. A prompt no choice echoes gets an EchoMismatch in its place."""
    ordered = _by_index(choices)
    texts = [choice.get("text") if isinstance(choice, dict) else None for choice in ordered]
    if not all(isinstance(text, str) for text in texts):
        placed: list[Any] = list(ordered[: len(prompts)])
        missing = EchoMismatch(f"the reply holds {len(choices)} choices for {len(prompts)} prompts")
        return placed + [missing] * (len(prompts) - len(placed))
    longest_first = sorted({prompt.text for prompt in prompts}, key=len, reverse=True)
    claimed: dict[str, list[int]] = {}
    for place, text in enumerate(texts):
        owner = _owner(str(text), ordered[place], longest_first)
        if owner is not None:
            claimed.setdefault(owner, []).append(place)
    taken = {place for places in claimed.values() for place in places}
    matched: list[Any] = []
    for place, prompt in enumerate(prompts):
        pool = claimed.get(prompt.text)
        if pool:
            matched.append(ordered[pool.pop(0)])
        elif place < len(ordered) and place not in taken:
            # echoes no prompt sent: read_echo says what it holds instead (not echoed, another text)
            matched.append(ordered[place])
        else:
            matched.append(
                EchoMismatch(
                    f"no choice of the reply echoes the prompt of candidate {prompt.candidate!r}: the one in "
                    "its place echoes another prompt of the request"
                )
            )
    return matched


def _owner(text: str, choice: Any, longest_first: list[str]) -> str | None:
    """The prompt a choice's text echoes: the one it is followed by the generated token after (its last
    token), else the longest it begins with ('题：A B 的' is the prompt '题：A B ''s, though it begins with
    '题：A ' too; '题：A B ' with the generated token 'B ' is '题：A ''s)."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    generated = tokens[-1] if isinstance(tokens, list) and tokens and isinstance(tokens[-1], str) else None
    if generated is not None:
        exact = [sent for sent in longest_first if len(sent) + len(generated) == len(text)]
        exact = [sent for sent in exact if text.startswith(sent) and text.endswith(generated)]
        if len(exact) == 1:
            return exact[0]
    return next((sent for sent in longest_first if text.startswith(sent)), None)


def _by_index(choices: list[Any]) -> list[Any]:
    """Choices by their `index` where every choice has a distinct one from 0, else as given."""
    by_index = {choice.get("index"): choice for choice in choices if isinstance(choice, dict)}
    if set(by_index) != set(range(len(choices))):
        return choices
    return [by_index[index] for index in range(len(choices))]
