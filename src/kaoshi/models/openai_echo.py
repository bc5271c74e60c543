"""Reading a candidate's log-likelihood from a completions reply that echoes the prompt's log-probabilities
(`echo: true`, `logprobs: 0` or 1): the legacy `logprobs` object's `tokens`, `token_logprobs` and
`text_offset`.

kaoshi has no tokenizer for a remote model, so the candidate's tokens are found by where they sit in the
prompt's text, never by counting tokens. The rule:

- A token belongs to the candidate when it starts at or after the context's end and before the end of
  the scored text (candidate + answer end); their log-probabilities are summed.
- A token that spans the context's end (the server's tokenizer merged the context's last characters with
  the candidate's first, e.g. '：A') is counted to the candidate: its log-probability covers the
  candidate's first characters, and leaving it out would score the candidate without them. The local
  backends tokenize context and candidate so that no token crosses the boundary; over HTTP the prompt is
  one text, so such a token is named in the output (`EchoScore.spanning`).
- Only the prompt's very first token may lack a log-probability (nothing precedes it); a candidate that
  needs it (an empty context) or any other missing value is an error.

Positions: `text_offset` is taken as character positions when the token strings agree with the prompt
at those offsets and with each other (llama-cpp-python's server, OpenAI). vLLM instead adds up the
lengths of the token strings it returns, so a leading '<s>', a character split over byte tokens (shown
as U+FFFD) or a SentencePiece token shown without its leading space shifts every later offset; a server
counting UTF-8 bytes would disagree from the first non-ASCII character. Then each token is placed by its
own text along the prompt, in order; tokens whose text is not in the prompt (special tokens, pieces of a
split character) take the stretch between the tokens placed around them.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

from kaoshi.models.base import LoglikRequest
from kaoshi.models.openai_replies import FinalFailure, kind
from kaoshi.models.tokens import FOLLOWING_TEXT

# A character is at most 4 UTF-8 bytes, so at most 4 tokens; a few more allow for tokens spanning the
# candidate's edges. More selected tokens than that means the tokens could not be placed on the prompt.
_TOKENS_PER_CHARACTER = 4
_EDGE_TOKENS = 4
# How servers write a token that is not whole text: OpenAI's partial UTF-8, vLLM's token ids.
_RAW_TOKEN_PREFIXES = ("bytes:", "token_id:")
# How many tokens before the one holding the context's end have their offsets checked against the
# prompt's text, when the reply's offsets are taken as character positions.
_CHECKED_BEFORE = 8


class NoPromptLogprobs(FinalFailure):
    """The reply holds no log-probabilities of the prompt's own tokens: the server does not echo them."""


@dataclass(frozen=True)
class EchoPrompt:
    """One candidate's prompt: context + candidate + answer end, then, when that ends in whitespace, the
    text the local backends tokenize it before (so '\\n\\n' is read as it is before more text, not as
    the final token a tokenizer writes at the very end). `start`:`end` is the scored text."""

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
        following = FOLLOWING_TEXT if scored[-1:].isspace() else ""
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
    """The candidate's log-probability from one choice of an echo reply."""
    if not isinstance(choice, dict):
        raise FinalFailure(f"a choice of the reply is {kind(choice)}, not an object")
    logprobs = choice.get("logprobs")
    if logprobs is None:
        raise NoPromptLogprobs("the reply has no logprobs")
    if not isinstance(logprobs, dict):
        raise FinalFailure(f"the reply's logprobs is {kind(logprobs)}, not an object")
    values, offsets = logprobs.get("token_logprobs"), logprobs.get("text_offset")
    if not isinstance(values, list) or not isinstance(offsets, list):
        shape = " (only the chat form's `content`)" if "content" in logprobs else ""
        raise NoPromptLogprobs(f"the reply's logprobs has no token_logprobs and text_offset{shape}")
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list):
        tokens = [None] * len(values)
    if not len(values) == len(offsets) == len(tokens):
        raise FinalFailure(
            f"the reply's logprobs lists differ in length ({len(tokens)} tokens, {len(values)} "
            f"token_logprobs, {len(offsets)} text_offset)"
        )
    _check_offsets(offsets)
    if not offsets or offsets[0] > 0:
        raise NoPromptLogprobs("the reply's log-probabilities start after the prompt: it was not echoed")
    echoed = choice.get("text")
    first, spans = token_spans(tokens, offsets, prompt, echoed if isinstance(echoed, str) else "")
    return _sum_scored(prompt, tokens[first:], values[first:], spans)


def _check_offsets(offsets: list[Any]) -> None:
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
    """The scored text's tokens summed; `tokens`, `values` and `spans` are the reply's from some token
    on (its first token is the prompt's first only when they start at the prompt's start)."""
    start, end = prompt.start, prompt.end
    if max((stop for _, stop in spans), default=0) < end:
        raise FinalFailure(f"the echoed prompt stops before candidate {prompt.candidate!r} ends")
    chosen = [
        index
        for index, (first, stop) in enumerate(spans)
        if (first < end and stop > start) or (first == stop and start <= first < end)
    ]
    if not chosen or len(chosen) > _TOKENS_PER_CHARACTER * (end - start) + _EDGE_TOKENS:
        raise FinalFailure(
            f"the reply's tokens do not line up with the prompt: {len(chosen)} of {len(tokens)} fall on "
            f"candidate {prompt.candidate!r}"
        )
    total = 0.0
    for index in chosen:
        value = values[index]
        if value is None and index == 0 and spans[0][0] == 0:
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


def token_spans(
    tokens: list[Any], offsets: list[int], prompt: EchoPrompt, echoed: str = ""
) -> tuple[int, list[tuple[int, int]]]:
    """The spans [start, stop) in characters of the prompt of the tokens from some token on, and the
    index of that token (the spans of the generated token fall past the prompt, when the reply's `text`
    holds the prompt and it). Where the offsets are character positions only the tokens from a few
    before the context's end are read: a 5-shot prompt echoes thousands of tokens before the candidate."""
    text = prompt.text
    first = max(0, bisect.bisect_right(offsets, prompt.start) - 1 - _CHECKED_BEFORE)
    window_tokens, window_offsets = tokens[first:], offsets[first:]
    if _offsets_are_characters(window_tokens, window_offsets, text) and _end_in_place(
        window_tokens, window_offsets, text
    ):
        last, offset = window_tokens[-1], window_offsets[-1]
        stops = [*window_offsets[1:], offset + len(last) if _is_text(last) else max(offset, len(text))]
        spans = [
            (min(start, len(text)), min(stop, len(text)))
            for start, stop in zip(window_offsets, stops, strict=True)
        ]
        return first, spans
    full = echoed if echoed.startswith(text) else text
    spans, unplaced_from = _placed_spans(tokens, full)
    if unplaced_from == 0:
        raise FinalFailure(
            "the reply's tokens and text offsets do not match the prompt's text: cannot tell where the "
            "candidate starts"
        )
    if unplaced_from < prompt.end:
        raise FinalFailure(
            f"the reply's last tokens cannot be placed on the prompt's text: cannot tell where candidate "
            f"{prompt.candidate!r} ends and the generated token begins"
        )
    return 0, spans


def _is_text(token: object) -> bool:
    """Whether a token string is whole text (not a special token's name, not part of a character)."""
    return (
        isinstance(token, str)
        and bool(token)
        and "\ufffd" not in token
        and not token.startswith(_RAW_TOKEN_PREFIXES)
    )


def _offsets_are_characters(tokens: list[Any], offsets: list[int], text: str) -> bool:
    """Whether every whole-text token inside the prompt stands at its offset in the prompt and the next
    token starts right after it. Offsets are taken as they are only when the reply names no tokens;
    tokens none of which can be checked (all special, partial or ids) leave them unproven."""
    checked = all(token is None for token in tokens)
    for index, (token, offset) in enumerate(zip(tokens, offsets, strict=True)):
        if offset >= len(text) or not _is_text(token):
            continue
        if not text.startswith(token, offset):
            return False
        if index + 1 < len(offsets) and offsets[index + 1] != offset + len(token):
            return False
        checked = True
    return checked


def _end_in_place(tokens: list[Any], offsets: list[int], text: str) -> bool:
    """Whether the offsets put the prompt's end where it is: the last token (the one generated) starts
    there, or ends there (the prompt's own last). Offsets shifted by what precedes the tokens read (a
    '<s>' counted in, bytes counted for characters) fail this even where the text read repeats itself."""
    if all(token is None for token in tokens):
        return True
    last, offset = tokens[-1], offsets[-1]
    return offset == len(text) or (_is_text(last) and offset + len(last) == len(text))


def _placed_spans(tokens: list[Any], text: str) -> tuple[list[tuple[int, int]], int]:
    """Spans found by placing each whole-text token after the one before it; a token that cannot be
    placed waits, and the waiting tokens together take the stretch up to the next placed token. Also
    where the tokens left waiting at the end start (the text's length when none are)."""
    spans: list[tuple[int, int]] = [(0, 0)] * len(tokens)
    position = 0
    waiting: list[int] = []
    for index, token in enumerate(tokens):
        found = _place(token, text, position, after_gap=bool(waiting))
        if found is None:
            waiting.append(index)
            continue
        first, stop = found
        for held in waiting:
            spans[held] = (position, first)
        waiting = []
        spans[index] = (first, stop)
        position = stop
    for held in waiting:
        spans[held] = (position, len(text))
    return spans, position if waiting else len(text)


def _place(token: object, text: str, position: int, after_gap: bool) -> tuple[int, int] | None:
    """The span of a token placed at `position`: its text right there, or after whitespace that a
    SentencePiece token is shown without, or (when tokens before it could not be placed) further on;
    None when it cannot be placed."""
    if not isinstance(token, str) or not _is_text(token) or position >= len(text):
        return None
    if text.startswith(token, position):
        return position, position + len(token)
    if after_gap:
        found = text.find(token, position)
        return (found, found + len(token)) if found > position else None
    blank = position
    while blank < len(text) and text[blank].isspace():
        blank += 1
    if blank > position and text.startswith(token, blank):
        return position, blank + len(token)
    return None
