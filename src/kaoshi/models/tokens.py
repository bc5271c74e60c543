"""The tokens of a scored continuation as a model reads them in context (shared by the local backends)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
