"""A reasoning model's think block, split from the answer it writes after it.

Local and served reasoning models write their reasoning into the generated text: `<think>…</think>` (or
`<thinking>`) before the answer, or only the closing tag where the chat template opened the block in the
prompt (Qwen3, DeepSeek-R1). The backends store the answer as the output's text and the reasoning apart
(ModelOutput.reasoning), so that what is kept as the answer is exactly what extraction reads
(strip_reasoning, which extraction applies, gives that text back unchanged), and a reply cut off while
thinking has an empty answer.

Only a block that opens the reply (or a closing tag before any other tag) is reasoning: a tag in the middle
of an answer is left in the text as the model wrote it (extraction drops such blocks all the same).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from kaoshi.models.base import ModelOutput
from kaoshi.scoring.extract import strip_reasoning

# The tags extraction drops (kaoshi.scoring.extract.strip_reasoning, which gives the answer text here).
_CLOSE = re.compile(r"</think(?:ing)?>", re.I)
_TAG = re.compile(r"</?think(?:ing)?>", re.I)
_LEADING_OPEN = re.compile(r"\s*<think(?:ing)?>", re.I)
_OPENED_AT_END = re.compile(r"<think(?:ing)?>\s*\Z", re.I)


def prompt_opens_reasoning(prompt: str) -> bool:
    """Whether a prompt (a rendered chat template) ends by opening a think block, so that the model's
    text is reasoning until it closes the block (DeepSeek-R1's and QwQ's templates end with '<think>\\n')."""
    return _OPENED_AT_END.search(prompt) is not None


def split_reasoning(text: str, *, opened: bool = False) -> tuple[str | None, str]:
    """(reasoning, answer text) of a generated text. A leading `<think>…</think>` block, or everything
    before a closing tag that comes before any opening one, is reasoning; an unclosed leading block is all
    reasoning with no answer (the reply was cut off while thinking). `opened`: the prompt itself opened the
    block (prompt_opens_reasoning), so the text is reasoning until it closes it. A text without such a block
    is returned unchanged, with no reasoning (None, text); a blank block gives reasoning None."""
    if opened:
        text = "<think>" + text
    first = _TAG.search(text)
    if first is None:
        return None, text
    leading = not text[: first.start()].strip()
    if not leading and not first.group().startswith("</"):
        return None, text  # a tag inside the answer
    closes = list(_CLOSE.finditer(text))
    reasoning = text[: closes[-1].start()] if closes else text
    while (opening := _LEADING_OPEN.match(reasoning)) is not None:
        reasoning = reasoning[opening.end() :]
    return reasoning.strip() or None, strip_reasoning(text)


def with_reasoning(
    output: ModelOutput, *, opened: bool = False, count_tokens: Callable[[str], int] | None = None
) -> ModelOutput:
    """The output with the reasoning of its text (split_reasoning) moved to `reasoning`, its tokens counted
    with `count_tokens` where the backend has a tokenizer; an output without a think block is returned as
    it is."""
    if output.text is None:
        return output
    reasoning, answer = split_reasoning(output.text, opened=opened)
    if reasoning is None and answer == output.text:
        return output
    tokens = count_tokens(reasoning) if reasoning is not None and count_tokens is not None else None
    return replace(output, text=answer, reasoning=reasoning, reasoning_tokens=tokens)
