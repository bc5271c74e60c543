"""The tokens of a scored continuation as a model reads them in context (shared by the local backends)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

from kaoshi.models.base import LoglikRequest

# Text assumed to follow an answer end that closes with whitespace. GPT-2-style tokenizers write a final
# '\n\n' as one token, but '\n\n' before text (as after every exemplar's answer) as two '\n' tokens: the
# single token never follows an answer, and scoring it would cost each candidate several nats of noise.
FOLLOWING_TEXT = "题"


def continuation_tokens(
    encode: Callable[[str], list[int]],
    decode: Callable[[list[int]], str],
    context: str,
    context_ids: Sequence[int],
    continuation: str,
) -> list[int] | None:
    """The continuation's tokens after this context: the tokens of context + continuation past the
    context's own, so merges at the boundary are honoured. A continuation ending in whitespace is tokenized
    as it is before further text. None when those tokens do not extend the context's own."""
    n_context = len(context_ids)
    if continuation[-1:].isspace():
        followed = encode(context + continuation + FOLLOWING_TEXT)
        if followed[:n_context] == list(context_ids):
            for end in range(len(followed) - 1, n_context, -1):
                if decode(followed[n_context:end]) == continuation:
                    return followed[n_context:end]
    whole = encode(context + continuation)
    if whole[:n_context] == list(context_ids) and len(whole) > n_context:
        return whole[n_context:]
    return None


# A UTF-8 character spans at most 4 bytes, so at most 3 trailing tokens can hold an unfinished one.
_MAX_PARTIAL_TOKENS = 3


def decode_whole_characters(decode: Callable[[list[int]], str], tokens: list[int]) -> str:
    """The text of generated tokens without a character the token limit cut in half. Byte-level tokenizers
    split a Chinese character over several tokens; when generation stops between them, decoding gives
    U+FFFD. The trailing tokens of the unfinished character (at most 3) are dropped instead; a U+FFFD
    before the end is left as the model wrote it."""
    text = decode(tokens)
    if not text.endswith("\ufffd"):
        return text
    for cut in range(1, min(_MAX_PARTIAL_TOKENS, len(tokens)) + 1):
        shorter = decode(tokens[:-cut])
        if not shorter.endswith("\ufffd"):
            return shorter
    return text


class Encode(Protocol):
    def __call__(self, text: str, *, chat: bool) -> list[int]: ...


def continuation_ids(
    encode: Encode,
    decode: Callable[[list[int]], str],
    context: str,
    context_ids: Sequence[int],
    text: str,
    chat: bool,
) -> list[int]:
    """`continuation_tokens`, or the text's own tokens where the context's tokens do not survive the join."""
    tokens = continuation_tokens(partial(encode, chat=chat), decode, context, context_ids, text)
    return tokens if tokens is not None else encode(text, chat=True)


def tokenize_request(
    request: LoglikRequest, context: str, encode: Encode, decode: Callable[[list[int]], str], turn_end: str
) -> tuple[list[int], list[list[int]]]:
    """The rendered context's tokens and each candidate's scored tokens (candidate + answer end) after it,
    shared by the local backends so that every one scores the same tokens."""
    chat = request.messages is not None
    context_ids = encode(context, chat=chat)
    end = request.scored_end(turn_end if chat else "")
    scored = [
        continuation_ids(encode, decode, context, context_ids, candidate + end, chat)
        for candidate in request.continuations
    ]
    return context_ids, scored


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the common prefix of two token lists."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def reusable_prefix(held: Sequence[int], tokens: Sequence[int]) -> int:
    """How many tokens a model holds that a new sequence can keep: their common prefix, short of the
    sequence's last token, which must run again since its logits are read."""
    return min(common_prefix(held, tokens), max(len(tokens) - 1, 0))
